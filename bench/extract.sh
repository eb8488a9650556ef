#!/bin/sh
# Extraction benchmark (SPEC §14): tarball.ExtractTarGz against tar -xzf on
# the same generated ~200 MiB archive (cached under bench/_out/, which the go tool ignores), best of 3
# each, plus our peak RSS. Extra flags go to the Go program (-mib, -runs).
set -eu
cd "$(dirname "$0")/.."
mkdir -p bench/_out
go build -o bench/_out/extract-bench ./bench/extract
exec bench/_out/extract-bench -out bench/_out "$@"
