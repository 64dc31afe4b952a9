#!/usr/bin/env bash
# Installs what the serve benchmark needs, only when missing: nginx (the origin, run with its own
# config in a temporary prefix, never as the system service), wrk (the load) and libvips (the
# stand-in for imgproxy) from Debian's packages through scripts/install-deps.sh; thumbor 7.8,
# pyvips, gunicorn and matplotlib (the soak chart) from PyPI in a virtual environment, Benchmarks/Serve/.venv (git-ignored).
# Safe to run again.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
ALCEDO_WITH_SERVE_BENCH=1 bash "$here/../../scripts/install-deps.sh"

venv="$here/.venv"
if ! "$venv/bin/python" -c 'import thumbor, pyvips, gunicorn, numpy, PIL, matplotlib' 2>/dev/null; then
  echo "install: creating $venv with thumbor 7.8, pyvips and gunicorn"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --upgrade pip
  "$venv/bin/pip" install -q 'thumbor==7.8.*' pyvips gunicorn numpy matplotlib
fi
"$venv/bin/python" -c 'import pyvips; pyvips.Image.black(1, 1)' \
  || { echo "install: pyvips cannot load libvips" >&2; exit 1; }
