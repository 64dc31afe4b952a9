#!/usr/bin/env python3
"""Makes the pipeline benchmark inputs: 50 photo-like 2000x1500 JPEGs at quality 85, each
different (its own landscape, grain and texture), compressing like real photos.
Usage: make-inputs.py DIR [COUNT]"""
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
out.mkdir(parents=True, exist_ok=True)
bases = [np.asarray(samples.landscape(2000, 1500, hue), dtype=np.float64) for hue in range(5)]
for index in range(count):
    rng = np.random.default_rng(index)
    pixels = bases[index % len(bases)]
    grain = rng.normal(0, 9, pixels.shape[:2])[..., None]
    texture = rng.normal(0, 6, pixels.shape)
    shift = rng.uniform(-20, 20, 3)
    photo = Image.fromarray(np.clip(pixels + grain + texture + shift, 0, 255).astype(np.uint8))
    photo.save(out / f"photo-{index:02d}.jpg", quality=85)
