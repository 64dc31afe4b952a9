#!/usr/bin/env python3
"""The peers of the codec benchmark, on the same files: Pillow (full decode, draft scaling for
JPEG, Image.thumbnail), pyvips thumbnail_buffer, and djpeg / dwebp as processes.
Prints one JSON line per file with median milliseconds, the same keys as CodecBenchmarks."""
import io
import json
import shutil
import subprocess
import sys
import time

from PIL import Image

try:
    import pyvips
except Exception:  # pyvips is optional
    pyvips = None


def measure(fn, budget=1.5):
    samples = []
    start = time.perf_counter()
    while len(samples) < 3 or (len(samples) < 25 and time.perf_counter() - start < budget):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1000)
    samples.sort()
    return samples[len(samples) // 2]


def pillow_full(data):
    im = Image.open(io.BytesIO(data))
    n = getattr(im, "n_frames", 1)
    for i in range(n):
        im.seek(i)
        im.convert("RGBA")


def pillow_draft(data, scale):
    im = Image.open(io.BytesIO(data))
    im.draft("RGB", (im.width // scale, im.height // scale))
    im.load()


def pillow_thumb(data):
    im = Image.open(io.BytesIO(data))
    im.thumbnail((256, 256))


for path in sys.argv[1:]:
    data = open(path, "rb").read()
    im = Image.open(io.BytesIO(data))
    result = {"file": path.rsplit("/", 1)[-1], "pillow.full": measure(lambda: pillow_full(data)),
              "pillow.thumb256": measure(lambda: pillow_thumb(data))}
    if im.format == "JPEG":
        for d in (2, 4, 8):
            result[f"pillow.scale1/{d}"] = measure(lambda: pillow_draft(data, d))
        if shutil.which("djpeg"):
            result["djpeg.full"] = measure(lambda: subprocess.run(["djpeg", "-outfile", "/dev/null", path], check=True))
            for d in (2, 4, 8):
                result[f"djpeg.scale1/{d}"] = measure(
                    lambda: subprocess.run(["djpeg", "-scale", f"1/{d}", "-outfile", "/dev/null", path], check=True))
    if im.format == "WEBP" and shutil.which("dwebp"):
        result["dwebp.full"] = measure(lambda: subprocess.run(["dwebp", "-quiet", "-pam", path, "-o", "/dev/null"], check=True))
    if pyvips is not None:
        result["vips.thumb256"] = measure(lambda: pyvips.Image.thumbnail_buffer(data, 256).write_to_memory())
    print(json.dumps(result, sort_keys=True), flush=True)
