#!/usr/bin/env python3
"""Makes the AVIF and HEIC fixtures and their reference decodes.

Run from this folder: python3 make.py (numpy, Pillow; avifenc/avifdec from libavif-bin 0.11,
heif-enc/heif-convert from libheif-examples 1.15). References are avifdec's and
heif-convert's PNG output, stored as `<file>.ref.png`. avifdec writes the stored picture
(irot/imir not applied); heif-convert applies the transforms. The HEIC grid and transform
files, which heif-enc 1.15 cannot write, come from make_heic_boxes.py.
"""
import os, subprocess, tempfile
import numpy as np
from PIL import Image

TMP = tempfile.mkdtemp(prefix="alcedo-fixtures-")

def run(*args):
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

h, w = 24, 40
y, x = np.mgrid[0:h, 0:w]
rgb = np.stack([x * 255 // (w - 1), y * 255 // (h - 1), ((x + y) * 255 // (w + h - 2))], -1).astype(np.uint8)
rgb[:6, :6] = [255, 0, 0]      # a marker in the top-left corner shows the orientation
alpha = (x * 255 // (w - 1)).astype(np.uint8)
Image.fromarray(rgb, "RGB").save(TMP + "/alcedo-src.png")
Image.fromarray(np.dstack([rgb, alpha]), "RGBA").save(TMP + "/alcedo-src-alpha.png")
big = np.kron(rgb[:16, :16], np.ones((8, 8, 1), np.uint8))  # 128x128: grid cells must be at least 64x64
Image.fromarray(big, "RGB").save(TMP + "/alcedo-big.png")

# AVIF: 8-bit 4:2:0, 4:4:4 lossless with alpha, 10 and 12-bit, irot/imir, a 2x2 grid, and a
# 3-frame sequence at 10 fps.
run("avifenc", "-s", "8", "-y", "420", "--min", "10", "--max", "10", TMP + "/alcedo-src.png", "still-420.avif")
run("avifenc", "-s", "8", "-l", TMP + "/alcedo-src-alpha.png", "alpha-lossless.avif")
run("avifenc", "-s", "8", "-d", "10", "-y", "444", "--min", "4", "--max", "4", TMP + "/alcedo-src-alpha.png", "alpha-10bit.avif")
run("avifenc", "-s", "8", "-d", "12", "-y", "422", "--min", "4", "--max", "4", TMP + "/alcedo-src.png", "still-12bit.avif")
run("avifenc", "-s", "8", "-y", "444", "--min", "4", "--max", "4", "--irot", "1", TMP + "/alcedo-src.png", "irot1.avif")
run("avifenc", "-s", "8", "-y", "444", "--min", "4", "--max", "4", "--imir", "1", TMP + "/alcedo-src.png", "imir1.avif")
run("avifenc", "-s", "8", "-y", "444", "--min", "4", "--max", "4", "-g", "2x2", TMP + "/alcedo-big.png", "grid-2x2.avif")
frames = []
for i, color in enumerate([(255, 0, 0), (0, 255, 0), (0, 0, 255)]):
    frame = rgb.copy()
    frame[-6:, -6:] = color
    Image.fromarray(frame, "RGB").save(f"{TMP}/alcedo-frame{i}.png")
    frames.append(f"{TMP}/alcedo-frame{i}.png")
run("avifenc", "-s", "8", "-y", "444", "--min", "4", "--max", "4", "--fps", "10", *frames, "animated.avif")
for name in ["still-420", "alpha-lossless", "alpha-10bit", "still-12bit", "irot1", "imir1", "grid-2x2"]:
    run("avifdec", "-d", "8", f"{name}.avif", f"{name}.avif.ref.png")
for i in range(3):
    run("avifdec", "--index", str(i), "-d", "8", "animated.avif", f"animated.avif.{i}.ref.png")

# HEIC (x265): 8-bit, with alpha, and 10-bit from a 16-bit PNG.
run("heif-enc", "-q", "90", "-o", "still.heic", TMP + "/alcedo-src.png")
run("heif-enc", "-q", "90", "-o", "alpha.heic", TMP + "/alcedo-src-alpha.png")
Image.fromarray((rgb[..., 1].astype(np.uint16) * 257)).save(TMP + "/alcedo-gray16.png")
run("heif-enc", "-q", "90", "-b", "10", "-o", "gray-10bit.heic", TMP + "/alcedo-gray16.png")
for name in ["still", "alpha", "gray-10bit"]:
    run("heif-convert", f"{name}.heic", f"{name}.heic.ref.png")
print("done")
