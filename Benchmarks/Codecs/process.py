#!/usr/bin/env python3
"""Whole-process figures of `alcedo convert`, from os.wait4's resource usage.

Usage: process.py ALCEDO REFERENCE PHOTO.jpg HOSTILE_DIR

1. `alcedo convert PHOTO.jpg OUT.pam --format pam` against the C reference (libjpeg-turbo to
   RGBA in one buffer, the same PAM bytes): median CPU time, peak resident memory and minor page
   faults of each, and the ratios, in the same run.
2. `alcedo convert` of every hostile file to every output format, full size and with
   --downsample 256x256: the worst time and the worst peak resident memory against the bounds
   (768 MB full size, 300 MB with --downsample 256x256)."""
import filecmp
import os
import pathlib
import subprocess
import sys
import tempfile

alcedo, reference, photo, hostile = sys.argv[1:5]
MB = 1000 * 1000


def run(args):
    """(CPU seconds, peak RSS bytes, minor faults, exit status) of one process. CPU time (user +
    system), not wall time: the benchmark machine is shared, and CPU time is what a bound limits."""
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    process.stderr.close()
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024, usage.ru_minflt, os.waitstatus_to_exitcode(status)


def median(values):
    values = sorted(values)
    return values[len(values) // 2]


with tempfile.TemporaryDirectory() as tmp:
    samples = {"alcedo": [], "reference": []}
    commands = {
        "alcedo": [alcedo, "convert", photo, f"{tmp}/a.pam", "--format", "pam"],
        "reference": [reference, photo, f"{tmp}/c.pam"],
    }
    for _ in range(9):  # interleaved, so that load changes hit both sides alike
        for name, command in commands.items():
            samples[name].append(run(command))
    # Compared in chunks: a child's peak RSS starts from this process's own (fork, then exec),
    # so this process must stay small.
    same = filecmp.cmp(f"{tmp}/a.pam", f"{tmp}/c.pam", shallow=False)
    figures = {name: (median([s[0] for s in runs]), max(s[1] for s in runs), median([s[2] for s in runs]))
               for name, runs in samples.items()}
    (at, ar, af), (ct, cr, cf) = figures["alcedo"], figures["reference"]
    print()
    print(f"decode + PAM write of {pathlib.Path(photo).name}, whole process (same bytes: {same}):")
    print(f"  alcedo convert --format pam  {at * 1000:8.1f} ms CPU  {ar / MB:7.1f} MB peak  {af:7d} minor faults")
    print(f"  C reference (libjpeg-turbo)  {ct * 1000:8.1f} ms CPU  {cr / MB:7.1f} MB peak  {cf:7d} minor faults")
    print(f"  ratio alcedo / C             {at / ct:8.2f}x     {ar / cr:7.2f}x        {af / cf:7.2f}x")

    print()
    print("hostile files through `alcedo convert` (exit 0: an image was written; 1: a typed error):")
    worst_time, worst = (0, ""), {False: (0, ""), True: (0, "")}
    for path in sorted(pathlib.Path(hostile).iterdir()):
        for output in ["pam", "jpg", "png", "webp", "gif"]:
            for thumbnail in [False, True]:
                args = [alcedo, "convert", str(path), f"{tmp}/out.{output}"] + (["--downsample", "256x256"] if thumbnail else [])
                seconds, rss, _, status = run(args)
                label = f"{path.name} -> {output}{' --downsample 256x256' if thumbnail else ''}"
                print(f"  {label:<70} exit {status}  {seconds:6.2f} s CPU  {rss / MB:7.1f} MB")
                worst_time = max(worst_time, (seconds, label))
                worst[thumbnail] = max(worst[thumbnail], (rss, label))
    print(f"worst time: {worst_time[0]:.2f} s of CPU ({worst_time[1]})")
    for thumbnail, bound in [(False, 768), (True, 300)]:
        rss, label = worst[thumbnail]
        verdict = "within" if rss / MB < bound else "OVER"
        print(f"worst peak RSS{' with --downsample' if thumbnail else ''}: {rss / MB:.1f} MB, {verdict} the {bound} MB bound ({label})")
