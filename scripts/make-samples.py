#!/usr/bin/env python3
"""Generates Alcedo's bundled sample images (Sources/alcedo/Demo/Samples/) deterministically with Pillow and numpy.

Every sample is synthetic: made by this script from a fixed random seed, so the project owns
them outright. Run: python3 scripts/make-samples.py Sources/alcedo/Demo/Samples
"""
import math
import sys

import numpy as np
from PIL import Image, ImageDraw

rng = np.random.default_rng(20261121)


def fractal_noise(h, w, octaves=6):
    """Smooth value noise: random grids upsampled bilinearly and summed with falling weights."""
    total = np.zeros((h, w), dtype=np.float64)
    weight = 1.0
    for octave in range(octaves):
        cells = 2 ** (octave + 2)
        grid = rng.random((cells + 1, cells + 1))
        img = Image.fromarray((grid * 255).astype(np.uint8)).resize((w, h), Image.BICUBIC)
        total += weight * (np.asarray(img, dtype=np.float64) / 255.0)
        weight *= 0.5
    total -= total.min()
    return total / total.max()


def landscape(w, h, hue):
    """A photo-like landscape: sky gradient, sun, noisy hills, textured ground."""
    y = np.linspace(0, 1, h)[:, None]
    x = np.linspace(0, 1, w)[None, :]
    sky = np.stack([0.35 + 0.4 * y + 0 * x, 0.55 + 0.3 * y + 0 * x, 0.95 - 0.2 * y + 0 * x], axis=-1)
    sky = sky[..., [hue % 3, (hue + 1) % 3, (hue + 2) % 3]] if hue else sky
    sun = np.exp(-(((x - 0.72) ** 2 + (y - 0.25) ** 2) / 0.004))[..., None] * np.array([1.0, 0.9, 0.6])
    img = np.clip(sky + sun, 0, 1)
    noise = fractal_noise(h, w)
    ridge = 0.55 + 0.18 * np.sin(x * 7 + hue) * 0.5 + 0.12 * (noise[h // 3, :][None, :] - 0.5)
    hills = (y > ridge)
    ground = np.stack([0.2 + 0.35 * noise, 0.35 + 0.4 * noise, 0.15 + 0.2 * noise], axis=-1)
    texture = fractal_noise(h, w, 8)[..., None] * 0.25
    img = np.where(hills[..., None], np.clip(ground * (0.7 + y[..., None] * 0.5) + texture - 0.12, 0, 1), img)
    grain = rng.normal(0, 0.015, img.shape)
    return Image.fromarray((np.clip(img + grain, 0, 1) * 255).astype(np.uint8))


def spinner_frames(size=128, count=12):
    """An animated spinner: dots whose shade rotates."""
    frames = []
    for i in range(count):
        frame = Image.new("RGBA", (size, size), (255, 255, 255, 0))
        d = ImageDraw.Draw(frame)
        for k in range(12):
            angle = 2 * math.pi * k / 12
            shade = int(255 * ((k - i) % count) / count)
            r = size * 0.34
            cx, cy = size / 2 + r * math.cos(angle), size / 2 + r * math.sin(angle)
            dot = size * 0.07
            d.ellipse((cx - dot, cy - dot, cx + dot, cy + dot), fill=(shade, 60, 255 - shade, 255))
        frames.append(frame)
    return frames


def main(out):
    landscape(1600, 1200, 0).save(f"{out}/valley.jpg", quality=85, optimize=True)
    landscape(1200, 900, 1).save(f"{out}/dusk.jpg", quality=85, optimize=True)
    landscape(800, 600, 2).save(f"{out}/meadow.webp", quality=80)

    # A badge with a transparent background and soft edges.
    size = 256
    badge = Image.new("RGBA", (size * 4, size * 4), (0, 0, 0, 0))
    draw = ImageDraw.Draw(badge)
    draw.ellipse((40, 40, size * 4 - 40, size * 4 - 40), fill=(18, 130, 170, 255))
    draw.ellipse((200, 200, size * 4 - 200, size * 4 - 200), fill=(250, 190, 40, 230))
    draw.polygon([(512, 260), (760, 700), (264, 700)], fill=(240, 90, 50, 255))
    badge.resize((size, size), Image.LANCZOS).save(f"{out}/badge.png", optimize=True)

    frames = spinner_frames()
    frames[0].save(f"{out}/spinner.gif", save_all=True, append_images=frames[1:], duration=80, loop=0,
                   disposal=2, transparency=0)
    frames[0].save(f"{out}/spinner.webp", save_all=True, append_images=frames[1:], duration=80, loop=0,
                   lossless=False, quality=80)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "Sources/alcedo/Demo/Samples")
