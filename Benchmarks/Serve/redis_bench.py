#!/usr/bin/env python3
"""The serve benchmark's `redis` group: `alcedo serve` with and without the shared cache tier on
Redis, on the same nginx origin as bench.py, all on 127.0.0.1 and in one run.

(a) coalescing: 3 nodes, each with its own disk cache, get every request of a set of new
    variants in turn (round-robin, request i to node i mod 3, from a pool of client threads so
    that the requests for one variant reach the three nodes at about the same time), with the
    shared tier and without it: origin requests per distinct source (nginx's access log) and
    processing runs per distinct variant (the sum of `alcedo_processing_runs_total` over the
    nodes). Goal: 1 with the tier, 3 without.
(b) hits from Redis against hits from the local disk: one node whose memory caches hold nothing
    (`--result-cache-bytes 0 --memory-cache-bytes 0`), loaded by wrk with the 50 variants of the
    hits workload. Redis case: the variants were stored in Redis by another node; this node's
    cache folder cannot be created (its parent is a regular file), so its disk stays empty and
    every request is a Redis hit (a real node would write the hit back to its disk once). Disk
    case: the same node without Redis, the variants on its disk. Goal: a Redis hit costs under
    2x a disk hit (req/s and CPU per request, the node's alone and with redis-server's).
(c) a Redis node killed: one node with its disk, 3 Redis nodes, the resize workload (every
    request a new variant, so every request looks up, locks and stores in Redis); the same run
    twice, once with one Redis node killed (SIGKILL) half-way. Goal: no request over the
    breaker bound: the slowest request of the run with the kill at most the slowest of the run
    without it plus the Redis timeout (`--redis-timeout`, 50 ms): a dead node costs no wait.
(d) thumbor 7.8 with tc_redis' result storage (PyPI), when it installs and runs: (a) for 3
    thumbor processes sharing it (origin requests per source; thumbor has no processing counter).

Usage: redis_bench.py --inputs DIR --results DIR --alcedo PATH
Environment: BENCH_DURATION (seconds of wrk per run, default 20), REDIS_BENCH_CONNECTIONS (wrk
connections, default 8), BENCH_THREADS (wrk threads, default 2), REDIS_BENCH_PARTS (default
"coalesce hits kill thumbor")."""
import argparse
import collections
import concurrent.futures
import datetime
import json
import os
import pathlib
import platform
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

import bench
from bench import CLOCK_TICKS, HERE, VENV_BIN, cpu_ticks, free_port, http_get, process_tree, stop_group, wait_until

REDIS_NODES = 3
NODES = 3                      # alcedo serve nodes in (a)
COALESCE_WIDTHS = (250, 500)   # (a): 50 sources x 2 widths = 100 new variants
COALESCE_REPEATS = 6           # (a): requests per variant, two per node
COALESCE_CLIENTS = 12          # (a): client threads
REDIS_TIMEOUT_MS = 50          # alcedo serve's --redis-timeout default


# ---- Redis ---------------------------------------------------------------------------------

class RedisServer:
    """A redis-server of the benchmark's own: loopback, no persistence, `allkeys-lru`."""

    def __init__(self, work, index):
        self.port = free_port()
        self.folder = work / f"redis-{index}"
        self.folder.mkdir(parents=True, exist_ok=True)
        self.process = None
        self.start()

    @property
    def url(self):
        return f"redis://127.0.0.1:{self.port}"

    def start(self):
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(self.folder), "--daemonize", "no", "--loglevel", "warning",
             "--maxmemory", "1gb", "--maxmemory-policy", "allkeys-lru"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        wait_until(lambda: self.command("PING") == "PONG", 10, "redis-server")

    def command(self, *words):
        """Sends one command; returns the first reply line without its type byte."""
        request = f"*{len(words)}\r\n" + "".join(f"${len(w)}\r\n{w}\r\n" for w in words)
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as sock:
            sock.sendall(request.encode())
            reply = b""
            while not reply.endswith(b"\r\n"):
                chunk = sock.recv(4096)
                if not chunk:
                    break
                reply += chunk
        return reply.decode(errors="replace").split("\r\n", 1)[0][1:]

    def stats(self):
        """{field: value} of `INFO stats` (keyspace_hits, keyspace_misses...)."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as sock:
            sock.sendall(b"*2\r\n$4\r\nINFO\r\n$5\r\nstats\r\n")
            data = b""
            while True:
                chunk = sock.recv(65536)
                data += chunk
                head, _, body = data.partition(b"\r\n")
                if not chunk or (head.startswith(b"$") and len(body) >= int(head[1:]) + 2):
                    break
        fields = {}
        for line in data.decode(errors="replace").splitlines()[1:]:
            name, _, value = line.partition(":")
            fields[name] = value.strip()
        return fields

    def keys(self):
        return int(self.command("DBSIZE"))

    def kill9(self):
        if self.process and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait(10)

    def ensure_running(self):
        if self.process is None or self.process.poll() is not None:
            self.start()

    def stop(self):
        if self.process:
            stop_group(self.process)


# ---- alcedo serve nodes --------------------------------------------------------------------

class Node(bench.Alcedo):
    """`alcedo serve` with extra flags; `disk=False` points its cache folder under a regular
    file, so that nothing can be stored or found on its disk."""

    def __init__(self, origin, work, binary, extra=(), disk=True):
        super().__init__(origin, work, binary)
        self.extra, self.disk = list(extra), disk

    def command(self, workload, folder):
        command = super().command(workload, folder)
        if not self.disk:
            blocker = folder / "not-a-folder"
            blocker.write_text("the cache folder of this node is under a regular file: its disk stays empty\n")
            command[command.index("--cache-dir") + 1] = str(blocker / "cache")
        return command + self.extra

    def metrics(self):
        """{metric line name (with labels): value} from /metrics."""
        request = urllib.request.Request(self.base + "/metrics")
        with urllib.request.urlopen(request, timeout=30) as response:
            text = response.read().decode()
        values = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                name, _, value = line.rpartition(" ")
                try:
                    values[name] = float(value)
                except ValueError:
                    pass
        return values


def redis_flags(servers):
    flags = []
    for server in servers:
        flags += ["--redis", server.url]
    return flags


def flush(servers):
    for server in servers:
        server.ensure_running()
        server.command("FLUSHALL")


def access_lines(log):
    try:
        return log.read_text().splitlines()
    except FileNotFoundError:
        return []


def origin_counts(lines):
    """Requests per path in nginx access-log lines."""
    counts = collections.Counter()
    for line in lines:
        match = re.search(r'"GET (\S+) HTTP', line)
        if match:
            counts[match.group(1)] += 1
    return counts


# ---- (a) coalescing ------------------------------------------------------------------------

def coalesce_requests(names):
    """[(path-maker argument, node index)]: every variant COALESCE_REPEATS times in a row,
    request i to node i mod NODES."""
    order, i = [], 0
    for width in COALESCE_WIDTHS:
        for name in names:
            for _ in range(COALESCE_REPEATS):
                order.append((name, width, i % NODES))
                i += 1
    return order


def drive(nodes, order):
    def fetch(item):
        name, width, index = item
        node = nodes[index]
        return http_get(node.base + node.path(name, width), timeout=120)[0]
    with concurrent.futures.ThreadPoolExecutor(COALESCE_CLIENTS) as pool:
        return collections.Counter(pool.map(fetch, order))


def round_robin(nodes, origin, log, redis, observe):
    """Starts `nodes` (Redis emptied first), sends them the requests of (a) and stops them.
    Returns (requests, statuses, seconds, origin requests per path, load before, observed):
    `observe(nodes)` is called before and after the requests, while the nodes run."""
    flush(redis)
    before = len(access_lines(log))
    load_before = os.getloadavg()[0]
    try:
        for node in nodes:
            node.start("coalesce")
        order = coalesce_requests(origin.names)
        first = observe(nodes)
        started = time.monotonic()
        statuses = drive(nodes, order)
        seconds = time.monotonic() - started
        observed = (first, observe(nodes))
    finally:
        for node in nodes:
            node.stop()
    return order, statuses, seconds, origin_counts(access_lines(log)[before:]), load_before, observed


def part_coalesce(binary, origin, log, redis, work, shared):
    extra = redis_flags(redis) if shared else []
    nodes = [Node(origin, work, binary, extra) for _ in range(NODES)]
    order, statuses, seconds, counts, load_before, (_, metrics) = round_robin(
        nodes, origin, log, redis, lambda nodes: [node.metrics() for node in nodes])
    variants = len(COALESCE_WIDTHS) * len(origin.names)
    runs = sum(m.get("alcedo_processing_runs_total", 0) for m in metrics)
    per_node = [int(m.get("alcedo_processing_runs_total", 0)) for m in metrics]
    return {
        "part": "coalesce", "shared": shared, "requests": len(order), "statuses": dict(statuses),
        "variants": variants, "sources": len(origin.names), "seconds": seconds,
        "origin_requests": sum(counts.values()), "origin_per_source": sum(counts.values()) / len(origin.names),
        "origin_max_per_source": max(counts.values()) if counts else 0,
        "processing_runs": runs, "runs_per_variant": runs / variants, "runs_per_node": per_node,
        "lock_waits": sum(m.get("alcedo_shared_cache_lock_waits_total", 0) for m in metrics),
        "lock_wait_timeouts": sum(m.get("alcedo_shared_cache_lock_wait_timeouts_total", 0) for m in metrics),
        "shared_hits": sum(m.get("alcedo_shared_cache_hits_total", 0) for m in metrics),
        "load_before": load_before,
    }


# ---- wrk -----------------------------------------------------------------------------------

def wrk(base, mode, paths, connections, duration, threads, during=None):
    command = ["wrk", "-t", str(min(threads, connections)), "-c", str(connections), "-d", f"{duration}s",
               "--timeout", "10s", "-s", str(HERE / "load.lua"), base, "--", mode, str(paths),
               str(min(threads, connections))]
    timer = threading.Timer(duration / 2, during) if during else None
    if timer:
        timer.start()
    try:
        output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    finally:
        if timer:
            timer.cancel()
    return json.loads([line for line in output.splitlines() if line.startswith("{")][-1])


def measured(node, redis, run):
    """Runs `run()` (a wrk run) and returns its summary with the CPU ticks of the node and of
    the redis-servers over it."""
    def redis_ticks():
        return sum(cpu_ticks(process_tree(r.process.pid)) for r in redis if r.process and r.process.poll() is None)
    node_before, redis_before = cpu_ticks(process_tree(node.process.pid)), redis_ticks()
    summary = run()
    node_after, redis_after = cpu_ticks(process_tree(node.process.pid)), redis_ticks()
    requests = summary["requests"]
    seconds = summary["duration_us"] / 1e6
    cpu = lambda ticks: ticks / CLOCK_TICKS * 1000 / requests if requests else None
    return {
        "requests": requests, "seconds": seconds, "rps": requests / seconds if seconds else 0,
        "p50_ms": summary["latency_us"]["p50"] / 1000, "p99_ms": summary["latency_us"]["p99"] / 1000,
        "max_ms": summary["latency_us"]["max"] / 1000, "errors": sum(summary["errors"].values()),
        "error_detail": summary["errors"],
        "cpu_ms_per_request": cpu(node_after - node_before),
        "redis_cpu_ms_per_request": cpu(max(0, redis_after - redis_before)),
    }


# ---- (b) hits from Redis vs from disk --------------------------------------------------------

def part_hits(binary, origin, redis, work, connections, duration, threads):
    flush(redis)
    no_memory = ["--result-cache-bytes", "0", "--memory-cache-bytes", "0"]
    rows = []
    filler = Node(origin, work, binary, redis_flags(redis)).start("hits")
    try:
        paths = [filler.path(name, bench.HIT_WIDTH) for name in origin.names]
        statuses = drive_paths(filler, paths)
        if set(statuses) != {200}:
            raise RuntimeError(f"filler node: statuses {statuses}")
    finally:
        filler.stop()
    keys = sum(r.keys() for r in redis)
    file = work / "hits.paths"
    file.write_text("\n".join(paths) + "\n")
    for case in ("redis", "disk"):
        node = Node(origin, work, binary, (redis_flags(redis) if case == "redis" else []) + no_memory,
                    disk=(case == "disk")).start("hits")
        try:
            for _ in range(2):
                statuses = drive_paths(node, paths)
                if set(statuses) != {200}:
                    raise RuntimeError(f"{case} node: statuses {statuses}: {node.log_text()}")
            before = node.metrics()
            load_before = os.getloadavg()[0]
            row = measured(node, redis if case == "redis" else [],
                           lambda: wrk(node.base, "repeat", file, connections, duration, threads))
            after = node.metrics()
        finally:
            node.stop()
        hits = after.get("alcedo_shared_cache_hits_total", 0) - before.get("alcedo_shared_cache_hits_total", 0)
        row.update({"part": "hits", "case": case, "connections": connections, "load_before": load_before,
                    "processing_runs": after.get("alcedo_processing_runs_total", 0),
                    "shared_hits_during_run": hits, "redis_keys": keys})
        rows.append(row)
    return rows


def drive_paths(node, paths):
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        return sorted(set(pool.map(lambda path: http_get(node.base + path, timeout=120)[0], paths)))


# ---- (c) a Redis node killed -----------------------------------------------------------------

def part_kill(binary, origin, redis, work, connections, duration, threads):
    rows = []
    for kill in (False, True):
        flush(redis)
        node = Node(origin, work, binary, redis_flags(redis)).start("resize")
        victim = redis[1]
        try:
            paths, _ = bench.warm(node, "resize", work)
            before = node.metrics()
            load_before = os.getloadavg()[0]
            row = measured(node, redis, lambda: wrk(node.base, "variants", paths, connections, duration, threads,
                                                    during=victim.kill9 if kill else None))
            after = node.metrics()
        finally:
            node.stop()
            victim.ensure_running()
        row.update({"part": "kill", "killed": kill, "connections": connections, "load_before": load_before,
                    "shared_errors": after.get("alcedo_shared_cache_errors_total", 0)
                    - before.get("alcedo_shared_cache_errors_total", 0),
                    "statuses": {k: v for k, v in after.items() if k.startswith("alcedo_requests_total")}})
        rows.append(row)
    return rows


# ---- (d) thumbor with tc_redis ---------------------------------------------------------------

def tc_redis_available():
    result = subprocess.run([sys.executable, "-c", "import tc_redis.result_storages.redis_result_storage"],
                            capture_output=True, text=True)
    return result.returncode == 0, (result.stderr.strip().splitlines() or [""])[-1]


class ThumborRedis(bench.Thumbor):
    """thumbor 7.8, one process, file storage for sources, tc_redis' result storage."""
    name = "thumbor-redis"

    def __init__(self, origin, work, redis):
        super().__init__(origin, work)
        self.redis = redis

    def command(self, workload, folder):
        config = folder / "thumbor.conf"
        config.write_text(f"""LOADER = 'thumbor.loaders.http_loader'
STORAGE = 'thumbor.storages.file_storage'
FILE_STORAGE_ROOT_PATH = '{folder / "storage"}'
RESULT_STORAGE = 'tc_redis.result_storages.redis_result_storage'
REDIS_RESULT_STORAGE_SERVER_HOST = '127.0.0.1'
REDIS_RESULT_STORAGE_SERVER_PORT = {self.redis.port}
REDIS_RESULT_STORAGE_SERVER_DB = 0
REDIS_RESULT_STORAGE_SERVER_PASSWORD = None
RESULT_STORAGE_STORES_UNSAFE = True
ALLOW_UNSAFE_URL = True
QUALITY = 80
""")
        return [str(VENV_BIN / "thumbor"), "--ip", "127.0.0.1", "--port", str(self.port), "--conf", str(config),
                "--processes", "1", "-l", "error"]


def part_thumbor(origin, log, redis, work):
    nodes = [ThumborRedis(origin, work, redis[0]) for _ in range(NODES)]
    order, statuses, _, counts, load_before, (stats_before, stats_after) = round_robin(
        nodes, origin, log, redis, lambda nodes: redis[0].stats())
    keys = redis[0].keys()
    delta = lambda field: int(stats_after.get(field, 0)) - int(stats_before.get(field, 0))
    # Each result-storage miss (a GET finding nothing) is followed by a processing run.
    misses = delta("keyspace_misses")
    return {"part": "thumbor", "requests": len(order), "statuses": dict(statuses), "redis_keys": keys,
            "redis_hits": delta("keyspace_hits"), "redis_misses": misses,
            "runs_per_variant": misses / (len(COALESCE_WIDTHS) * len(origin.names)),
            "variants": len(COALESCE_WIDTHS) * len(origin.names),
            "origin_requests": sum(counts.values()), "origin_per_source": sum(counts.values()) / len(origin.names),
            "load_before": load_before}


# ---- the report ----------------------------------------------------------------------------

def report(results, meta):
    lines = [f"# Serve benchmark, redis group, {meta['date']}", "",
             f"{meta['machine']}; wrk {meta['duration']} s per run, {meta['connections']} connections, "
             f"{meta['threads']} threads; {REDIS_NODES} redis-server nodes; load average before each run in brackets.", "",
             f"Versions: {meta['versions']}", ""]
    for note in meta["notes"]:
        lines.append(f"- {note}")
    if meta["notes"]:
        lines.append("")
    coalesce = [r for r in results if r["part"] == "coalesce"]
    if coalesce:
        lines += [f"## (a) {NODES} nodes, {COALESCE_REPEATS} requests per new variant round-robin", "",
                  "| nodes | requests (statuses) | origin requests per source | processing runs per variant | runs per node | lock waits (timeouts) | wall s | load |",
                  "|---|---|---|---|---|---|---|---|"]
        for r in coalesce:
            label = "with the shared tier" if r["shared"] else "without"
            lines.append(f"| {label} | {r['requests']} ({r['statuses']}) | {r['origin_per_source']:.2f} "
                         f"(max {r['origin_max_per_source']}) | {r['runs_per_variant']:.2f} | {r['runs_per_node']} | "
                         f"{r['lock_waits']:.0f} ({r['lock_wait_timeouts']:.0f}) | {r['seconds']:.1f} | {r['load_before']:.1f} |")
        with_tier = next((r for r in coalesce if r["shared"]), None)
        without = next((r for r in coalesce if not r["shared"]), None)
        if with_tier and without:
            met = with_tier["runs_per_variant"] == 1 and with_tier["origin_per_source"] == 1
            lines += ["", f"Goal: exactly 1 origin request per source and 1 processing run per variant with the tier "
                      f"({with_tier['origin_per_source']:.2f}, {with_tier['runs_per_variant']:.2f}): {'met' if met else 'NOT met'}; "
                      f"without it {without['origin_per_source']:.2f} and {without['runs_per_variant']:.2f} (expected 3)."]
        lines.append("")
    thumbor = [r for r in results if r["part"] == "thumbor"]
    for r in thumbor:
        lines += ["## (d) thumbor 7.8 with tc_redis' result storage, 3 processes, the same requests as (a)", "",
                  f"{r['requests']} requests ({r['statuses']}), origin requests per source {r['origin_per_source']:.2f}, "
                  f"Redis GETs {r['redis_hits']} hits and {r['redis_misses']} misses, so about "
                  f"{r['runs_per_variant']:.2f} processing runs per variant (each miss is processed), "
                  f"{r['redis_keys']} keys in Redis for {r['variants']} variants (load {r['load_before']:.1f}).", ""]
    hits = {r["case"]: r for r in results if r["part"] == "hits"}
    if hits:
        lines += ["## (b) hits: Redis vs local disk, memory caches off", "",
                  "| hits from | req/s | p50 ms | p99 ms | node CPU ms/req | + redis-server CPU ms/req | shared hits in run | processing runs | errors | load |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for case in ("redis", "disk"):
            r = hits.get(case)
            if r:
                lines.append(f"| {case} | {r['rps']:.0f} | {r['p50_ms']:.2f} | {r['p99_ms']:.2f} | {r['cpu_ms_per_request']:.3f} | "
                             f"{r['redis_cpu_ms_per_request']:.3f} | {r['shared_hits_during_run']:.0f} | {r['processing_runs']:.0f} | "
                             f"{r['errors']} | {r['load_before']:.1f} |")
        if "redis" in hits and "disk" in hits:
            r, d = hits["redis"], hits["disk"]
            cpu_ratio = (r["cpu_ms_per_request"] + r["redis_cpu_ms_per_request"]) / d["cpu_ms_per_request"]
            node_ratio = r["cpu_ms_per_request"] / d["cpu_ms_per_request"]
            rps_ratio = d["rps"] / r["rps"] if r["rps"] else float("inf")
            met = cpu_ratio < 2 and rps_ratio < 2
            lines += ["", f"Goal: a Redis hit costs under 2x a disk hit: {'met' if met else 'NOT met'} "
                      f"(CPU per request {cpu_ratio:.2f}x with redis-server's, {node_ratio:.2f}x the node's alone; "
                      f"disk req/s / Redis req/s {rps_ratio:.2f}x)."]
        lines.append("")
    kill = {r["killed"]: r for r in results if r["part"] == "kill"}
    if kill:
        lines += [f"## (c) resize workload, {REDIS_NODES} Redis nodes, one killed (SIGKILL) half-way", "",
                  "| run | req/s | p50 ms | p99 ms | max ms | shared-tier errors | errors | load |", "|---|---|---|---|---|---|---|---|"]
        for killed in (False, True):
            r = kill.get(killed)
            if r:
                lines.append(f"| {'one Redis node killed' if killed else 'no kill'} | {r['rps']:.1f} | {r['p50_ms']:.0f} | "
                             f"{r['p99_ms']:.0f} | {r['max_ms']:.0f} | {r['shared_errors']:.0f} | {r['errors']} | {r['load_before']:.1f} |")
        if True in kill and False in kill:
            bound = kill[False]["max_ms"] + REDIS_TIMEOUT_MS
            met = kill[True]["max_ms"] <= bound and kill[True]["errors"] == 0
            lines += ["", f"Goal: no request over the breaker bound (the slowest request without the kill + the "
                      f"{REDIS_TIMEOUT_MS} ms Redis timeout = {bound:.0f} ms), no failed request: {'met' if met else 'NOT met'} "
                      f"(max {kill[True]['max_ms']:.0f} ms, p99 {kill[True]['p99_ms']:.0f} vs {kill[False]['p99_ms']:.0f} ms)."]
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--inputs", required=True, type=pathlib.Path)
    parser.add_argument("--results", required=True, type=pathlib.Path)
    parser.add_argument("--alcedo", required=True)
    args = parser.parse_args()
    duration = int(os.environ.get("BENCH_DURATION", "20"))
    connections = int(os.environ.get("REDIS_BENCH_CONNECTIONS", "8"))
    threads = int(os.environ.get("BENCH_THREADS", "2"))
    parts = os.environ.get("REDIS_BENCH_PARTS", "coalesce hits kill thumbor").split()
    notes = []
    args.results.mkdir(parents=True, exist_ok=True)
    work = pathlib.Path(tempfile.mkdtemp(prefix="alcedo-redis-bench-"))
    os.chmod(work, 0o755)
    log = work / "origin-access.log"
    origin = bench.Origin(args.inputs.resolve(), work, access_log=log)
    redis = []
    results = []
    try:
        redis = [RedisServer(work, i) for i in range(REDIS_NODES)]
        if "coalesce" in parts:
            for shared in (True, False):
                print(f"... (a) {NODES} nodes {'with' if shared else 'without'} the shared tier", file=sys.stderr, flush=True)
                r = part_coalesce(args.alcedo, origin, log, redis, work, shared)
                print(f"    origin/source {r['origin_per_source']:.2f}, runs/variant {r['runs_per_variant']:.2f}",
                      file=sys.stderr, flush=True)
                results.append(r)
        if "thumbor" in parts:
            ok, why = tc_redis_available()
            if ok:
                print("... (d) thumbor with tc_redis", file=sys.stderr, flush=True)
                try:
                    r = part_thumbor(origin, log, redis, work)
                    print(f"    origin/source {r['origin_per_source']:.2f}, statuses {r['statuses']}", file=sys.stderr, flush=True)
                    results.append(r)
                except RuntimeError as error:
                    notes.append(f"thumbor with tc_redis failed: {error}")
            else:
                notes.append(f"thumbor with tc_redis not measured: tc_redis does not import in the benchmark's venv ({why})")
        if "hits" in parts:
            print("... (b) hits from Redis and from disk", file=sys.stderr, flush=True)
            for r in part_hits(args.alcedo, origin, redis, work, connections, duration, threads):
                print(f"    {r['case']}: {r['rps']:.0f} req/s, {r['cpu_ms_per_request']:.3f} + {r['redis_cpu_ms_per_request']:.3f} CPU ms/req",
                      file=sys.stderr, flush=True)
                results.append(r)
        if "kill" in parts:
            print("... (c) a Redis node killed half-way", file=sys.stderr, flush=True)
            for r in part_kill(args.alcedo, origin, redis, work, connections, duration, threads):
                print(f"    killed={r['killed']}: p99 {r['p99_ms']:.0f} ms, max {r['max_ms']:.0f} ms, errors {r['errors']}",
                      file=sys.stderr, flush=True)
                results.append(r)
    finally:
        for server in redis:
            server.stop()
        origin.stop()
        shutil.rmtree(work, ignore_errors=True)
    stamp = datetime.datetime.now(datetime.timezone.utc)
    redis_version = subprocess.run(["redis-server", "--version"], capture_output=True, text=True).stdout.split()
    meta = {"date": stamp.strftime("%Y-%m-%d %H:%M UTC"), "duration": duration, "threads": threads,
            "connections": connections, "notes": notes,
            "versions": bench.versions(args.alcedo) + ", redis " + next((w[2:] for w in redis_version if w.startswith("v=")), "?"),
            "machine": f"{os.cpu_count()} cores, {platform.system()} {platform.release()}"}
    bench.save(args.results, stamp.strftime("redis-%Y%m%d-%H%M%S"), report(results, meta), meta, results)


if __name__ == "__main__":
    main()
