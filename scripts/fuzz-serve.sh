#!/usr/bin/env bash
# Fuzzes `alcedo serve` from outside for a bounded time: mutated imgproxy URLs and mutated source
# responses from a loopback origin, a few connections at a time, while the server is watched for
# deaths (the signal and the requests in flight), hangs (an answer or /health slower than 30 s)
# and memory (RSS over FUZZ_RSS_MB, default 1536).
#   scripts/fuzz-serve.sh [SECONDS] [REQUESTS]     default 300 s, at most 100000 requests
#   scripts/fuzz-serve.sh --replay FILE...          send the requests of reproducer or corpus files
# Environment: ALCEDO_BINARY=path (default: `make release` and .build/release/alcedo),
#   FUZZ_SEED (default 1: the same seed sends the same requests), FUZZ_CONCURRENCY (4),
#   FUZZ_RSS_MB, FUZZ_ORIGIN_SHARE (0.3: requests whose source is a mutated origin response).
# Each finding is written to fuzz-artifacts/ as a reproducer that --replay reads; the exit status
# is 1 when there is any. The run happens in a network namespace of its own (unshare -n) with
# only loopback, so no source URL can reach another machine; without unshare it refuses to run
# unless FUZZ_ALLOW_HOST_NETWORK=1 (then only --allowed-sources keeps sources on loopback).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"

if [[ "${FUZZ_IN_NAMESPACE:-}" != 1 && "${FUZZ_ALLOW_HOST_NETWORK:-}" != 1 ]]; then
  venv="$root/Fuzz/.venv-serve"
  if ! "$venv/bin/python" -c 'import PIL' 2>/dev/null; then
    echo "fuzz-serve: creating $venv (Pillow, for the seed images)"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check 'pillow>=9'
  fi
  if [[ -z "${ALCEDO_BINARY:-}" ]]; then
    make release
    export ALCEDO_BINARY="$root/.build/release/alcedo"
  fi
  if ! unshare -n true 2>/dev/null; then
    echo "fuzz-serve: unshare -n is not available (root or user namespaces needed); set FUZZ_ALLOW_HOST_NETWORK=1 to run on the host network" >&2
    exit 2
  fi
  exec unshare -n env FUZZ_IN_NAMESPACE=1 ALCEDO_BINARY="$ALCEDO_BINARY" bash "$0" "$@"
fi

if [[ "${FUZZ_IN_NAMESPACE:-}" == 1 ]]; then
  ip link set lo up
fi
venv="$root/Fuzz/.venv-serve"
[[ -x "$venv/bin/python" ]] || { python3 -m venv "$venv"; "$venv/bin/pip" install -q --disable-pip-version-check 'pillow>=9'; }
if [[ -z "${ALCEDO_BINARY:-}" ]]; then make release; ALCEDO_BINARY="$root/.build/release/alcedo"; fi
"$ALCEDO_BINARY" --version >/dev/null

seeds="$(mktemp -d)"
trap 'rm -rf "$seeds"' EXIT
"$venv/bin/python" Fuzz/serve/make_seeds.py "$seeds"

common=(--binary "$ALCEDO_BINARY" ${FUZZ_EXCLUDE_KNOWN:+--exclude-known} --seed "${FUZZ_SEED:-1}" --concurrency "${FUZZ_CONCURRENCY:-4}"
        --rss-mb "${FUZZ_RSS_MB:-1536}" --origin-share "${FUZZ_ORIGIN_SHARE:-0.3}" --extra-seeds "$seeds")
if [[ "${1:-}" == --replay ]]; then
  shift
  exec "$venv/bin/python" Fuzz/serve/fuzz_serve.py "${common[@]}" --replay "$@"
fi
exec "$venv/bin/python" Fuzz/serve/fuzz_serve.py "${common[@]}" --seconds "${1:-300}" --requests "${2:-100000}"
