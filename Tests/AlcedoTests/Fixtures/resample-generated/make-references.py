#!/usr/bin/env python3
"""Makes the resampler's reference resizes with Pillow's Lanczos (Image.LANCZOS, no reducing_gap).

Run from this folder: python3 make-references.py
The synthetic picture is defined by integer arithmetic only; ResamplerQualityTests builds the
same pixels in Swift (keep the two in step).
"""
import numpy as np
from PIL import Image

SOURCE = "../libjpeg-turbo/testorig.ppm"


def synthetic(width=1200, height=896):
    y, x = np.mgrid[0:height, 0:width].astype(np.int64)
    r = x * 255 // (width - 1)
    g = y * 255 // (height - 1)
    b = ((x + 2 * y) // 4) % 256
    disc = (x - 700) ** 2 + (y - 400) ** 2 < 250 ** 2
    r, g, b = np.where(disc, 255 - r, r), np.where(disc, 255 - g, g), np.where(disc, 60, b)
    box = (x >= 100) & (x < 400) & (y >= 600) & (y < 800)
    r, g, b = np.where(box, 20, r), np.where(box, 200, g), np.where(box, 90, b)
    return Image.fromarray(np.stack([r, g, b], axis=-1).astype(np.uint8), "RGB")


def main():
    photo = Image.open(SOURCE).convert("RGB")
    for size in [(80, 53), (57, 37)]:
        photo.resize(size, Image.LANCZOS).save("testorig-%dx%d.ppm" % size)
    small = photo.resize((80, 53), Image.LANCZOS)
    small.resize((160, 106), Image.LANCZOS).save("testorig-80x53-to-160x106.ppm")
    synthetic().resize((150, 112), Image.LANCZOS).save("synthetic-150x112.ppm")


if __name__ == "__main__":
    main()
