#!/usr/bin/env bash
# The serve benchmark per output format: Alcedo, thumbor 7.8 and the libvips stand-in in one run,
# JPEG, PNG, WebP, AVIF and GIF results from the 2000x1500 JPEG sources and three animation cases
# (GIF to GIF, GIF to WebP, WebP to WebP), three tries of 20 s each per server and case, medians,
# CPU ms per request, bytes and SSIM per result, frames and delays of the animations. Writes
# results/formats-<time>.md and .json and a chart, results/formats-<time>.png (git-ignored).
# Environment: see formats_bench.py (BENCH_DURATION, BENCH_CONNECTIONS, FORMAT_TRIES, FORMAT_CASES,
# FORMAT_SERVERS, ALCEDO_ARGS); ALCEDO_BIN uses that binary instead of the one `make release` builds.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bash "$here/install.sh"
python="$here/.venv/bin/python"
inputs="$here/results/inputs"
"$python" "$here/../Pipeline/make-inputs.py" "$inputs" 50 2000x1500,2048x1365
"$python" "$here/make-animations.py" "$inputs/anim" 50

binary="${ALCEDO_BIN:-}"
if [ -z "$binary" ]; then
  (cd "$root" && make release >/dev/null)
  binary="$(cd "$root" && swift build -c release --show-bin-path)/alcedo"
fi
before="$(ls "$here/results"/formats-*.json 2>/dev/null | sort | tail -n 1 || true)"
"$python" "$here/formats_bench.py" --inputs "$inputs" --animations "$inputs/anim" --results "$here/results" --alcedo "$binary"
latest="$(ls "$here/results"/formats-*.json | sort | tail -n 1)"
if [ "$latest" != "$before" ]; then
  "$python" "$here/chart_formats.py" "$latest" "${latest%.json}.png"
  echo "chart: ${latest%.json}.png" >&2
fi
