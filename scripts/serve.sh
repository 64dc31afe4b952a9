#!/usr/bin/env bash
# `alcedo serve` on the bundled sample images: a loopback server serves the samples, the proxy
# listens on 127.0.0.1:${ALCEDO_PORT:-8080} and prints an example URL to fetch. Ctrl-C stops it.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$(swift build -c release --show-bin-path)/alcedo"
exec "$bin" serve --samples --cache-dir "${ALCEDO_CACHE_DIR:-alcedo-demo/serve-cache}" "$@"
