#!/usr/bin/env bash
# Fuzzes the decode entry point (all formats: JPEG, PNG, GIF, WebP, AVIF, HEIC, TIFF, BMP, ICO, JPEG XL, SVG) with libFuzzer + AddressSanitizer for a bounded time.
#   scripts/fuzz.sh [SECONDS] [EXTENSIONS]      default 300 seconds, every format's seeds
#   scripts/fuzz.sh 900 tif,bmp,ico,cur,jxl,svg  seeds of those formats only
# Seeds: the test fixtures. Crashes, inputs over 20 s and single allocations over 768 MB are
# written to fuzz-artifacts/. Leak detection is off: the process-wide caches (colour
# transforms, fontconfig's) are never freed and LeakSanitizer reports them on the first input;
# growth shows in the RSS limit instead.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-300}"
extensions="${2:-jpg,jpeg,png,gif,webp,avif,heic,tif,bmp,ico,cur,jxl,svg}"
bash scripts/install-deps.sh
# LeakSanitizer at exit too (see above).
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}"
(cd Fuzz && swift build -c debug -Xswiftc -sanitize=fuzzer,address -Xswiftc -g)
bin="$(cd Fuzz && swift build -c debug -Xswiftc -sanitize=fuzzer,address --show-bin-path)/AlcedoFuzz"
corpus="$(mktemp -d)"
trap 'rm -rf "$corpus"' EXIT
# Each seed gets a leading option byte (0: default options).
find Tests/AlcedoTests/Fixtures Sources/alcedo/Demo/Samples -type f -size -200k | while read -r f; do
  case ",$extensions," in *",${f##*.},"*) ;; *) continue ;; esac
  { printf '\000'; cat "$f"; } > "$corpus/$(echo "$f" | tr / _)"
done
mkdir -p fuzz-artifacts
"$bin" "$corpus" -max_total_time="$seconds" -max_len=262144 -rss_limit_mb=4096 -malloc_limit_mb=768 -timeout=20 -detect_leaks=0 \
  -artifact_prefix=fuzz-artifacts/ -print_final_stats=1
