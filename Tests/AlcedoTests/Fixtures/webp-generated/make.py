#!/usr/bin/env python3
"""Regenerates the WebP fixtures in this folder (run from this folder).

Needs python3 with numpy and Pillow, and the libwebp 1.2.4 tools cwebp, dwebp and webpmux.
Every reference is checked two ways before it is written: the compositing below (the WebP
container rules: alpha-blend or overwrite, dispose to transparent) and Pillow's decode.
"""
import os
import subprocess
import tempfile

import numpy as np
from PIL import Image


def run(*args):
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def dwebp_rgba(path, tmp):
    pam = os.path.join(tmp, "out.pam")
    run("dwebp", path, "-pam", "-o", pam)
    data = open(pam, "rb").read()
    header_end = data.index(b"ENDHDR\n") + len(b"ENDHDR\n")
    fields = dict(line.split(b" ", 1) for line in data[:header_end].split(b"\n")[1:-2])
    w, h = int(fields[b"WIDTH"]), int(fields[b"HEIGHT"])
    return np.frombuffer(data[header_end:], dtype=np.uint8).reshape(h, w, 4)


def cwebp_lossless(rgba, path, tmp):
    png = os.path.join(tmp, "in.png")
    Image.fromarray(rgba, "RGBA").save(png)
    run("cwebp", "-quiet", "-lossless", "-exact", "-metadata", "none", png, "-o", path)


def lossless_alpha(tmp):
    """24x16: red/green ramps, blue checks, alpha falling left to right, a fully transparent
    column that keeps its colour (cwebp -exact)."""
    h, w = 16, 24
    y, x = np.mgrid[0:h, 0:w]
    rgba = np.zeros((h, w, 4), np.uint8)
    rgba[..., 0] = x * 10
    rgba[..., 1] = y * 15
    rgba[..., 2] = np.where((x // 4 + y // 4) % 2 == 0, 200, 40)
    rgba[..., 3] = 255 - x * 10
    rgba[:, 5, 3] = 0
    cwebp_lossless(rgba, "lossless-alpha.webp", tmp)
    decoded = dwebp_rgba("lossless-alpha.webp", tmp)
    assert np.array_equal(decoded, rgba), "lossless round trip through cwebp/dwebp is not exact"
    rgba.tofile("lossless-alpha.rgba")


def lossy_alpha(tmp):
    """24x16 lossy (VP8 + ALPH) with a soft alpha ramp; the reference is dwebp's decode."""
    h, w = 16, 24
    y, x = np.mgrid[0:h, 0:w]
    rgba = np.zeros((h, w, 4), np.uint8)
    rgba[..., 0] = 255 - x * 8
    rgba[..., 1] = 60 + y * 8
    rgba[..., 2] = 128
    rgba[..., 3] = np.clip(y * 17, 0, 255)
    png = os.path.join(tmp, "in.png")
    Image.fromarray(rgba, "RGBA").save(png)
    run("cwebp", "-quiet", "-q", "80", "-metadata", "none", png, "-o", "lossy-alpha.webp")
    dwebp_rgba("lossy-alpha.webp", tmp).tofile("lossy-alpha.rgba")


# (duration ms, x, y, dispose to background, alpha-blend, rgba)
def animation_frames():
    frames = []
    # 1: the whole 32x24 canvas, a colour ramp with a transparent band at rows 10-11.
    y, x = np.mgrid[0:24, 0:32]
    f1 = np.zeros((24, 32, 4), np.uint8)
    f1[..., 0] = x * 8
    f1[..., 1] = y * 10
    f1[..., 2] = 90
    f1[..., 3] = 255
    f1[10:12, :, 3] = 0
    frames.append((80, 0, 0, False, False, f1))
    # 2: 12x10 at (4, 6), blended: a green square with a transparent hole that shows frame 1.
    f2 = np.zeros((10, 12, 4), np.uint8)
    f2[...] = (20, 220, 30, 255)
    f2[3:7, 4:8] = (255, 0, 255, 0)  # transparent: the canvas below must stay
    frames.append((0, 4, 6, False, True, f2))
    # 3: 10x8 at (16, 8), not blended (overwrites, half-transparent pixels kept as they are),
    #    disposed to transparent after it is shown.
    f3 = np.zeros((8, 10, 4), np.uint8)
    f3[...] = (250, 200, 10, 128)
    f3[0:2, :] = (10, 20, 250, 0)  # invisible colour must be kept by a non-blended frame
    frames.append((5, 16, 8, True, False, f3))
    # 4: 8x8 at (14, 6), blended, overlapping the area frame 3 left transparent.
    f4 = np.zeros((8, 8, 4), np.uint8)
    f4[...] = (0, 0, 0, 0)
    f4[::2, :] = (255, 255, 255, 255)
    frames.append((150, 14, 6, False, True, f4))
    return frames


def composite(frames, width, height):
    canvas = np.zeros((height, width, 4), np.uint8)
    out = []
    previous_dispose = None
    for duration, x, y, dispose, blend, rgba in frames:
        if previous_dispose is not None:
            px, py, pw, ph = previous_dispose
            canvas[py:py + ph, px:px + pw] = 0
        h, w = rgba.shape[:2]
        region = canvas[y:y + h, x:x + w]
        if blend:
            # Only alpha 0 or 255 in blended frames: the result is exact under any blend formula.
            assert set(np.unique(rgba[..., 3])) <= {0, 255}
            opaque = rgba[..., 3:4] == 255
            region[...] = np.where(opaque, rgba, region)
        else:
            region[...] = rgba
        out.append(canvas.copy())
        previous_dispose = (x, y, w, h) if dispose else None
    return out


def animated(tmp):
    frames = animation_frames()
    args = ["webpmux"]
    for i, (duration, x, y, dispose, blend, rgba) in enumerate(frames):
        path = os.path.join(tmp, f"frame{i}.webp")
        cwebp_lossless(rgba, path, tmp)
        args += ["-frame", path, f"+{duration}+{x}+{y}+{1 if dispose else 0}{'+b' if blend else '-b'}"]
    args += ["-loop", "3", "-bgcolor", "255,255,255,255", "-o", "animated.webp"]
    run(*args)
    expected = composite(frames, 32, 24)
    with Image.open("animated.webp") as im:
        assert im.n_frames == len(expected)
        for i, frame in enumerate(expected):
            im.seek(i)
            assert np.array_equal(np.asarray(im.convert("RGBA")), frame), f"frame {i} differs from Pillow"
    np.concatenate([f.reshape(-1) for f in expected]).tofile("animated.rgba")


def scaled_references():
    """test.webp at 40x40 (what a 50x40 aspect-fit target needs): libwebp's own scaled decode,
    and the full reference decode box-filtered by Pillow."""
    run("dwebp", "../libwebp/test.webp", "-resize", "40", "40", "-ppm", "-o", "test-dwebp-40x40.ppm")
    with Image.open("../libwebp/test_ref.ppm") as ref:
        ref.convert("RGB").resize((40, 40), Image.BOX).save("test-box-40x40.ppm")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        lossless_alpha(tmp)
        lossy_alpha(tmp)
        animated(tmp)
    scaled_references()
