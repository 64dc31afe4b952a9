#!/usr/bin/env bash
# Codec benchmark: Alcedo against djpeg, dwebp, Pillow and pyvips on the same files in one run.
# Prints a table of median milliseconds and ratios, the cost of colour management (a P3-tagged
# thumbnail against the same without it) and the peak RSS of a 24 MP thumbnail against Pillow and
# vipsthumbnail (GNU time -v); then `alcedo convert --format pam` against a C reference
# (reference/jpeg-to-pam.c, built here with cc) for time and peak memory, and the peak memory of
# `alcedo convert` over generated hostile files (make-hostile.py) against the bounds; last, a 12 MP
# LZW TIFF, a 12 MP JPEG XL (full and 400x300) and an SVG at 1024 px as whole processes against
# Pillow, `vips copy` and `vipsthumbnail` (formats.py).
# Needs python3 with Pillow (and optionally pyvips, libvips-tools), cc and libjpeg-turbo's headers.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
ALCEDO_WITH_TOOLS=1 ALCEDO_WITH_BENCH_TOOLS=1 bash "$root/scripts/install-deps.sh"
python3 -c "import PIL" 2>/dev/null || python3 -m pip install -q pillow
python3 -c "import pyvips" 2>/dev/null || python3 -m pip install -q pyvips-binary pyvips || true
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 "$here/make-inputs.py" "$work"
python3 "$here/make-hostile.py" "$work/hostile" >/dev/null
cc -O2 -o "$work/jpeg-to-pam" "$here/reference/jpeg-to-pam.c" -ljpeg
(cd "$here" && swift build -c release >/dev/null)
bench="$(cd "$here" && swift build -c release --show-bin-path)/CodecBenchmarks"
(cd "$root" && swift build -c release $(bash scripts/release-flags.sh) --product alcedo >/dev/null)
alcedo="$(cd "$root" && swift build -c release --show-bin-path)/alcedo"
files=("$work"/photo-12mp-q85.jpg "$work"/photo-12mp-q90.jpg "$work"/photo-12mp-p3.jpg "$work"/large.png "$work"/large.webp "$work"/animated.gif)
"$bench" "${files[@]}" > "$work/alcedo.jsonl"
python3 "$here/png-encode.py" "$bench" "$work/png-encode"
python3 "$here/peers.py" "${files[@]}" > "$work/peers.jsonl"
python3 "$here/report.py" "$work/alcedo.jsonl" "$work/peers.jsonl" "$alcedo" "$work/photo-12mp-q85.jpg" "$work/photo-24mp-q85.jpg"
python3 "$here/process.py" "$alcedo" "$work/jpeg-to-pam" "$work/photo-12mp-q85.jpg" "$work/hostile"
python3 "$here/formats.py" "$alcedo" "$work"
