#!/usr/bin/env bash
# The serve benchmark's redis group (redis_bench.py): `alcedo serve` with and without the shared
# cache tier on 3 local redis-server nodes, on bench.py's nginx origin; thumbor with tc_redis'
# result storage when it installs. Prints a Markdown report and keeps it with the raw figures
# (JSON) under results/ (git-ignored).
# Environment: BENCH_DURATION (s per wrk run, default 20), REDIS_BENCH_CONNECTIONS (default 8),
# REDIS_BENCH_PARTS (default "coalesce hits kill thumbor"), ALCEDO_BIN (skip the build).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bash "$here/install.sh"
python="$here/.venv/bin/python"
# thumbor's Redis result storage, from PyPI; the report says so when it does not install or import.
"$python" -c 'import tc_redis' 2>/dev/null || "$here/.venv/bin/pip" install -q tc_redis \
  || echo "run-redis: tc_redis does not install; thumbor is not measured" >&2
inputs="$here/results/inputs"
"$python" "$here/../Pipeline/make-inputs.py" "$inputs" 50 2000x1500,2048x1365

binary="${ALCEDO_BIN:-}"
if [ -z "$binary" ]; then
  (cd "$root" && swift build -c release --product alcedo >/dev/null)
  binary="$(cd "$root" && swift build -c release --show-bin-path)/alcedo"
fi
help="$("$binary" serve --help 2>&1 || true)"
[[ "$help" == *"--redis-timeout"* ]] \
  || { echo "run-redis: $binary has no shared cache tier (serve --redis)" >&2; exit 1; }
"$python" "$here/redis_bench.py" --inputs "$inputs" --results "$here/results" --alcedo "$binary"
