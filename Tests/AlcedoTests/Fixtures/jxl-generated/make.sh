#!/usr/bin/env bash
# Makes the JPEG XL fixtures and their references (see ../PROVENANCE.md). Run in this folder.
# Tools: python3, rsvg-convert (librsvg2-bin 2.54), cjxl/djxl (libjxl-tools 0.7).
set -euo pipefail
python3 make_sources.py
rsvg-convert photo.svg -b white -o photo.png
rsvg-convert alpha.svg -o alpha.png
cjxl photo.png lossless.jxl -d 0 -e 3 --quiet
cjxl photo.png lossy.jxl -d 1 -e 7 --quiet
cjxl alpha.png alpha-lossless.jxl -d 0 -e 3 --quiet
cjxl alpha.png alpha-lossy.jxl -d 1 --quiet
cjxl rgb16.ppm rgb16.jxl -d 0 --quiet
cjxl gray16.pgm gray16.jxl -d 0 --quiet
cjxl anim.gif anim.jxl -d 0 --quiet
cjxl ../color-generated/p3.png p3-lossless.jxl -d 0 --quiet
cjxl ../color-generated/p3.png p3-lossy.jxl -d 1 --quiet
cjxl ../jpeg-generated/orientation-1.jpg recompressed.jxl --quiet


for f in lossy alpha-lossy rgb16 gray16 recompressed; do
  djxl "$f.jxl" "$f.jxl.ref.png" --bits_per_sample=8 --quiet 2>/dev/null || djxl "$f.jxl" "$f.jxl.ref.png" --bits_per_sample=8
done
# djxl rebuilds the original JPEG bit for bit: cmp against it.
djxl recompressed.jxl /tmp/recompressed.jpg --quiet 2>/dev/null || djxl recompressed.jxl /tmp/recompressed.jpg
cmp /tmp/recompressed.jpg ../jpeg-generated/orientation-1.jpg
rm -f rgb16.ppm gray16.pgm
