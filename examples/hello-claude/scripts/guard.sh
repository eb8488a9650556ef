#!/bin/sh
# Allow every Bash call; a real guard would inspect .tool_input.command.
exit 0
