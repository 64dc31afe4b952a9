#!/usr/bin/env bash
# The main job, offline: `alcedo demo` serves the bundled sample images on 127.0.0.1, fetches
# them through Alcedo's pipeline (downloads, memory and disk hits, a forced revalidation
# answered 304) and writes a contact sheet. Results go to $ALCEDO_DEMO_OUT (default alcedo-demo/).
set -euo pipefail
cd "$(dirname "$0")/.."
# `make demo` names the release binary it built; run alone, the debug build's.
bin="${ALCEDO_BINARY:-$(swift build --show-bin-path)/alcedo}"
exec "$bin" demo --out "${ALCEDO_DEMO_OUT:-alcedo-demo}" "$@"
