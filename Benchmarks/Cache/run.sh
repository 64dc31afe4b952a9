#!/usr/bin/env bash
# Cache benchmark: Alcedo's MemoryStorage and DiskStorage against NSCache and plain FileManager
# writes and reads of the same bytes, in one run. Prints times and ratios (Alcedo / peer).
# Writes about 1.5 GB of short-lived files under $TMPDIR (or /tmp) and removes them at the end.
# Arguments are passed on: --quick (fewer entries), --only=memory|disk|cleanup.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
if ! (cd "$here" && swift build -c release >"$work/build.log" 2>&1); then
  cat "$work/build.log"
  exit 1
fi
bench="$(cd "$here" && swift build -c release --show-bin-path)/CacheBenchmarks"
"$bench" "$work/run" "$@"
