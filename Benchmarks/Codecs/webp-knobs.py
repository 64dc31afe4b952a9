#!/usr/bin/env python3
"""libwebp's lossy settings measured on served-size pictures, to choose `alcedo serve`'s default
WebP effort: each method 0-6 and a few other knobs (segments, spatial noise shaping,
autofilter), the system's libwebp (the one Alcedo links) through reference/webp-knobs.c, one
thread, the RGBA import included as in Alcedo's WebPEncoder. Beside them on the same pixels:
libvips' webpsave (pyvips, its defaults: effort 4, as imgproxy) and Pillow's WebP writer (method
4, as thumbor). Prints per picture and setting the median CPU ms of one encode, the bytes, SSIM
against the unencoded pixels, and the time and bytes relative to method 4.
Pictures: a generated 2000x1500 photograph (Pipeline/make-inputs.py) fitted in 200, 456 and 712
pixels with Lanczos3, as the serve benchmark's widths run.
Usage: webp-knobs.py WORK_DIR [QUALITY [RUNS]]   (defaults: 79, imgproxy's WebP quality; 15)
Needs cc, libwebp's headers, and a python with NumPy, Pillow and pyvips (Serve/install.sh makes one)."""
import io
import json
import pathlib
import statistics
import subprocess
import sys
import time

import numpy as np
import pyvips
from PIL import Image

here = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(here.parent / "Serve"))
from ssim import ssim  # noqa: E402

work = pathlib.Path(sys.argv[1])
quality = int(sys.argv[2]) if len(sys.argv) > 2 else 79
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 15
work.mkdir(parents=True, exist_ok=True)
subprocess.run([sys.executable, str(here.parent / "Pipeline" / "make-inputs.py"), str(work / "photos"), "1"], check=True)
binary = work / "webp-knobs"
subprocess.run(["cc", "-O2", "-o", str(binary), str(here / "reference" / "webp-knobs.c"), "-lwebp"], check=True)
source = Image.open(work / "photos" / "photo-00.jpg").convert("RGB")


def timed(function):
    times = []
    for _ in range(runs):
        start = time.process_time()
        result = function()
        times.append((time.process_time() - start) * 1000)
    return statistics.median(times), result


rows = []
for box in (200, 456, 712):
    scale = box / max(source.size)
    size = (round(source.width * scale), round(source.height * scale))
    picture = source.resize(size, Image.LANCZOS)
    pixels = np.asarray(picture.convert("RGBA"))
    raw = work / f"fit-{box}.rgba"
    raw.write_bytes(pixels.tobytes())
    folder = work / f"fit-{box}"
    folder.mkdir(exist_ok=True)
    output = subprocess.run([str(binary), str(raw), str(size[0]), str(size[1]), str(quality), str(runs), str(folder)],
                            check=True, capture_output=True, text=True).stdout
    found = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    for row in found:
        decoded = np.asarray(Image.open(folder / f"{row['label']}.webp").convert("RGB"))
        row["ssim"] = ssim(pixels, decoded)
    vips_image = pyvips.Image.new_from_memory(pixels.tobytes(), size[0], size[1], 4, "uchar")[0:3]
    ms, data = timed(lambda: vips_image.webpsave_buffer(Q=quality, strip=True))
    found.append({"label": "libvips webpsave", "ms": ms, "bytes": len(data),
                  "ssim": ssim(pixels, np.asarray(Image.open(io.BytesIO(data)).convert("RGB")))})

    def pillow():
        buffer = io.BytesIO()
        picture.save(buffer, "WEBP", quality=80)  # thumbor's QUALITY 80, Pillow's method 4
        return buffer.getvalue()
    ms, data = timed(pillow)
    found.append({"label": "Pillow (thumbor q80)", "ms": ms, "bytes": len(data),
                  "ssim": ssim(pixels, np.asarray(Image.open(io.BytesIO(data)).convert("RGB")))})
    base = next(row for row in found if row["label"] == "m4")
    for row in found:
        row.update(picture=f"{size[0]}x{size[1]}", ms_vs_m4=row["ms"] / base["ms"], bytes_vs_m4=row["bytes"] / base["bytes"])
        rows.append(row)

print(f"WebP q{quality}, median of {runs} encodes, CPU ms of one thread")
print("| picture | setting | ms | x m4 | bytes | x m4 | SSIM |")
print("|---|---|---|---|---|---|---|")
for row in rows:
    print(f"| {row['picture']} | {row['label']} | {row['ms']:.2f} | {row['ms_vs_m4']:.2f} | {row['bytes']} | "
          f"{row['bytes_vs_m4']:.3f} | {row['ssim']:.4f} |")
(work / "webp-knobs.json").write_text(json.dumps(rows, indent=1) + "\n")
