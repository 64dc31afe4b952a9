#!/usr/bin/env python3
"""Makes the codec benchmark inputs in a folder: a 12-megapixel photo-like JPEG at q85 and q90,
a large PNG, a large WebP and an animated GIF; the same 12 MP photo as an LZW TIFF and as a JPEG XL
(cjxl 0.7, distance 1, its default effort 7), and a 4096x3072 SVG drawing (gradients, 2,000
paths, text-free). Usage: make-inputs.py DIR"""
import importlib.util
import pathlib
import random
import subprocess
import sys

here = pathlib.Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location("samples", here.parent.parent / "scripts" / "make-samples.py")
samples = importlib.util.module_from_spec(spec)
spec.loader.exec_module(samples)

out = pathlib.Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
def detailed(image, seed):
    """Adds fine detail (grain and texture) so the file compresses like a real photo (~3 MB at q85),
    not like a smooth gradient."""
    import numpy as np
    from PIL import Image
    rng = np.random.default_rng(seed)
    pixels = np.asarray(image, dtype=np.float64)
    grain = rng.normal(0, 9, pixels.shape[:2])[..., None]
    texture = rng.normal(0, 6, pixels.shape)
    return Image.fromarray(np.clip(pixels + grain + texture, 0, 255).astype(np.uint8))


photo = detailed(samples.landscape(4000, 3000, 0), 1)
photo.save(out / "photo-12mp-q85.jpg", quality=85)
photo.save(out / "photo-12mp-q90.jpg", quality=90)
detailed(samples.landscape(2400, 1800, 1), 2).save(out / "large.png", compress_level=6)
detailed(samples.landscape(4000, 3000, 2), 3).save(out / "large.webp", quality=80)
# Colour management: the q85 photo tagged with a Display P3 profile (the colour fixtures'
# profile), and a 24-megapixel photo for the peak-memory comparison.
p3 = (here.parent.parent / "Tests" / "AlcedoTests" / "Fixtures" / "color-generated" / "p3.icc").read_bytes()
photo.save(out / "photo-12mp-p3.jpg", quality=85, icc_profile=p3)
detailed(samples.landscape(6000, 4000, 3), 4).save(out / "photo-24mp-q85.jpg", quality=85)
frames = samples.spinner_frames(size=320, count=40)
frames[0].save(out / "animated.gif", save_all=True, append_images=frames[1:], duration=40, loop=0,
               disposal=2, transparency=0)

# TIFF, JPEG XL and SVG (formats.py).
photo.save(out / "photo-12mp-lzw.tif", compression="tiff_lzw")
photo.save(out / "photo-12mp.png", compress_level=1)
subprocess.run(["cjxl", str(out / "photo-12mp.png"), str(out / "photo-12mp.jxl"), "-d", "1", "--quiet"], check=True)
(out / "photo-12mp.png").unlink()
draw = random.Random(21)
shapes = []
for i in range(2000):
    x, y = draw.uniform(0, 4096), draw.uniform(0, 3072)
    points = " ".join(f"{x + draw.uniform(-300, 300):.1f},{y + draw.uniform(-300, 300):.1f}" for _ in range(6))
    colour = f"#{draw.randrange(0x1000000):06x}"
    shapes.append(f'<path d="M{x:.1f},{y:.1f} Q{points}" fill="{colour}" fill-opacity="0.5" stroke="#222" stroke-width="3"/>')
(out / "drawing.svg").write_text(
    '<svg xmlns="http://www.w3.org/2000/svg" width="4096" height="3072" viewBox="0 0 4096 3072">'
    '<defs><linearGradient id="sky" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="#3a7bd5"/>'
    '<stop offset="1" stop-color="#f9d976"/></linearGradient></defs>'
    '<rect width="4096" height="3072" fill="url(#sky)"/>' + "".join(shapes) + "</svg>")
