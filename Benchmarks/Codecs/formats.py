#!/usr/bin/env python3
"""TIFF, JPEG XL and SVG decoding against Pillow and libvips, as whole processes measured with
os.wait4 (CPU time, peak resident memory), interleaved in the same run.

Usage: formats.py ALCEDO DIR  (DIR holds photo-12mp-lzw.tif, photo-12mp.jxl and drawing.svg,
made by make-inputs.py)

Cases, each side doing the same work:
- 12 MP TIFF (LZW, predictor) full decode: `alcedo convert IN OUT.pam --format pam`, Pillow
  `Image.open(IN).load()` + PPM write, `vips copy IN OUT.v` (raw pixels written by each).
- 12 MP JPEG XL full decode: `alcedo convert` to PAM, `vips copy` (Pillow has no JPEG XL decoder).
- 12 MP JPEG XL thumbnail: `alcedo convert IN OUT.png --downsample 400x300` against
  `vipsthumbnail IN --size 400x300 -o OUT.png`.
- SVG rasterised at 1024 px (a 4096x3072 drawing): `alcedo convert IN OUT.png --downsample
  1024x1024` against `vipsthumbnail IN --size 1024 -o OUT.png` (librsvg drawing at that size in
  both; Pillow has no SVG decoder).
Prints a table of median CPU ms and max peak MB, with Alcedo's ratio to each peer."""
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

alcedo, inputs = sys.argv[1], pathlib.Path(sys.argv[2])
MB = 1000 * 1000
RUNS = int(os.environ.get("FORMAT_RUNS", "7"))


def run(args):
    """(CPU seconds, peak RSS bytes) of one process, which must succeed."""
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    error = process.stderr.read().decode(errors="replace")
    process.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {' '.join(args)}\n{error}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024


def median(values):
    values = sorted(values)
    return values[len(values) // 2]


PILLOW_LOAD = ("import sys; from PIL import Image; im = Image.open(sys.argv[1]); im.load(); "
               "im.convert('RGB').save(sys.argv[2])")

tif, jxl, svg = inputs / "photo-12mp-lzw.tif", inputs / "photo-12mp.jxl", inputs / "drawing.svg"
have_vips = shutil.which("vips") is not None and shutil.which("vipsthumbnail") is not None

with tempfile.TemporaryDirectory() as tmp:
    cases = {
        "12 MP TIFF LZW, full": {
            "alcedo": [alcedo, "convert", str(tif), f"{tmp}/a.pam", "--format", "pam"],
            "Pillow": [sys.executable, "-c", PILLOW_LOAD, str(tif), f"{tmp}/p.ppm"],
            "vips copy": ["vips", "copy", str(tif), f"{tmp}/v.v"],
        },
        "12 MP JPEG XL, full": {
            "alcedo": [alcedo, "convert", str(jxl), f"{tmp}/a.pam", "--format", "pam"],
            "vips copy": ["vips", "copy", str(jxl), f"{tmp}/v.v"],
        },
        "12 MP JPEG XL, 400x300": {
            "alcedo": [alcedo, "convert", str(jxl), f"{tmp}/a.png", "--downsample", "400x300"],
            "vipsthumbnail": ["vipsthumbnail", str(jxl), "--size", "400x300", "-o", f"{tmp}/v.png"],
        },
        "SVG at 1024 px": {
            "alcedo": [alcedo, "convert", str(svg), f"{tmp}/a.png", "--downsample", "1024x1024"],
            "vipsthumbnail": ["vipsthumbnail", str(svg), "--size", "1024", "-o", f"{tmp}/v.png"],
        },
    }
    print()
    print("TIFF, JPEG XL and SVG, whole processes (median CPU ms of %d runs, max peak MB):" % RUNS)
    print(f"  {'case':<24} {'side':<14} {'CPU ms':>9} {'peak MB':>8}   {'alcedo/side CPU':>15} {'peak':>6}")
    for case, sides in cases.items():
        if not have_vips:
            sides = {name: args for name, args in sides.items() if not args[0].startswith("vips")}
        samples = {name: [] for name in sides}
        for _ in range(RUNS):  # interleaved, so that load changes hit every side alike
            for name, args in sides.items():
                samples[name].append(run(args))
        figures = {name: (median([s[0] for s in runs]), max(s[1] for s in runs)) for name, runs in samples.items()}
        ours = figures["alcedo"]
        for name, (cpu, rss) in figures.items():
            ratio = "" if name == "alcedo" else f"{ours[0] / cpu:>14.2f}x {ours[1] / rss:>5.2f}x"
            print(f"  {case:<24} {name:<14} {cpu * 1000:>9.1f} {rss / MB:>8.1f}   {ratio}")
    if not have_vips:
        print("  (libvips-tools not installed: vips columns left out)")
