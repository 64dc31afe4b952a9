#!/usr/bin/env python3
"""The serve benchmark's `soak` workload: a mixed load for a long run, RSS sampled every 5 s.

Sources (made once in INPUTS/soak): 2000x1500 JPEGs from make-inputs.py, a progressive 12 MP
JPEG, a 12 MP WebP and AVIF (written by `alcedo convert` from a 12 MP JPEG), a PNG with
alpha, an animated GIF and an animated WebP. Every request is a new variant (a new width);
results are JPEG, WebP and PNG, and 1 request in 25 AVIF (Alcedo only: thumbor and the libvips
stand-in cannot write AVIF, so they get the other requests). For each server and connection
count: start afresh, sample the idle RSS, load it for SOAK_DURATION seconds with
SOAK_CONNECTIONS client threads, keep sampling 10 s after the load stops, and write the
samples (and, for Alcedo, its own figures from /metrics: free heap bytes, budget reserved,
result-cache bytes), errors and the goals' figures to RESULTS/soak.json; chart.py draws them.

Usage: soak.py --inputs DIR --results DIR --alcedo PATH
Environment: SOAK_DURATION (seconds, default 600), SOAK_CONNECTIONS (default "2 8"),
SOAK_SERVERS (default "alcedo thumbor vips"), SOAK_ALCEDO_ARGS (more `alcedo serve` options,
e.g. "--max-memory 192")."""
import argparse
import itertools
import json
import os
import pathlib
import subprocess
import sys
import threading
import time
import urllib.parse

import numpy as np
from PIL import Image

import bench

SAMPLE_EVERY = 5.0
AFTER_LOAD = 10.0


def make_mix(inputs, alcedo):
    """The soak's sources in INPUTS/soak (made when missing); returns their names."""
    folder = inputs / "soak"
    folder.mkdir(parents=True, exist_ok=True)
    photos = sorted(inputs.glob("photo-*.jpg"))
    big = folder / "big-12mp.jpg"
    if not big.exists():
        subprocess.run([sys.executable, str(bench.HERE.parent / "Pipeline" / "make-inputs.py"), str(folder / "big"), "1", "4000x3000"],
                       check=True)
        (folder / "big" / "photo-00.jpg").rename(big)
    made = {
        "progressive-12mp.jpg": lambda path: Image.open(big).save(path, quality=85, progressive=True),
        "big-12mp.webp": lambda path: subprocess.run([alcedo, "convert", str(big), str(path)], check=True),
        "big-12mp.avif": lambda path: subprocess.run([alcedo, "convert", str(big), str(path)], check=True),
        "alpha.png": lambda path: _alpha_png(photos[0], path),
        "animated.gif": lambda path: _animation(photos, path, "GIF"),
        "animated.webp": lambda path: _animation(photos, path, "WEBP"),
    }
    for name, make in made.items():
        if not (folder / name).exists():
            make(folder / name)
    for photo in photos[:10]:
        target = folder / photo.name
        if not target.exists():
            target.write_bytes(photo.read_bytes())
    return sorted(path.name for path in folder.iterdir() if path.is_file())


def _alpha_png(photo, path):
    image = Image.open(photo).convert("RGBA").resize((1600, 1200))
    alpha = np.tile(np.linspace(40, 255, 1600, dtype=np.uint8), (1200, 1))
    image.putalpha(Image.fromarray(alpha))
    image.save(path)


def _animation(photos, path, fmt):
    frames = [Image.open(photo).convert("RGB").resize((480, 360)) for photo in photos[:12]]
    frames[0].save(path, format=fmt, save_all=True, append_images=frames[1:], duration=80, loop=0)


def request_paths(server, names, origin_url):
    """Endless paths: a new width every request, formats in turn, 1 in 25 AVIF for Alcedo."""
    formats = ["jpg", "webp", "png"]
    for index in itertools.count():
        name = names[index % len(names)]
        width = 120 + (index * 7) % 1200
        fmt = formats[index % 3]
        if isinstance(server, bench.Alcedo):
            if index % 25 == 24:
                fmt = "avif"
            source = urllib.parse.quote(origin_url(name), safe="")
            yield f"/insecure/rs:fit:{width}:{width}/plain/{source}@{fmt}"
        elif isinstance(server, bench.Thumbor):
            yield f"/unsafe/fit-in/{width}x{width}/filters:format({'jpeg' if fmt == 'jpg' else fmt})/127.0.0.1:{server.origin.port}/soak/{name}"
        else:
            source = urllib.parse.quote(origin_url(name), safe="")
            yield f"/insecure/rs:fit:{width}:{width}/plain/{source}@{fmt}"


def soak(server, names, connections, duration):
    server.start("resize")
    root = server.process.pid
    samples, errors, done = [], [], threading.Event()
    start = time.monotonic()

    metrics = []

    def sampler():
        while True:
            serving, _ = bench.rss_of(bench.process_tree(root), root)
            at = round(time.monotonic() - start, 1)
            samples.append((at, serving))
            if isinstance(server, bench.Alcedo):
                metrics.append((at, alcedo_memory(server)))
            if time.monotonic() - stop_at[0] >= AFTER_LOAD - 0.5:
                return
            # Every 5 s; once more when the load stops, then 5 s and 10 s after it.
            if done.is_set():
                time.sleep(SAMPLE_EVERY)
            else:
                done.wait(SAMPLE_EVERY)

    stop_at = [float("inf")]
    paths = request_paths(server, names, lambda name: server.origin.url("soak/" + name))
    lock = threading.Lock()
    counts = [0]

    def client():
        while time.monotonic() - start < duration:
            with lock:
                path = next(paths)
            try:
                status = bench.http_get(server.base + path, timeout=120)[0]
            except OSError as error:  # a refused or reset connection is an error, not the end
                status = f"{type(error).__name__}: {error}"
            with lock:
                counts[0] += 1
                if status != 200:
                    errors.append((path, status))

    thread = threading.Thread(target=sampler, daemon=True)
    thread.start()
    clients = [threading.Thread(target=client, daemon=True) for _ in range(connections)]
    for c in clients:
        c.start()
    for c in clients:
        c.join()
    stop_at[0] = time.monotonic()
    done.set()
    thread.join()
    server.stop()
    by_kind = {}
    for path, status in errors:  # "status source.ext@format": which part of the mix failed, and how
        kind = f"{status} {urllib.parse.unquote(path).rsplit('/', 1)[-1]}"
        by_kind[kind] = by_kind.get(kind, 0) + 1
    return {"samples": samples, "metrics": metrics, "requests": counts[0], "errors": len(errors), "error_examples": errors[:5],
            "errors_by_kind": by_kind,
            "load_seconds": round(stop_at[0] - start, 1)}


MEMORY_METRICS = {
    "alcedo_memory_resident_bytes": "resident",
    "alcedo_memory_heap_free_bytes": "heap_free",
    "alcedo_memory_budget_reserved_bytes": "reserved",
    "alcedo_memory_budget_waiting": "waiting",
    'alcedo_cache_bytes{cache="result"}': "result_cache",
}


def alcedo_memory(server):
    """Alcedo's own memory figures from /metrics: its resident size, the allocator's free heap
    bytes, the bytes requests have reserved from the budget, requests waiting for memory and
    the result cache's bytes."""
    try:
        with bench.urllib.request.urlopen(server.base + "/metrics", timeout=5) as response:
            text = response.read().decode()
    except OSError:
        return {}
    found = {}
    for line in text.splitlines():
        name, _, value = line.rpartition(" ")
        if name in MEMORY_METRICS:
            found[MEMORY_METRICS[name]] = float(value)
    return found


def figures(run):
    """The goals' figures: peak, RSS at 1 minute and at the end of the load, 10 s after it."""
    samples = run["samples"]
    load_end = run["load_seconds"]
    under_load = [rss for t, rss in samples if t <= load_end]
    at_minute = next((rss for t, rss in samples if t >= 60), None)
    at_end = max(((t, rss) for t, rss in samples if t <= load_end), default=(0, None))[1]
    after = [rss for t, rss in samples if t >= load_end + AFTER_LOAD - 0.5]
    return {"idle_mb": samples[0][1] / 1e6 if samples else None,
            "peak_mb": max(under_load) / 1e6 if under_load else None,
            "at_minute_mb": at_minute / 1e6 if at_minute else None,
            "at_end_mb": at_end / 1e6 if at_end else None,
            "after_10s_mb": after[0] / 1e6 if after else None}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--inputs", required=True, type=pathlib.Path)
    parser.add_argument("--results", required=True, type=pathlib.Path)
    parser.add_argument("--alcedo", required=True)
    args = parser.parse_args()
    duration = float(os.environ.get("SOAK_DURATION", "600"))
    connection_counts = [int(c) for c in os.environ.get("SOAK_CONNECTIONS", "2 8").split()]
    wanted = os.environ.get("SOAK_SERVERS", "alcedo thumbor vips").split()
    extra_args = os.environ.get("SOAK_ALCEDO_ARGS", "").split()
    names = make_mix(args.inputs, args.alcedo)
    work = pathlib.Path(bench.tempfile.mkdtemp(prefix="alcedo-soak-"))
    origin = bench.Origin(args.inputs, work)
    results = {"duration": duration, "sample_every": SAMPLE_EVERY, "alcedo_args": extra_args, "runs": []}
    try:
        for connections in connection_counts:
            for name in wanted:
                server = {"alcedo": lambda: bench.Alcedo(origin, work, args.alcedo, extra_args),
                          "thumbor": lambda: bench.Thumbor(origin, work),
                          "vips": lambda: bench.VipsStandIn(origin, work)}[name]()
                print(f"soak: {name}, {connections} connections, {duration:.0f} s", file=sys.stderr)
                run = soak(server, names, connections, duration)
                run.update(server=name, connections=connections, **figures(run))
                if name == "alcedo" and extra_args:
                    run["alcedo_args"] = extra_args
                results["runs"].append(run)
                print(json.dumps({k: v for k, v in run.items() if k not in ("samples", "metrics")}), file=sys.stderr)
                # Written after every run: a long soak that stops half-way keeps what it measured.
                args.results.mkdir(parents=True, exist_ok=True)
                (args.results / "soak.json").write_text(json.dumps(results, indent=1))
    finally:
        origin.stop()


if __name__ == "__main__":
    main()
