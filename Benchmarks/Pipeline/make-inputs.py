#!/usr/bin/env python3
"""Makes photo-like JPEG benchmark inputs at quality 85: COUNT files (default 50), each different
(its own landscape, grain and texture), compressing like real photos. SIZES, a comma-separated
list such as 2000x1500,2048x1365 (default 2000x1500), are taken in turn. Nothing is made when
all the files are there already. Used by the pipeline and serve benchmarks. Usage: make-inputs.py DIR [COUNT [SIZES]]"""
import importlib.util
import pathlib
import sys

import numpy as np
from PIL import Image

here = pathlib.Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location("samples", here.parent.parent / "scripts" / "make-samples.py")
samples = importlib.util.module_from_spec(spec)
spec.loader.exec_module(samples)

out = pathlib.Path(sys.argv[1])
count = int(sys.argv[2]) if len(sys.argv) > 2 else 50
sizes = [tuple(int(side) for side in size.split("x")) for size in (sys.argv[3] if len(sys.argv) > 3 else "2000x1500").split(",")]
out.mkdir(parents=True, exist_ok=True)
paths = [out / f"photo-{index:02d}.jpg" for index in range(count)]
if all(path.exists() for path in paths):
    sys.exit(0)
bases = {size: [np.asarray(samples.landscape(*size, hue), dtype=np.float64) for hue in range(5)] for size in sizes}
for index, path in enumerate(paths):
    size = sizes[index % len(sizes)]
    rng = np.random.default_rng(index)
    pixels = bases[size][(index // len(sizes)) % 5]
    grain = rng.normal(0, 9, pixels.shape[:2])[..., None]
    texture = rng.normal(0, 6, pixels.shape)
    shift = rng.uniform(-20, 20, 3)
    photo = Image.fromarray(np.clip(pixels + grain + texture + shift, 0, 255).astype(np.uint8))
    photo.save(path, quality=85)
