#!/usr/bin/env python3
"""The serve benchmark's driver: starts an nginx origin on 127.0.0.1 over the generated photos,
then for every workload and connection count starts each server afresh (new cache folders),
warms it, loads it with wrk for BENCH_DURATION seconds, and measures requests/s, p50/p99
latency, CPU milliseconds per request (utime+stime of the server's processes, children
included, before and after), the peak RSS under load (sum over the processes that serve,
sampled from /proc every 50 ms) and errors. Prints a Markdown table with the ratios of Alcedo
to each peer and writes it, with the raw figures as JSON, to the results folder.

Usage: bench.py --inputs DIR --results DIR [--alcedo PATH]
Environment: BENCH_DURATION (seconds, default 20), BENCH_CONNECTIONS (default "2 8"),
BENCH_THREADS (wrk threads, default 2), BENCH_SERVERS (default "alcedo thumbor thumbor-close
vips"), BENCH_WORKLOADS (default "resize hits revalidate"), ALCEDO_ARGS (more `alcedo serve` arguments,
shell-quoted), BENCH_FORMAT (the results' format: jpeg, the default, png or webp; every server is
asked for it in its own URL syntax: `@png` for Alcedo and the libvips stand-in, thumbor's
`filters:format(png)`), BENCH_DIALECT (`imgproxy`, the default, or `thumbor`: Alcedo runs
`--dialect thumbor` and is sent the same thumbor URLs as thumbor; the workloads `crop`, `/unsafe/WxW/`,
and `filters`, `fit-in/WxW/filters:brightness(10):contrast(5):quality(80)/`, join them)."""
import argparse
import shlex
import concurrent.futures
import datetime
import json
import os
import pathlib
import platform
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

HERE = pathlib.Path(__file__).resolve().parent
VENV_BIN = pathlib.Path(sys.executable).parent
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")
HIT_WIDTH = 300        # the fixed option set of the hits and 304 workloads
WARM_WIDTH = 160       # outside the measured 200-712 range: warms sources, not results
LABELS = {
    "alcedo": "Alcedo",
    "thumbor": "thumbor (keep-alive)",
    "thumbor-close": "thumbor (Connection: close)",
    "vips": "libvips stand-in",
}
FORMAT = os.environ.get("BENCH_FORMAT", "jpeg")
if FORMAT not in ("jpeg", "png", "webp"):
    raise SystemExit(f"BENCH_FORMAT={FORMAT}: jpeg, png or webp")
# imgproxy's `@ext` (nothing for JPEG, the sources' own format) and thumbor's format filter.
IMGPROXY_SUFFIX = "" if FORMAT == "jpeg" else f"@{FORMAT}"
THUMBOR_FILTER = "" if FORMAT == "jpeg" else f"filters:format({FORMAT})/"
DIALECT = os.environ.get("BENCH_DIALECT", "imgproxy")
if DIALECT not in ("imgproxy", "thumbor"):
    raise SystemExit(f"BENCH_DIALECT={DIALECT}: imgproxy or thumbor")

WORKLOADS = {
    "resize": "(a) resize, every request a new variant",
    "hits": "(b) hits, 50 URLs again and again",
    "revalidate": "(c) 304s with If-None-Match",
    "crop": "(d) thumbor's /WxW/ (resize and crop), every request a new variant",
    "filters": "(e) thumbor's fit-in with brightness, contrast and quality filters, every request a new variant",
}
# The workloads whose every request is a new variant (no result storage for thumbor).
VARIANT_WORKLOADS = ("resize", "crop", "filters")


def thumbor_path(origin, name, width, workload):
    """thumbor's URL for a workload: fit-in (the same box fit as imgproxy's rs:fit; plain /WxW/
    would crop to fill), /WxW/ for `crop`, fit-in with filters for `filters`."""
    source = f"127.0.0.1:{origin.port}/{name}"
    if workload == "crop":
        return f"/unsafe/{width}x{width}/{THUMBOR_FILTER}{source}"
    if workload == "filters":
        extra = "" if FORMAT == "jpeg" else f":format({FORMAT})"
        return f"/unsafe/fit-in/{width}x{width}/filters:brightness(10):contrast(5):quality(80){extra}/{source}"
    return f"/unsafe/fit-in/{width}x{width}/{THUMBOR_FILTER}{source}"


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def http_get(url, headers=None, timeout=60):
    """Returns (status, headers, body length) of one GET, statuses >= 300 included."""
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.headers, len(response.read())
    except urllib.error.HTTPError as error:
        return error.code, error.headers, len(error.read() or b"")


def wait_until(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if predicate():
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{what} did not become ready in {timeout} s")


# ---- /proc ---------------------------------------------------------------------------------

def proc_stat(pid):
    """(ppid, utime+stime+cutime+cstime in ticks, rss bytes, minor page faults) of a live process,
    else None."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return None
    # fields[0] is field 3 (state): ppid is field 4, minflt and cminflt 10 and 11, utime..cstime
    # 14..17, rss 24.
    ticks = int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])
    return int(fields[1]), ticks, int(fields[21]) * PAGE, int(fields[7]) + int(fields[8])


def process_tree(root):
    """{pid: (ppid, ticks, rss)} for root and all its descendants."""
    stats = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = proc_stat(int(entry))
            if stat:
                stats[int(entry)] = stat
    tree, frontier = {}, [root]
    while frontier:
        pid = frontier.pop()
        if pid in stats and pid not in tree:
            tree[pid] = stats[pid]
            frontier.extend(child for child, stat in stats.items() if stat[0] == pid)
    return tree


def cpu_ticks(tree):
    # A live child's time is not yet in its parent's cutime, a reaped one's is: no double count.
    return sum(stat[1] for stat in tree.values())


def minor_faults(tree):
    # Minor page faults: fresh pages the kernel mapped (and zeroed) for the process.
    return sum(stat[3] for stat in tree.values())


def rss_of(tree, root):
    """(serving RSS, total RSS): the workers' sum when the root is a supervisor, else the root's."""
    total = sum(stat[2] for stat in tree.values())
    workers = [stat[2] for pid, stat in tree.items() if pid != root]
    return (sum(workers) if workers else total), total


class RSSSampler(threading.Thread):
    def __init__(self, root):
        super().__init__(daemon=True)
        self.root, self.stop, self.peak, self.peak_total = root, threading.Event(), 0, 0

    def run(self):
        while not self.stop.is_set():
            serving, total = rss_of(process_tree(self.root), self.root)
            self.peak, self.peak_total = max(self.peak, serving), max(self.peak_total, total)
            self.stop.wait(0.05)


# ---- the origin ----------------------------------------------------------------------------

class Origin:
    """nginx from Debian's package, with its own config and prefix in a temporary folder; no
    access log unless `access_log` names a file (the Redis benchmark counts origin requests)."""

    def __init__(self, inputs, work, access_log=None):
        self.port = free_port()
        prefix = work / "nginx"
        for sub in ("logs", "tmp"):
            (prefix / sub).mkdir(parents=True, exist_ok=True)
        user = "user root;\n" if os.geteuid() == 0 else ""
        config = prefix / "nginx.conf"
        config.write_text(f"""{user}worker_processes 1;
daemon off;
pid {prefix}/nginx.pid;
error_log {prefix}/logs/error.log warn;
events {{ worker_connections 512; }}
http {{
    access_log {access_log or "off"};
    sendfile on;
    keepalive_requests 100000;
    client_body_temp_path {prefix}/tmp/body;
    proxy_temp_path {prefix}/tmp/proxy;
    fastcgi_temp_path {prefix}/tmp/fastcgi;
    uwsgi_temp_path {prefix}/tmp/uwsgi;
    scgi_temp_path {prefix}/tmp/scgi;
    types {{ image/jpeg jpg; image/gif gif; image/webp webp; image/png png; }}
    default_type application/octet-stream;
    server {{
        listen 127.0.0.1:{self.port};
        root {inputs};
    }}
}}
""")
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        self.process = subprocess.Popen([nginx, "-p", str(prefix), "-c", str(config), "-e", str(prefix / "logs" / "error.log")],
                                        start_new_session=True)
        self.base = f"http://127.0.0.1:{self.port}"
        self.names = sorted(path.name for path in inputs.glob("*.jpg"))
        wait_until(lambda: http_get(f"{self.base}/{self.names[0]}")[0] == 200, 10, "nginx")

    def url(self, name):
        return f"{self.base}/{name}"

    def stop(self):
        stop_group(self.process)


def stop_group(process):
    """Stops a server started in its own session: SIGTERM to its group, SIGKILL after 10 s."""
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(10)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(5)
    except ProcessLookupError:
        pass
    try:  # workers left behind by a supervisor that exited first
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


# ---- the servers ---------------------------------------------------------------------------

class Server:
    name = ""
    wrk_headers = ()

    def __init__(self, origin, work):
        self.origin, self.work = origin, work
        self.process, self.port, self.log = None, None, None
        self.workload = "resize"

    @property
    def base(self):
        return f"http://127.0.0.1:{self.port}"

    def path(self, name, width):
        raise NotImplementedError

    def command(self, workload, folder):
        raise NotImplementedError

    def environment(self):
        return dict(os.environ)

    def start(self, workload):
        self.workload = workload
        folder = pathlib.Path(tempfile.mkdtemp(prefix=f"{self.name}-", dir=self.work))
        self.port = free_port()
        self.log = open(folder / "server.log", "w+")
        self.process = subprocess.Popen(self.command(workload, folder), stdout=self.log, stderr=subprocess.STDOUT,
                                        env=self.environment(), cwd=HERE, start_new_session=True)
        self.wait_ready()
        return self

    def wait_ready(self):
        def ready():
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited: {self.log_text()}")
            with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                return True
        wait_until(ready, 60, self.name)

    def log_text(self):
        self.log.flush()
        self.log.seek(0)
        return self.log.read()[-2000:]

    def stop(self):
        if self.process:
            stop_group(self.process)
            self.log.close()
            self.process = None


class Alcedo(Server):
    name = "alcedo"

    def __init__(self, origin, work, binary, extra_args=()):
        super().__init__(origin, work)
        self.binary, self.extra_args = binary, list(extra_args)

    def command(self, workload, folder):
        # stdbuf: the `listening on` line must reach the log file at once, not at exit.
        line_buffered = ["stdbuf", "-oL"] if shutil.which("stdbuf") else []
        dialect = ["--dialect", "thumbor"] if DIALECT == "thumbor" else []
        return line_buffered + [self.binary, "serve", "--host", "127.0.0.1", "--port", "0",
                                "--cache-dir", str(folder / "cache"), "--allow-private-networks"] + dialect + self.extra_args

    def wait_ready(self):
        # `alcedo serve --port 0` prints `listening on http://HOST:PORT` once it accepts.
        def ready():
            if self.process.poll() is not None:
                raise RuntimeError(f"alcedo serve exited: {self.log_text()}")
            for line in self.log_text().splitlines():
                if line.startswith("listening on http://"):
                    self.port = int(line.rsplit(":", 1)[1])
                    return True
            return False
        wait_until(ready, 60, "alcedo serve")

    def path(self, name, width):
        if DIALECT == "thumbor":
            return thumbor_path(self.origin, name, width, self.workload)
        source = urllib.parse.quote(self.origin.url(name), safe="")
        return f"/insecure/rs:fit:{width}:{width}/plain/{source}{IMGPROXY_SUFFIX}"


class Thumbor(Server):
    name = "thumbor"

    def command(self, workload, folder):
        # File storage for sources; result storage off for (a), on (unsafe URLs stored) otherwise.
        result_storage = "None" if workload in VARIANT_WORKLOADS else "'thumbor.result_storages.file_storage'"
        config = folder / "thumbor.conf"
        config.write_text(f"""LOADER = 'thumbor.loaders.http_loader'
STORAGE = 'thumbor.storages.file_storage'
FILE_STORAGE_ROOT_PATH = '{folder / "storage"}'
RESULT_STORAGE = {result_storage}
RESULT_STORAGE_FILE_STORAGE_ROOT_PATH = '{folder / "results"}'
RESULT_STORAGE_STORES_UNSAFE = True
ALLOW_UNSAFE_URL = True
QUALITY = 80
ENABLE_ETAGS = True
""")
        return [str(VENV_BIN / "thumbor"), "--ip", "127.0.0.1", "--port", str(self.port), "--conf", str(config),
                "--processes", "2", "-l", "error"]

    def wait_ready(self):
        def ready():
            if self.process.poll() is not None:
                raise RuntimeError(f"thumbor exited: {self.log_text()}")
            return http_get(f"{self.base}/healthcheck", timeout=2)[0] == 200
        wait_until(ready, 60, "thumbor")

    def path(self, name, width):
        return thumbor_path(self.origin, name, width, self.workload)


class ThumborClose(Thumbor):
    """The same thumbor, loaded with Connection: close so that both processes take requests."""
    name = "thumbor-close"
    wrk_headers = ("Connection: close",)


class VipsStandIn(Server):
    name = "vips"

    def command(self, workload, folder):
        return [str(VENV_BIN / "gunicorn"), "-w", "2", "-b", f"127.0.0.1:{self.port}", "--log-level", "warning",
                "vips_proxy:app"]

    def environment(self):
        return dict(os.environ, VIPS_CONCURRENCY="1")

    def path(self, name, width):
        source = urllib.parse.quote(self.origin.url(name), safe="")
        return f"/insecure/rs:fit:{width}:{width}/plain/{source}{IMGPROXY_SUFFIX}"


# ---- one run -------------------------------------------------------------------------------

def warm(server, workload, folder):
    """Fetches every source once (and, for hits and 304s, every measured URL) before the clock
    starts; returns the file of paths for wrk and a note on what the server answered."""
    names = server.origin.names
    note = ""

    def fetch(path, headers=None):
        return http_get(server.base + path, headers)

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        warm_paths = [server.path(name, WARM_WIDTH) for name in names] * 2
        statuses = list(pool.map(lambda path: fetch(path)[0], warm_paths))
        if any(status != 200 for status in statuses):
            raise RuntimeError(f"{server.name}: warm-up statuses {sorted(set(statuses))}: {server.log_text()}")
        lines = []
        if workload in VARIANT_WORKLOADS:
            lines = [server.path(name, "{W}") for name in names]
        else:
            paths = [server.path(name, HIT_WIDTH) for name in names]
            answers = list(pool.map(fetch, paths + paths))[: len(paths)]
            if any(status != 200 for status, _, _ in answers):
                raise RuntimeError(f"{server.name}: statuses {[a[0] for a in answers]}")
            if workload == "hits":
                lines = paths
            else:
                etags = [headers.get("ETag") for _, headers, _ in answers]
                if not all(etags):
                    raise RuntimeError(f"{server.name}: no ETag in its responses")
                lines = [f"{path}\t{etag}" for path, etag in zip(paths, etags)]
                checks = [fetch(path, {"If-None-Match": etag})[0] for path, etag in zip(paths, etags)]
                note = f"{checks.count(304)}/{len(checks)} conditional requests answered 304 before the run"
    file = folder / f"{server.name}-{workload}.paths"
    file.write_text("\n".join(lines) + "\n")
    return file, note


def run_one(server, workload, connections, duration, threads, folder):
    server.start(workload)
    try:
        paths, note = warm(server, workload, folder)
        mode = {"resize": "variants", "crop": "variants", "filters": "variants", "hits": "repeat", "revalidate": "revalidate"}[workload]
        command = ["wrk", "-t", str(min(threads, connections)), "-c", str(connections), "-d", f"{duration}s",
                   "--timeout", "10s", "-s", str(HERE / "load.lua")]
        for header in server.wrk_headers:
            command += ["-H", header]
        command += [server.base, "--", mode, str(paths), str(min(threads, connections))]
        load_before = os.getloadavg()[0]
        root = server.process.pid
        tree = process_tree(root)
        before, faults_before = cpu_ticks(tree), minor_faults(tree)
        sampler = RSSSampler(root)
        sampler.start()
        output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
        sampler.stop.set()
        sampler.join()
        tree = process_tree(root)
        after, faults_after = cpu_ticks(tree), minor_faults(tree)
        summary = json.loads([line for line in output.splitlines() if line.startswith("{")][-1])
    finally:
        server.stop()
    requests = summary["requests"]
    seconds = summary["duration_us"] / 1e6
    errors = sum(summary["errors"].values())
    if workload == "revalidate":
        errors += summary["statuses"]["other"]
    return {
        "server": server.name, "workload": workload, "connections": connections,
        "requests": requests, "seconds": seconds, "rps": requests / seconds if seconds else 0,
        "p50_ms": summary["latency_us"]["p50"] / 1000, "p99_ms": summary["latency_us"]["p99"] / 1000,
        "max_ms": summary["latency_us"]["max"] / 1000,
        "cpu_ms_per_request": (after - before) / CLOCK_TICKS * 1000 / requests if requests else None,
        "faults_per_request": (faults_after - faults_before) / requests if requests else None,
        "peak_rss_mb": sampler.peak / 2**20, "peak_rss_total_mb": sampler.peak_total / 2**20,
        "errors": errors, "error_detail": summary["errors"], "statuses": summary["statuses"],
        "bytes_per_request": summary["bytes"] / requests if requests else 0,
        "load_before": load_before, "note": note,
    }


# ---- the report ----------------------------------------------------------------------------

def ratio(a, b):
    return f"{a / b:.2f}x" if a is not None and b else "n/a"


def report(results, meta):
    lines = [f"# Serve benchmark, {meta['date']}" + ("" if FORMAT == "jpeg" else f", {FORMAT} results")
             + (", thumbor URLs (Alcedo with --dialect thumbor)" if DIALECT == "thumbor" else ""), "",
             f"{meta['machine']}; {meta['duration']} s per run, wrk {meta['threads']} threads; "
             f"servers and peers back to back in one run, each started afresh for each row. "
             f"Other work on the machine makes every figure noisy (load average before each run in the JSON).", "",
             f"Versions: {meta['versions']}", ""]
    for note in meta["notes"]:
        lines.append(f"- {note}")
    if meta["notes"]:
        lines.append("")
    lines += ["| workload | conns | server | req/s | p50 ms | p99 ms | CPU ms/req | peak RSS MB (all processes) | errors | load before |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        cpu = f"{r['cpu_ms_per_request']:.2f}" if r["cpu_ms_per_request"] is not None else "n/a"
        lines.append(f"| {r['workload']} | {r['connections']} | {LABELS[r['server']]} | {r['rps']:.0f} | "
                     f"{r['p50_ms']:.1f} | {r['p99_ms']:.1f} | {cpu} | {r['peak_rss_mb']:.0f} ({r['peak_rss_total_mb']:.0f}) | "
                     f"{r['errors']} | {r.get('load_before', 0):.1f} |")
    index = {(r["server"], r["workload"], r["connections"]): r for r in results}
    rows = []
    for (server, workload, connections), mine in index.items():
        if server != "alcedo":
            continue
        for peer in ("thumbor-close", "thumbor", "vips"):
            other = index.get((peer, workload, connections))
            if other:
                rows.append(f"| {workload} | {connections} | {LABELS[peer]} | {ratio(mine['rps'], other['rps'])} | "
                            f"{ratio(mine['p99_ms'], other['p99_ms'])} | "
                            f"{ratio(mine['cpu_ms_per_request'], other['cpu_ms_per_request'])} | "
                            f"{ratio(mine['peak_rss_mb'], other['peak_rss_mb'])} |")
    if rows:
        lines += ["", "Ratios Alcedo / peer (req/s: higher is better; p99, CPU and RSS: lower is better)", "",
                  "| workload | conns | peer | req/s | p99 | CPU ms/req | peak RSS |", "|---|---|---|---|---|---|---|"] + rows
        lines += ["", "Goals (evaluated, not asserted):", ""] + goals(index, meta["connections"])
    else:
        lines += ["", "No ratios: Alcedo and a peer were not both measured in this run."]
    return "\n".join(lines) + "\n"


def goals(index, connection_counts):
    out = []

    def get(server, workload, connections):
        return index.get((server, workload, connections))

    for connections in connection_counts:
        for workload in VARIANT_WORKLOADS:
            mine = get("alcedo", workload, connections)
            if not mine:
                continue
            for peer in ("thumbor-close", "vips"):
                other = get(peer, workload, connections)
                if other:
                    fast = mine["rps"] >= 1.5 * other["rps"]
                    tail = mine["p99_ms"] <= other["p99_ms"]
                    lean = mine["peak_rss_mb"] <= 0.5 * other["peak_rss_mb"]
                    out.append(f"- {workload}, {connections} conns: >= 1.5x {LABELS[peer]}: {'met' if fast else 'NOT met'} "
                               f"({ratio(mine['rps'], other['rps'])}); p99 no worse: {'met' if tail else 'NOT met'} "
                               f"({mine['p99_ms']:.1f} vs {other['p99_ms']:.1f} ms); peak RSS <= 0.5x: "
                               f"{'met' if lean else 'NOT met'} ({ratio(mine['peak_rss_mb'], other['peak_rss_mb'])})")
        mine = get("alcedo", "hits", connections)
        peers = [r for r in (get("thumbor", "hits", connections), get("thumbor-close", "hits", connections)) if r]
        if mine and peers:
            best = max(peers, key=lambda r: r["rps"])
            met = mine["rps"] >= 3 * best["rps"]
            out.append(f"- hits, {connections} conns: >= 3x thumbor's better figure ({LABELS[best['server']]}): "
                       f"{'met' if met else 'NOT met'} ({ratio(mine['rps'], best['rps'])})")
        hits, revalidate = get("alcedo", "hits", connections), get("alcedo", "revalidate", connections)
        if hits and revalidate and hits["cpu_ms_per_request"] and revalidate["cpu_ms_per_request"]:
            cheaper = revalidate["cpu_ms_per_request"] < hits["cpu_ms_per_request"]
            out.append(f"- 304s cheaper than hits, {connections} conns: {'met' if cheaper else 'NOT met'} "
                       f"({revalidate['cpu_ms_per_request']:.3f} vs {hits['cpu_ms_per_request']:.3f} CPU ms/req, "
                       f"{revalidate['rps']:.0f} vs {hits['rps']:.0f} req/s)")
    peaks = [r["peak_rss_mb"] for key, r in index.items() if key[0] == "alcedo"]
    if peaks:
        out.append(f"- Alcedo peak RSS under load < 150 MB: {'met' if max(peaks) < 150 else 'NOT met'} "
                   f"(highest {max(peaks):.0f} MB)")
    return out


def versions(alcedo):
    found = []

    def capture(command):
        try:
            result = subprocess.run(command, capture_output=True, text=True, timeout=30)
            return (result.stdout + result.stderr).strip().splitlines()[0]
        except (OSError, IndexError, subprocess.TimeoutExpired):
            return "?"
    found.append("nginx " + capture(["nginx", "-v"]).split("/")[-1])
    found.append(capture(["wrk", "-v"]).split(" [")[0])
    found.append("thumbor " + capture([sys.executable, "-c", "import thumbor; print(thumbor.__version__)"]))
    found.append("libvips " + capture([sys.executable, "-c", "import pyvips; print(pyvips.version(0), pyvips.version(1), pyvips.version(2), sep='.')"]))
    found.append("gunicorn " + capture([str(VENV_BIN / "gunicorn"), "--version"]).split()[-1].strip(")"))
    if alcedo:
        found.append("alcedo " + capture([alcedo, "--version"]))
    return ", ".join(found)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--inputs", required=True, type=pathlib.Path)
    parser.add_argument("--results", required=True, type=pathlib.Path)
    parser.add_argument("--alcedo")
    args = parser.parse_args()
    duration = int(os.environ.get("BENCH_DURATION", "20"))
    connection_counts = [int(c) for c in os.environ.get("BENCH_CONNECTIONS", "2 8").split()]
    threads = int(os.environ.get("BENCH_THREADS", "2"))
    servers = os.environ.get("BENCH_SERVERS", "alcedo thumbor thumbor-close vips").split()
    workloads = os.environ.get("BENCH_WORKLOADS", "resize hits revalidate").split()
    notes = []
    if "alcedo" in servers and not args.alcedo:
        servers.remove("alcedo")
        notes.append("Alcedo not measured: no `alcedo` binary with a `serve` command was given.")
    args.results.mkdir(parents=True, exist_ok=True)
    work = pathlib.Path(tempfile.mkdtemp(prefix="alcedo-serve-bench-"))
    os.chmod(work, 0o755)
    origin = Origin(args.inputs.resolve(), work)
    results = []
    try:
        made = {"alcedo": lambda: Alcedo(origin, work, args.alcedo, shlex.split(os.environ.get("ALCEDO_ARGS", ""))), "thumbor": lambda: Thumbor(origin, work),
                "thumbor-close": lambda: ThumborClose(origin, work), "vips": lambda: VipsStandIn(origin, work)}
        for workload in workloads:
            for connections in connection_counts:
                for name in servers:
                    print(f"... {workload}, {connections} connections, {LABELS[name]}", file=sys.stderr, flush=True)
                    try:
                        result = run_one(made[name](), workload, connections, duration, threads, work)
                    except (RuntimeError, subprocess.CalledProcessError, json.JSONDecodeError, IndexError) as error:
                        detail = getattr(error, "stderr", "") or ""
                        notes.append(f"{LABELS[name]}, {workload}, {connections} conns: failed: {error} {detail}".strip())
                        print(f"    failed: {error} {detail}", file=sys.stderr, flush=True)
                        continue
                    if result["note"]:
                        notes.append(f"{LABELS[name]}, {workload}, {connections} conns: {result['note']}")
                    print(f"    {result['rps']:.0f} req/s, p99 {result['p99_ms']:.1f} ms, "
                          f"{result['cpu_ms_per_request']:.2f} CPU ms/req, {result['faults_per_request']:.0f} faults/req, "
                          f"{result['peak_rss_mb']:.0f} MB, "
                          f"{result['errors']} errors", file=sys.stderr, flush=True)
                    results.append(result)
    finally:
        origin.stop()
        shutil.rmtree(work, ignore_errors=True)
    stamp = datetime.datetime.now(datetime.timezone.utc)
    meta = {"date": stamp.strftime("%Y-%m-%d %H:%M UTC"), "alcedo_args": os.environ.get("ALCEDO_ARGS", ""), "dialect": DIALECT, "duration": duration, "threads": threads,
            "connections": connection_counts, "notes": notes, "versions": versions(args.alcedo),
            "machine": f"{os.cpu_count()} cores, {platform.system()} {platform.release()}"}
    save(args.results, stamp.strftime("serve-%Y%m%d-%H%M%S"), report(results, meta), meta, results)


def save(folder, name, text, meta, results):
    """Prints the Markdown report and writes it, with the raw figures as JSON, to `folder`."""
    print(text)
    (folder / f"{name}.md").write_text(text)
    (folder / f"{name}.json").write_text(json.dumps({"meta": meta, "results": results}, indent=2) + "\n")
    print(f"results: {folder / name}.md and .json", file=sys.stderr)


if __name__ == "__main__":
    main()
