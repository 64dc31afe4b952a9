#!/usr/bin/env bash
# AVIF encoding cost for `alcedo serve`: AVIF at encoder speeds 6-10 against WebP (and JPEG) on
# the same pixels in one run. Needs python3 with Pillow and NumPy for the generated inputs.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bash "$root/scripts/install-deps.sh"
python3 -c "import PIL, numpy" 2>/dev/null || python3 -m pip install -q pillow numpy
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 - "$root/scripts/make-samples.py" "$work" <<'PY'
import importlib.util, pathlib, sys
import numpy as np
from PIL import Image
spec = importlib.util.spec_from_file_location("samples", sys.argv[1])
samples = importlib.util.module_from_spec(spec)
spec.loader.exec_module(samples)
out = pathlib.Path(sys.argv[2])
# A photo-like 2000x1500 JPEG (grain and texture so it compresses like a photo), and a
# 40-frame 320x320 animated GIF.
rng = np.random.default_rng(1)
pixels = np.asarray(samples.landscape(2000, 1500, 0), dtype=np.float64)
pixels = pixels + rng.normal(0, 9, pixels.shape[:2])[..., None] + rng.normal(0, 6, pixels.shape)
Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8)).save(out / "photo.jpg", quality=85)
frames = samples.spinner_frames(size=320, count=40)
frames[0].save(out / "animated.gif", save_all=True, append_images=frames[1:], duration=40, loop=0,
               disposal=2, transparency=0)
PY
(cd "$here" && swift build -c release >/dev/null)
"$(cd "$here" && swift build -c release --show-bin-path)/AVIFBenchmarks" "$work/photo.jpg" "$work/animated.gif"
