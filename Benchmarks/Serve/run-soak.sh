#!/usr/bin/env bash
# Soak benchmark: the mixed load of soak.py against `alcedo serve`, thumbor and the libvips
# stand-in, RSS sampled every 5 s, then the RSS-over-time chart (results/soak.png).
# Environment: SOAK_DURATION (s per run, default 600), SOAK_CONNECTIONS (default "2 8"),
# SOAK_SERVERS (default "alcedo thumbor vips"), ALCEDO_BIN (skip the build and use this binary).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bash "$here/install.sh"
python="$here/.venv/bin/python"
inputs="$here/results/inputs"
"$python" "$here/../Pipeline/make-inputs.py" "$inputs" 50 2000x1500,2048x1365
binary="${ALCEDO_BIN:-}"
if [ -z "$binary" ]; then
  (cd "$root" && swift build -c release $(bash scripts/release-flags.sh) --product alcedo >/dev/null)
  binary="$(cd "$root" && swift build -c release --show-bin-path)/alcedo"
fi
"$python" "$here/soak.py" --inputs "$inputs" --results "$here/results" --alcedo "$binary"
"$python" "$here/chart.py" "$here/results/soak.json" "$here/results/soak.png"
echo "soak: results/soak.json and results/soak.png"
