"""Writes N JPEG files of about 200 KB (noise, so they do not compress) into a folder, and a
list of their names. Usage: make-inputs.py FOLDER [N]"""
import io
import os
import sys

import numpy as np
from PIL import Image

folder = sys.argv[1]
count = int(sys.argv[2]) if len(sys.argv) > 2 else 200
os.makedirs(folder, exist_ok=True)
rng = np.random.default_rng(2024)
names = []
for i in range(count):
    side = 490 + (i % 21)  # 490..510 px: 190-210 KB each
    pixels = (rng.random((side, side, 3)) * 255).astype("uint8")
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, "JPEG", quality=85)
    name = f"img{i:03d}.jpg"
    with open(os.path.join(folder, name), "wb") as f:
        f.write(buffer.getvalue())
    names.append(name)
with open(os.path.join(folder, "..", "names.txt"), "w") as f:
    f.write("\n".join(names) + "\n")
