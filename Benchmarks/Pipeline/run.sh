#!/usr/bin/env bash
# Pipeline benchmark: Alcedo's ImageManager against Pillow + requests and pyvips, on 50
# photo-size JPEGs served by one loopback server, in one run. Prints medians and ratios.
# Needs python3 with Pillow, numpy and requests (pyvips optional). Usage: run.sh [REPETITIONS]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bash "$root/scripts/install-deps.sh"
python3 -c "import PIL, numpy" 2>/dev/null || python3 -m pip install -q pillow numpy
python3 -c "import requests" 2>/dev/null || python3 -m pip install -q requests
python3 -c "import pyvips" 2>/dev/null || python3 -m pip install -q pyvips-binary pyvips || true
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 "$here/make-inputs.py" "$work/inputs"
(cd "$here" && swift build -c release >/dev/null)
bench="$(cd "$here" && swift build -c release --show-bin-path)/PipelineBenchmarks"
"$bench" "$work/inputs" "$here/peers.py" "${1:-5}"
