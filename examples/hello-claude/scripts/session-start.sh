#!/bin/sh
echo "hello-claude is loaded"
