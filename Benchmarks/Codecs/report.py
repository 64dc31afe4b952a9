#!/usr/bin/env python3
"""Joins the Alcedo and peer results of the codec benchmark into one table with ratios, and times
`alcedo convert --downsample 256x256` against a Pillow thumbnail script as whole processes."""
import json
import subprocess
import sys
import tempfile
import time

alcedo_rows = {r["file"]: r for r in map(json.loads, open(sys.argv[1]))}
peer_rows = {r["file"]: r for r in map(json.loads, open(sys.argv[2]))}
alcedo_bin, big_jpeg = sys.argv[3], sys.argv[4]
huge_jpeg = sys.argv[5] if len(sys.argv) > 5 else None


def ratio(a, b):
    return f"{a / b:.2f}x" if a and b else "-"


print(f"{'file':<22} {'case':<18} {'alcedo ms':>10} {'peer':<16} {'peer ms':>9} {'alcedo/peer':>11}")
for name, ours in alcedo_rows.items():
    theirs = peer_rows.get(name, {})
    cases = [("full", "djpeg.full"), ("full", "dwebp.full"), ("full", "pillow.full")]
    for d in (2, 4, 8):
        cases += [(f"scale1/{d}", f"djpeg.scale1/{d}"), (f"scale1/{d}", f"pillow.scale1/{d}")]
    cases += [("thumb256", "pillow.thumb256"), ("thumb256", "vips.thumb256"), ("thumb256", "fullPlusResize256"),
              ("thumb256", "thumb256.unmanaged")]
    for case, peer in cases:
        a = ours.get(case)
        b = theirs.get(peer) if peer in theirs else ours.get(peer)
        if a is None or b is None:
            continue
        print(f"{name:<22} {case:<18} {a:>10.2f} {peer:<16} {b:>9.2f} {ratio(a, b):>11}")


def time_process(args, runs=9):
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
        samples.append((time.perf_counter() - t0) * 1000)
    samples.sort()
    return samples[len(samples) // 2]


with tempfile.TemporaryDirectory() as tmp:
    thumb = time_process([alcedo_bin, "convert", big_jpeg, f"{tmp}/a.jpg", "--downsample", "256x256"])
    full = time_process([alcedo_bin, "convert", big_jpeg, f"{tmp}/b.jpg"])
    pillow = time_process([sys.executable, "-c",
                           "import sys; from PIL import Image; im = Image.open(sys.argv[1]); "
                           "im.thumbnail((256, 256)); im.save(sys.argv[2], quality=90)", big_jpeg, f"{tmp}/c.jpg"])
print()
print(f"process: alcedo convert --downsample 256x256 {thumb:.1f} ms; alcedo convert full size {full:.1f} ms "
      f"({full / thumb:.1f}x); Pillow thumbnail script {pillow:.1f} ms (alcedo/Pillow {ratio(thumb, pillow)})")


def peak_rss_kb(args):
    """Maximum resident set size of a process, from GNU time's -v report."""
    done = subprocess.run(["/usr/bin/time", "-v", *args], check=True, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    for line in done.stderr.splitlines():
        if "Maximum resident set size" in line:
            return int(line.split(":")[1])
    return None


if huge_jpeg:
    import shutil
    with tempfile.TemporaryDirectory() as tmp:
        ours = min(peak_rss_kb([alcedo_bin, "convert", huge_jpeg, f"{tmp}/a.jpg", "--downsample", "256x256"]) for _ in range(3))
        pillow = min(peak_rss_kb([sys.executable, "-c",
                                  "import sys; from PIL import Image; im = Image.open(sys.argv[1]); "
                                  "im.draft('RGB', (256, 256)); im.thumbnail((256, 256)); im.save(sys.argv[2], quality=90)",
                                  huge_jpeg, f"{tmp}/b.jpg"]) for _ in range(3))
        vips = None
        if shutil.which("vipsthumbnail"):
            vips = min(peak_rss_kb(["vipsthumbnail", huge_jpeg, "--size", "256x256", "-o", f"{tmp}/c.jpg"]) for _ in range(3))
    print()
    print(f"peak RSS, 24 MP JPEG -> 256 px: alcedo convert {ours / 1024:.1f} MB; Pillow draft+thumbnail {pillow / 1024:.1f} MB "
          f"(alcedo/Pillow {ours / pillow:.2f}x)"
          + (f"; vipsthumbnail {vips / 1024:.1f} MB (alcedo/vips {ours / vips:.2f}x)" if vips else "; vipsthumbnail not installed"))
