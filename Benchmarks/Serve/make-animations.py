#!/usr/bin/env python3
"""Makes the animated sources of the per-format serve benchmark with Pillow, the reference
writer: a 40-frame 480x270 animation (a landscape panning under a ball that moves and a bar
that grows, every frame different) with delays of 40, 60 and 100 ms in turn and an endless
loop, written as a GIF (palette per frame) and as a lossy WebP (quality 80). COPIES names of
each (symlinks, default 50) give the benchmark distinct source URLs, so that every request is
a new variant as in the still workloads. Nothing is made when the files are there already.
Usage: make-animations.py DIR [COPIES]"""
import importlib.util
import json
import pathlib
import sys

from PIL import Image, ImageDraw

here = pathlib.Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location("samples", here.parent.parent / "scripts" / "make-samples.py")
samples = importlib.util.module_from_spec(spec)
spec.loader.exec_module(samples)

FRAMES, WIDTH, HEIGHT = 40, 480, 270
DELAYS = [(40, 60, 100)[index % 3] for index in range(FRAMES)]

out = pathlib.Path(sys.argv[1])
copies = int(sys.argv[2]) if len(sys.argv) > 2 else 50
out.mkdir(parents=True, exist_ok=True)
names = [f"{kind}-{index:02d}.{kind}" for kind in ("gif", "webp") for index in range(copies)]
if all((out / name).exists() for name in names) and (out / "clip.json").exists():
    sys.exit(0)

background = samples.landscape(WIDTH + FRAMES * 4, HEIGHT, 2).convert("RGB")
frames = []
for index in range(FRAMES):
    frame = background.crop((index * 4, 0, index * 4 + WIDTH, HEIGHT))
    draw = ImageDraw.Draw(frame)
    x = 40 + index * 10
    y = 60 + int(80 * abs((index % 20) - 10) / 10)
    draw.ellipse([x, y, x + 60, y + 60], fill=(220, 40, 40), outline=(255, 255, 255), width=3)
    draw.rectangle([10, HEIGHT - 24, 10 + index * 11, HEIGHT - 10], fill=(30, 30, 200))
    frames.append(frame)
frames[0].save(out / "clip.gif", save_all=True, append_images=frames[1:], duration=DELAYS, loop=0, optimize=False)
frames[0].save(out / "clip.webp", save_all=True, append_images=frames[1:], duration=DELAYS, loop=0, quality=80,
               minimize_size=False)
(out / "clip.json").write_text(json.dumps({"frames": FRAMES, "width": WIDTH, "height": HEIGHT, "delays_ms": DELAYS}) + "\n")
for name in names:
    link = out / name
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to("clip." + name.rsplit(".", 1)[1])
