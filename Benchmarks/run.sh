#!/usr/bin/env bash
# Runs every benchmark package under Benchmarks/ that has a run.sh. Each prints ratios against its peers.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
status=0
for script in "$here"/*/run.sh; do
  echo "=== $(basename "$(dirname "$script")")"
  bash "$script" || status=1
done
exit $status
