#!/usr/bin/env bash
# Fuzzes the decode entry point (all formats: JPEG, PNG, GIF, WebP, AVIF, HEIC, TIFF, BMP, ICO) with libFuzzer + AddressSanitizer for a bounded time.
#   scripts/fuzz.sh [SECONDS]      default 300
# Seeds: the test fixtures. Crashes are written to fuzz-artifacts/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-300}"
bash scripts/install-deps.sh
(cd Fuzz && swift build -c debug -Xswiftc -sanitize=fuzzer,address -Xswiftc -g)
bin="$(cd Fuzz && swift build -c debug -Xswiftc -sanitize=fuzzer,address --show-bin-path)/AlcedoFuzz"
corpus="$(mktemp -d)"
trap 'rm -rf "$corpus"' EXIT
# Each seed gets a leading option byte (0: default options).
find Tests/AlcedoTests/Fixtures Sources/alcedo/Demo/Samples -type f \( -name '*.jpg' -o -name '*.jpeg' -o -name '*.png' -o -name '*.gif' -o -name '*.webp' -o -name '*.avif' -o -name '*.heic' \
  -o -name '*.tif' -o -name '*.bmp' -o -name '*.ico' -o -name '*.cur' -o -name '*.jxl' -o -name '*.svg' \) \
  -size -200k | while read -r f; do
  { printf '\000'; cat "$f"; } > "$corpus/$(basename "$f")"
done
mkdir -p fuzz-artifacts
"$bin" "$corpus" -max_total_time="$seconds" -max_len=262144 -rss_limit_mb=4096 -timeout=20 \
  -artifact_prefix=fuzz-artifacts/ -print_final_stats=1
