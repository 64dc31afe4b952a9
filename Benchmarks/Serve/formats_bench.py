#!/usr/bin/env python3
"""The per-format serve benchmark's driver: for every output format (JPEG, PNG, WebP, AVIF, GIF
from the 2000x1500 JPEG sources, every request a new `rs:fit:W:W` variant, W 200-712) and every
animation case (GIF to GIF, GIF to WebP, WebP to WebP, 40 frames of 480x270 fitted in about 200
px: W 192-208 over 50 source names, again a new variant per request), runs Alcedo, thumbor 7.8
(loaded with `Connection: close`, its better figure) and the libvips stand-in (every frame,
`n=-1`) in turn, each started afresh, TRIES times (default 3) for BENCH_DURATION seconds (default
20), with wrk at BENCH_CONNECTIONS (default 2). Each run: requests/s, p50/p99, CPU ms per
request of the server's processes, errors and the load average before it. After the last try,
the same fixed set of URLs is asked of every server: mean bytes per result, and SSIM of each
result against the source resized by Pillow's Lanczos to the result's size (every frame of an
animation, with the frame count and every delay checked against the source's). Writes
formats-<time>.md and .json to the results folder and prints the Markdown.

Usage: formats_bench.py --inputs DIR --animations DIR --results DIR --alcedo PATH
Environment: BENCH_DURATION, BENCH_CONNECTIONS (one count), BENCH_THREADS, FORMAT_TRIES,
FORMAT_CASES (default every case: jpeg png webp avif gif gif-gif gif-webp webp-webp),
FORMAT_SERVERS (default "alcedo thumbor-close vips"), ALCEDO_ARGS."""
import argparse
import concurrent.futures
import datetime
import io
import json
import os
import pathlib
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import urllib.error
import urllib.parse
import urllib.request

import numpy as np
from PIL import Image

import bench
from ssim import ssim

HERE = pathlib.Path(__file__).resolve().parent


class Case:
    def __init__(self, key, label, source, output, base, span, animated=False):
        self.key, self.label, self.source, self.output = key, label, source, output
        self.base, self.span, self.animated = base, span, animated

    def names(self, origin, animations):
        if self.source == "photo":
            return origin.names
        return sorted(path.name for path in animations.glob(f"{self.source}-*.{self.source}"))

    def url_path(self, name):
        return name if self.source == "photo" else f"anim/{name}"

    def sample(self, names):
        """The fixed (name, width) pairs whose results are kept for bytes and SSIM."""
        if self.animated:
            return [(names[0], 200), (names[1], 196)]
        widths = (200, 264, 328, 392, 456, 520, 584, 648, 712, 300)
        return [(names[index], width) for index, width in enumerate(widths)]


CASES = {case.key: case for case in [
    Case("jpeg", "JPEG", "photo", "jpg", 200, 513),
    Case("png", "PNG", "photo", "png", 200, 513),
    Case("webp", "WebP", "photo", "webp", 200, 513),
    Case("avif", "AVIF", "photo", "avif", 200, 513),
    Case("gif", "GIF", "photo", "gif", 200, 513),
    Case("gif-gif", "animated GIF to GIF", "gif", "gif", 192, 17, animated=True),
    Case("gif-webp", "animated GIF to WebP", "gif", "webp", 192, 17, animated=True),
    Case("webp-webp", "animated WebP to WebP", "webp", "webp", 192, 17, animated=True),
]}
THUMBOR_FORMAT = {"jpg": "jpeg", "png": "png", "webp": "webp", "avif": "avif", "gif": "gif"}
WARM_WIDTH = 160  # outside both measured ranges: warms sources, not results


def make_server(name, origin, work, args, case):
    def imgproxy_path(self, name, width):
        source = urllib.parse.quote(origin.url(case.url_path(name)), safe="")
        return f"/insecure/rs:fit:{width}:{width}/plain/{source}@{case.output}"

    def thumbor_path(self, name, width):
        return (f"/unsafe/fit-in/{width}x{width}/filters:format({THUMBOR_FORMAT[case.output]})/"
                f"127.0.0.1:{origin.port}/{case.url_path(name)}")

    if name == "alcedo":
        server = bench.Alcedo(origin, work, args.alcedo, shlex.split(os.environ.get("ALCEDO_ARGS", "")))
        server.path = imgproxy_path.__get__(server)
    elif name == "thumbor-close":
        server = bench.ThumborClose(origin, work)
        server.path = thumbor_path.__get__(server)
    elif name == "vips":
        server = bench.VipsStandIn(origin, work)
        server.path = imgproxy_path.__get__(server)
    else:
        raise SystemExit(f"unknown server {name}")
    return server


def warm(server, names, folder, case):
    """Asks for every source once outside the measured widths (the animations, one file under
    50 names and slow for some servers, 4 of them), then writes the path templates for wrk."""
    warmed = names[:4] if case.animated else names
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        answers = list(pool.map(lambda name: bench.http_get(server.base + server.path(name, WARM_WIDTH), timeout=120),
                                warmed))
    statuses = sorted({status for status, _, _ in answers})
    if statuses != [200]:
        raise RuntimeError(f"{server.name}: warm-up statuses {statuses}: {server.log_text()}")
    file = folder / f"{server.name}-{case.key}.paths"
    file.write_text("\n".join(server.path(name, "{W}") for name in names) + "\n")
    return file


def fetch(server, name, width):
    status, headers, body = get_body(server.base + server.path(name, width))
    if status != 200:
        raise RuntimeError(f"{server.name}: {server.path(name, width)}: status {status}")
    return headers.get("Content-Type", ""), body


def get_body(url):
    """(status, headers, body) of one GET, statuses >= 300 included."""
    try:
        with urllib.request.urlopen(url, timeout=120) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read() or b""


def frames_of(data):
    """(RGB frames, delays in ms, loop) of an image as Pillow reads it."""
    image = Image.open(io.BytesIO(data))
    frames, delays = [], []
    for index in range(getattr(image, "n_frames", 1)):
        image.seek(index)
        image.load()
        frames.append(image.convert("RGB"))
        delays.append(image.info.get("duration"))
    return frames, delays, image.info.get("loop")


class Reference:
    """The sources decoded once by Pillow, for SSIM against each result."""

    def __init__(self, inputs, animations):
        self.inputs, self.animations, self.cache = inputs, animations, {}

    def frames(self, case, name):
        path = (self.inputs / name) if case.source == "photo" else (self.animations / name)
        key = path.resolve()
        if key not in self.cache:
            self.cache[key] = frames_of(path.read_bytes())
        return self.cache[key]

    def score(self, case, name, data):
        """Bytes, size, SSIM, frame count and delays of one result."""
        source, source_delays, source_loop = self.frames(case, name)
        result, delays, loop = frames_of(data)
        size = result[0].size
        scores = [ssim(np.asarray(reference.resize(size, Image.LANCZOS)), np.asarray(frame))
                  for reference, frame in zip(source, result)]
        entry = {"bytes": len(data), "size": list(size), "ssim": statistics.mean(scores), "frames": len(result)}
        if case.animated:
            entry.update(delays=delays, loop=loop, source_frames=len(source), source_delays=source_delays,
                         frames_kept=len(result) == len(source), delays_kept=delays == source_delays)
        return entry


def run_one(server, case, names, connections, duration, threads, folder, sample, reference):
    server.start("resize")
    try:
        paths = warm(server, names, folder, case)
        command = ["wrk", "-t", str(min(threads, connections)), "-c", str(connections), "-d", f"{duration}s",
                   "--timeout", "20s", "-s", str(HERE / "load.lua")]
        for header in server.wrk_headers:
            command += ["-H", header]
        command += [server.base, "--", "variants", str(paths), str(min(threads, connections)), str(case.base), str(case.span)]
        load_before = os.getloadavg()
        root = server.process.pid
        before = bench.cpu_ticks(bench.process_tree(root))
        output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
        after = bench.cpu_ticks(bench.process_tree(root))
        summary = json.loads([line for line in output.splitlines() if line.startswith("{")][-1])
        quality = None
        if sample:
            quality = []
            for name, width in case.sample(names):
                content_type, body = fetch(server, name, width)
                entry = reference.score(case, name, body)
                entry.update(name=name, width=width, content_type=content_type)
                quality.append(entry)
    finally:
        server.stop()
    requests = summary["requests"]
    seconds = summary["duration_us"] / 1e6
    return {
        "server": server.name, "case": case.key, "connections": connections, "requests": requests, "seconds": seconds,
        "rps": requests / seconds if seconds else 0,
        "p50_ms": summary["latency_us"]["p50"] / 1000, "p99_ms": summary["latency_us"]["p99"] / 1000,
        "cpu_ms_per_request": (after - before) / bench.CLOCK_TICKS * 1000 / requests if requests else None,
        "errors": sum(summary["errors"].values()), "error_detail": summary["errors"],
        "wire_bytes_per_request": summary["bytes"] / requests if requests else 0,
        "load_before": load_before, "quality": quality,
    }


def median_of(runs, key):
    values = [run[key] for run in runs if run.get(key) is not None]
    return statistics.median(values) if values else None


def summarize(results, cases, servers):
    """Per case and server: the median of the tries, and the sample's bytes and SSIM."""
    table = {}
    for case in cases:
        for server in servers:
            runs = [r for r in results if r["case"] == case.key and r["server"] == server]
            if not runs:
                continue
            quality = next((r["quality"] for r in reversed(runs) if r["quality"]), None)
            entry = {"tries": len(runs), "rps": median_of(runs, "rps"), "cpu": median_of(runs, "cpu_ms_per_request"),
                     "p99": median_of(runs, "p99_ms"), "errors": sum(r["errors"] for r in runs),
                     "rps_each": [round(r["rps"], 1) for r in runs]}
            if quality:
                entry["bytes"] = statistics.mean(q["bytes"] for q in quality)
                entry["ssim"] = statistics.mean(q["ssim"] for q in quality)
                if case.animated:
                    entry["frames"] = sorted({q["frames"] for q in quality})
                    entry["frames_kept"] = all(q["frames_kept"] for q in quality)
                    entry["delays_kept"] = all(q["delays_kept"] for q in quality)
                    entry["delays_seen"] = quality[0]["delays"][:6]
            table[(case.key, server)] = entry
    return table


def ratio(a, b):
    return f"{a / b:.2f}x" if a is not None and b else "n/a"


def report(table, cases, servers, meta):
    label = {"alcedo": "Alcedo", "thumbor-close": "thumbor", "vips": "libvips"}
    lines = [f"# Serve benchmark per output format, {meta['date']}", "",
             f"{meta['machine']}; {meta['tries']} tries of {meta['duration']} s per server and case, "
             f"{meta['connections']} connections, medians; servers in turn within each try, each started afresh. "
             f"uptime before: `{meta['uptime_before']}`; after: `{meta['uptime_after']}`.", "",
             f"Versions: {meta['versions']}", ""]
    lines += [f"- {note}" for note in meta["notes"]]
    if meta["notes"]:
        lines.append("")
    header = "| case | " + " | ".join(f"{label[s]} req/s (CPU ms/req)" for s in servers) + \
        " | vs thumbor | vs libvips | bytes: " + ", ".join(label[s] for s in servers) + \
        " | SSIM: " + ", ".join(label[s] for s in servers) + " |"
    lines += [header, "|" + "---|" * (len(servers) + 5)]
    for case in cases:
        cells = []
        for server in servers:
            entry = table.get((case.key, server))
            cells.append(f"{entry['rps']:.1f} ({entry['cpu']:.1f})" if entry else "failed")
        mine = table.get((case.key, "alcedo"))

        def versus(peer):
            other = table.get((case.key, peer))
            return ratio(mine["rps"], other["rps"]) if mine and other else "n/a"

        def column(key, fmt):
            return ", ".join(fmt.format(table[(case.key, s)][key]) if table.get((case.key, s), {}).get(key) is not None
                             else "n/a" for s in servers)
        lines.append(f"| {case.label} | " + " | ".join(cells) + f" | {versus('thumbor-close')} | {versus('vips')} | "
                     f"{column('bytes', '{:,.0f}')} | {column('ssim', '{:.4f}')} |")
    animated = [case for case in cases if case.animated]
    if animated:
        lines += ["", "Animations: frames and delays of each server's results against the source's "
                  "(40 frames; 40, 60, 100 ms in turn)", "",
                  "| case | server | frames | every frame kept | every delay kept | first delays (ms) |", "|---|---|---|---|---|---|"]
        for case in animated:
            for server in servers:
                entry = table.get((case.key, server))
                if entry and "frames" in entry:
                    lines.append(f"| {case.label} | {label[server]} | {entry['frames']} | {'yes' if entry['frames_kept'] else 'NO'} | "
                                 f"{'yes' if entry['delays_kept'] else 'NO'} | {entry['delays_seen']} |")
    lines += ["", "Tries (req/s): " + "; ".join(
        f"{case.key} {label[server]} {table[(case.key, server)]['rps_each']}"
        for case in cases for server in servers if (case.key, server) in table)]
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--inputs", required=True, type=pathlib.Path)
    parser.add_argument("--animations", required=True, type=pathlib.Path)
    parser.add_argument("--results", required=True, type=pathlib.Path)
    parser.add_argument("--alcedo", required=True)
    args = parser.parse_args()
    duration = int(os.environ.get("BENCH_DURATION", "20"))
    connections = int(os.environ.get("BENCH_CONNECTIONS", "2").split()[0])
    threads = int(os.environ.get("BENCH_THREADS", "2"))
    tries = int(os.environ.get("FORMAT_TRIES", "3"))
    cases = [CASES[key] for key in os.environ.get("FORMAT_CASES", " ".join(CASES)).split()]
    servers = os.environ.get("FORMAT_SERVERS", "alcedo thumbor-close vips").split()
    inputs, animations = args.inputs.resolve(), args.animations.resolve()
    if animations.parent != inputs:
        raise SystemExit("--animations must be a folder inside --inputs (the origin serves --inputs)")
    args.results.mkdir(parents=True, exist_ok=True)
    work = pathlib.Path(tempfile.mkdtemp(prefix="alcedo-format-bench-"))
    os.chmod(work, 0o755)
    uptime_before = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    origin = bench.Origin(inputs, work)
    reference = Reference(inputs, animations)
    results, notes = [], []
    try:
        for case in cases:
            names = case.names(origin, animations)
            for attempt in range(tries):
                for name in servers:
                    server = make_server(name, origin, work, args, case)
                    print(f"... {case.label}, try {attempt + 1}, {name}", file=sys.stderr, flush=True)
                    try:
                        result = run_one(server, case, names, connections, duration, threads, work,
                                         attempt == tries - 1, reference)
                    except (RuntimeError, subprocess.CalledProcessError, json.JSONDecodeError, IndexError, OSError) as error:
                        detail = getattr(error, "stderr", "") or ""
                        notes.append(f"{name}, {case.key}, try {attempt + 1}: failed: {str(error)[:300]} {detail[:200]}".strip())
                        print(f"    failed: {error}", file=sys.stderr, flush=True)
                        continue
                    result["try"] = attempt + 1
                    quality = result["quality"]
                    extra = ""
                    if quality:
                        extra = (f", {statistics.mean(q['bytes'] for q in quality):,.0f} B, "
                                 f"SSIM {statistics.mean(q['ssim'] for q in quality):.4f}")
                    print(f"    {result['rps']:.1f} req/s, {result['cpu_ms_per_request']:.2f} CPU ms/req, "
                          f"{result['errors']} errors, load {result['load_before'][0]:.1f}{extra}", file=sys.stderr, flush=True)
                    results.append(result)
    finally:
        origin.stop()
        subprocess.run(["rm", "-rf", str(work)], check=False)
    stamp = datetime.datetime.now(datetime.timezone.utc)
    meta = {"date": stamp.strftime("%Y-%m-%d %H:%M UTC"), "duration": duration, "connections": connections,
            "tries": tries, "threads": threads, "notes": notes, "versions": bench.versions(args.alcedo),
            "alcedo_args": os.environ.get("ALCEDO_ARGS", ""),
            "uptime_before": uptime_before,
            "uptime_after": subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(),
            "machine": f"{os.cpu_count()} cores, {platform.system()} {platform.release()}"}
    table = summarize(results, cases, servers)
    text = report(table, cases, servers, meta)
    name = stamp.strftime("formats-%Y%m%d-%H%M%S")
    print(text)
    (args.results / f"{name}.md").write_text(text)
    summary = [{"case": case, "server": server, **entry} for (case, server), entry in table.items()]
    (args.results / f"{name}.json").write_text(json.dumps({"meta": meta, "summary": summary, "runs": results}, indent=1) + "\n")
    print(f"results: {args.results / name}.md and .json", file=sys.stderr)


if __name__ == "__main__":
    main()
