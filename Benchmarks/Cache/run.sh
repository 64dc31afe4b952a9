#!/usr/bin/env bash
# Cache benchmark: Alcedo's MemoryStorage and DiskStorage against NSCache and plain FileManager
# writes and reads of the same bytes, in one run. Prints times and ratios (Alcedo / peer).
# Writes about 1 GB of short-lived files under $TMPDIR (or /tmp); removes them at the end.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
(cd "$here" && swift build -c release >/dev/null)
bench="$(cd "$here" && swift build -c release --show-bin-path)/CacheBenchmarks"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$bench" "$work" "$@"
