#!/usr/bin/env bash
# Serve benchmark: `alcedo serve` against thumbor 7.8 and a libvips proxy (a stand-in for
# imgproxy) on 127.0.0.1, with an nginx origin over 50 generated photos and wrk as the load,
# all in one run. Prints a Markdown table with ratios and keeps it under results/ (git-ignored).
# Environment: BENCH_DURATION (s per run, default 20), BENCH_CONNECTIONS (default "2 8"),
# BENCH_SERVERS, BENCH_WORKLOADS (see bench.py), ALCEDO_BIN (skip the build and use this binary).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bash "$here/install.sh"
python="$here/.venv/bin/python"
inputs="$here/results/inputs"
"$python" "$here/../Pipeline/make-inputs.py" "$inputs" 50 2000x1500,2048x1365

alcedo=()
if [[ " ${BENCH_SERVERS:-alcedo} " == *" alcedo "* ]]; then
  binary="${ALCEDO_BIN:-}"
  if [ -z "$binary" ]; then
    (cd "$root" && swift build -c release $(bash scripts/release-flags.sh) --product alcedo >/dev/null)
    binary="$(cd "$root" && swift build -c release --show-bin-path)/alcedo"
  fi
  if "$binary" serve --help >/dev/null 2>&1; then
    alcedo=(--alcedo "$binary")
  else
    echo "serve benchmark: $binary has no serve command; measuring the peers only" >&2
  fi
fi
"$python" "$here/bench.py" --inputs "$inputs" --results "$here/results" "${alcedo[@]}"
