#!/usr/bin/env bash
# Run by `make release` after the build: warns when the release `alcedo` holds CoreFoundation or
# ICU's data table again (about 43 MB; see "Install and deploy" in the README). That happens
# when a file of Alcedo, AlcedoServer, AlcedoRedis or the tool calls into full Foundation
# (a `String` extension such as `range(of:options:)`, `FileHandle`, `JSONSerialization`, ...).
# To find the call: relink with `-Xlinker --why-extract=why.txt` and follow the first
# libFoundation.a member back to an object of this package.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$(swift build -c release --show-bin-path)/alcedo"
[ -x "$bin" ] || exit 0
if nm "$bin" 2>/dev/null | grep -qE ' (icudt[0-9]+_dat|CFStringCreateWithCString)$'; then
  echo "warning: $bin links CoreFoundation or ICU: some code calls full Foundation (see scripts/check-release-binary.sh)" >&2
else
  stripped=$(mktemp); trap 'rm -f "$stripped"' EXIT
  strip -o "$stripped" "$bin"
  echo "alcedo: no CoreFoundation or ICU linked; $(( $(wc -c < "$stripped") / 1000000 )) MB stripped"
fi
