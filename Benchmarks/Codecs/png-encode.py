#!/usr/bin/env python3
"""PNG writing, in process on each side: Alcedo's PNGEncoder (defaults) against libvips'
pngsave (pyvips, its defaults: no filter, zlib level 6, as imgproxy writes PNG) and Pillow
(compress_level 6), on four kinds of result-sized pictures: a photograph, a screenshot, line art
and an image with alpha. Prints the median milliseconds and bytes of each and the ratios.
Usage: png-encode.py CODEC_BENCHMARKS_BINARY WORK_DIR"""
import json
import pathlib
import statistics
import subprocess
import sys
import time

import numpy as np
from PIL import Image, ImageDraw

binary, work = sys.argv[1], pathlib.Path(sys.argv[2])
work.mkdir(parents=True, exist_ok=True)
here = pathlib.Path(__file__).resolve().parent
rng = np.random.default_rng(7)


def photo():
    subprocess.run([sys.executable, str(here.parent / "Pipeline" / "make-inputs.py"), str(work / "photos"), "1"], check=True)
    return Image.open(work / "photos" / "photo-00.jpg").convert("RGB").resize((712, 534), Image.LANCZOS)


def screenshot():
    image = Image.new("RGB", (1024, 768), (240, 240, 240))
    draw = ImageDraw.Draw(image)
    for y in range(0, 768, 28):
        draw.rectangle([10, y + 2, 1014, y + 24], fill=(255, 255, 255), outline=(200, 200, 210))
        draw.text((20, y + 6), "Lorem ipsum dolor sit amet %d consectetur adipiscing elit" % y, fill=(30, 30, 30))
        draw.rectangle([700, y + 5, 760, y + 21], fill=tuple(int(v) for v in rng.integers(0, 255, 3)))
    return image


def line_art():
    image = Image.new("L", (1000, 800), 255)
    draw = ImageDraw.Draw(image)
    for _ in range(200):
        x0, y0, x1, y1 = (int(v) for v in rng.integers(0, 1000, 4))
        draw.line([x0, y0 % 800, x1, y1 % 800], fill=0, width=2)
    return image


def alpha():
    yy, xx = np.mgrid[0:512, 0:512]
    pixels = np.zeros((512, 512, 4), np.uint8)
    pixels[..., 0], pixels[..., 1], pixels[..., 2] = xx // 2, yy // 2, 128
    pixels[..., 3] = np.clip(255 - np.hypot(xx - 256, yy - 256), 0, 255).astype(np.uint8)
    return Image.fromarray(pixels, "RGBA")


def median_ms(body):
    samples, start = [], time.perf_counter()
    while len(samples) < 3 or (len(samples) < 25 and time.perf_counter() - start < 1.5):
        t0 = time.perf_counter()
        body()
        samples.append((time.perf_counter() - t0) * 1000)
    return statistics.median(samples)


files = {}
for name, make in [("photo 712x534", photo), ("screenshot 1024x768", screenshot), ("line art 1000x800", line_art), ("alpha 512x512", alpha)]:
    path = work / (name.split()[0] + ".png")
    make().save(path, compress_level=1)
    files[name] = path
alcedo = {}
for line in subprocess.run([binary, "--png-encode", *map(str, files.values())], check=True, capture_output=True, text=True).stdout.splitlines():
    row = json.loads(line)
    alcedo[row["file"]] = row
try:
    import pyvips
except ImportError:
    pyvips = None
print("| picture | Alcedo ms (KB) | libvips ms (KB) | Pillow ms (KB) | speed vs libvips | bytes vs libvips | speed vs Pillow |")
print("|---|---|---|---|---|---|---|")
for name, path in files.items():
    ours = alcedo[path.name]
    image = Image.open(path)
    image.load()

    def pillow_save():
        import io
        buffer = io.BytesIO()
        image.save(buffer, "PNG", compress_level=6)
        return buffer.getbuffer().nbytes

    pillow_size = pillow_save()
    pillow = median_ms(pillow_save)
    vips, vips_size = float("nan"), 0
    if pyvips is not None:
        loaded = pyvips.Image.new_from_file(str(path), access="sequential").copy_memory()
        vips_size = len(loaded.pngsave_buffer())
        vips = median_ms(lambda: loaded.pngsave_buffer())
    print(f"| {name} | {ours['encode']:.1f} ({ours['bytes'] / 1000:.0f}) | {vips:.1f} ({vips_size / 1000:.0f}) | {pillow:.1f} ({pillow_size / 1000:.0f})"
          f" | {vips / ours['encode']:.2f}x | {ours['bytes'] / vips_size if vips_size else float('nan'):.2f}x | {pillow / ours['encode']:.2f}x |")
