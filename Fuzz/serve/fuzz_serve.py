"""Fuzzes `alcedo serve` from outside: the URL fuzzer (urlfuzz.py) and the source-response
fuzzer (origin.py) against one server process, watched for deaths, hangs and memory growth.

    fuzz_serve.py --binary PATH [--seconds S] [--requests N] [--seed N] [--concurrency C]
    fuzz_serve.py --binary PATH --replay FILE...     send the requests of reproducer or corpus files

Findings are written to --artifacts (default fuzz-artifacts/) as reproducer files that --replay
reads; the exit status is 1 when there is any. See Fuzz/README.md.
"""
import argparse
import asyncio
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "../.."))
sys.path.insert(0, HERE)
import origin as origin_module  # noqa: E402
from urlfuzz import ODD_PORTS, Generator, Request, signed_target  # noqa: E402

KEY, SALT = b"fuzz-key", b"fuzz-salt"
# An answer's X-Alcedo-Error that would mean a connection or a name lookup off loopback was tried.
OFF_LOOPBACK = re.compile(rb"(?i)x-alcedo-error:[^\r\n]*(network is unreachable|unreachable|getaddrinfo|resolv|name or service|temporary failure in name)")


def signal_name(code):
    try:
        return signal.Signals(-code).name if code < 0 else f"exit {code}"
    except ValueError:
        return f"signal {-code}"


class Server:
    """One `alcedo serve` child process."""

    def __init__(self, binary, work, origin_port, seeds_dir, signed, number):
        self.work = work
        self.log_path = os.path.join(work, f"server-{number}.log")
        self.arguments = [
            "serve", "--host", "127.0.0.1", "--port", "0", "--cache-dir", os.path.join(work, f"cache-{number}"),
            "--allow-loopback-source-addresses", "--allowed-sources", "local://", "--allowed-sources", "s3://",
            "--local-root", seeds_dir, "--s3", "--s3-endpoint", f"http://127.0.0.1:{origin_port}",
            "--s3-region", "us-east-1", "--s3-path-style", "true",
            "--preset", "thumb=rs:fit:64:64", "--preset", "sharp=sh:0.7",
            "--watermark-path", os.path.join(ROOT, "Sources/alcedo/Demo/Samples/badge.png"),
            "--allow-security-options", "--download-timeout", "10", "--enable-debug-headers",
        ]
        # Sources: the origin, and the ports no socket can have (so that URLs with them reach the
        # HTTP client) on loopback hosts. Each prefix ends with "/": "http://127.0.0.1:" would let
        # http://127.0.0.1:1@elsewhere/ through (the host is what follows the "@").
        for port in [str(origin_port)] + ODD_PORTS:
            for host in ("127.0.0.1", "localhost", "[::1]"):
                self.arguments += ["--allowed-sources", f"http://{host}:{port}/"]
            self.arguments += ["--allowed-sources", f"https://127.0.0.1:{port}/"]
        if signed:
            self.arguments += ["--key", KEY.hex(), "--salt", SALT.hex()]
        env = dict(os.environ, AWS_ACCESS_KEY_ID="fuzz", AWS_SECRET_ACCESS_KEY="fuzz", ALCEDO_LOG_LEVEL="info")
        for name in list(env):
            if name.startswith("IMGPROXY_") or (name.startswith("ALCEDO_") and name != "ALCEDO_LOG_LEVEL"):
                del env[name]
        self.log = open(self.log_path, "wb")
        # FUZZ_SERVER_PREFIX: a command the server runs under (strace -f -e trace=connect -o FILE, to
        # check which addresses it connects to); the watched process is then that command.
        prefix = os.environ.get("FUZZ_SERVER_PREFIX", "").replace("{n}", str(number)).split()
        self.process = subprocess.Popen(prefix + [binary] + self.arguments, stdout=subprocess.PIPE, stderr=self.log, env=env,
                                        process_group=0)
        line = self.process.stdout.readline().decode(errors="replace")
        match = re.search(r"listening on http://([0-9.]+):(\d+)", line)
        if not match:
            self.process.kill()
            raise RuntimeError(f"alcedo serve did not start: {line!r}; see {self.log_path}")
        self.host, self.port = match.group(1), int(match.group(2))
        self.peak_rss = 0
        self.started = time.monotonic()

    def rss_mb(self):
        try:
            with open(f"/proc/{self.process.pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) / 1024
        except OSError:
            pass
        return 0

    def log_tail(self, lines=40):
        self.log.flush()
        with open(self.log_path, "rb") as f:
            return f.read()[-20000:].decode(errors="replace").splitlines()[-lines:]

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()


def complete(answer, head_only):
    """Whether `answer` holds a whole response (framed by Content-Length or chunked encoding);
    None when only the end of the connection can tell."""
    end = answer.find(b"\r\n\r\n")
    if end < 0:
        return False
    head = answer[:end].lower()
    body = answer[end + 4:]
    status = STATUS.match(answer)
    if head_only or (status and (status.group(1)[:1] == b"1" or status.group(1) in (b"204", b"304"))):
        return True
    length = re.search(rb"\r\ncontent-length:\s*(\d+)", head)
    if re.search(rb"\r\ntransfer-encoding:[^\r]*chunked", head):
        return body.endswith(b"0\r\n\r\n")
    if length:
        return len(body) >= int(length.group(1))
    return None


async def exchange(host, port, data, timeout, cap=80 << 20):
    """Sends `data`, reads one answer: until it is complete by its framing, or the server closes.
    Returns (bytes read, seconds, error)."""
    start = time.monotonic()
    reader = writer = None
    received = bytearray()
    # A HEAD answer has no body; nor, as Hummingbird writes it, has an answer to CONNECT (no
    # Content-Length, and the connection stays open).
    head_only = data.startswith((b"HEAD ", b"CONNECT "))
    try:
        async def run():
            nonlocal reader, writer
            reader, writer = await asyncio.open_connection(host, port, limit=1 << 20)

            async def write():
                # Beside the reading: a server may answer (and close) before a large request is sent.
                try:
                    writer.write(data)
                    await writer.drain()
                except (ConnectionError, OSError):
                    pass
            sending = asyncio.create_task(write())
            try:
                await read()
            finally:
                sending.cancel()

        async def read():
            while len(received) < cap:
                chunk = await reader.read(1 << 16)
                if not chunk:
                    break
                received.extend(chunk)
                if complete(received, head_only):
                    break
        await asyncio.wait_for(run(), timeout)
        return bytes(received), time.monotonic() - start, None
    except asyncio.TimeoutError:
        return bytes(received), time.monotonic() - start, "timeout"
    except (ConnectionError, OSError) as error:
        return bytes(received), time.monotonic() - start, type(error).__name__
    finally:
        if writer is not None:
            writer.close()


STATUS = re.compile(rb"^HTTP/1\.[01] (\d{3})")


class Run:
    def __init__(self, args):
        self.args = args
        self.work = tempfile.mkdtemp(prefix="alcedo-serve-fuzz-")
        self.artifacts = os.path.abspath(args.artifacts)
        os.makedirs(self.artifacts, exist_ok=True)
        self.findings = []
        self.stats = {"requests": 0, "url": 0, "origin": 0, "answered": 0, "closed without status": 0, "hangs": 0,
                      "deaths": 0, "statuses": {}, "off-loopback": 0, "health failures": 0}
        self.server_number = 0
        self.peak_rss = 0
        self.in_flight = {}
        self.recent = []
        self.cut_off = []
        self.seeds_dir = os.path.join(self.work, "seeds")
        self.pool = None

    # ------------------------------------------------------------ set-up

    def start_origin(self):
        folders = [os.path.join(ROOT, "Tests/AlcedoTests/Fixtures"), os.path.join(ROOT, "Sources/alcedo/Demo/Samples")]
        if self.args.extra_seeds:
            folders.append(self.args.extra_seeds)
        self.pool = origin_module.Pool(origin_module.load_pool(folders))
        # local:/// sources see the seed images too, under short names.
        os.makedirs(os.path.join(self.seeds_dir, "jpg"), exist_ok=True)
        for i, path in enumerate(self.pool.files[:400]):
            ext = origin_module.ext_of(path)
            link = os.path.join(self.seeds_dir, f"{i}.{ext}")
            if not os.path.exists(link):
                os.symlink(path, link)
        for name, target in (("a.png", 0), ("jpg/sample.jpg", 1)):
            jpgs = [p for p in self.pool.files if p.endswith((".png", ".jpg"))]
            if not os.path.exists(os.path.join(self.seeds_dir, name)):
                os.symlink(jpgs[target], os.path.join(self.seeds_dir, name))
        command = [sys.executable, os.path.join(HERE, "origin.py")]
        for folder in folders:
            command += ["--seeds", folder]
        if self.args.exclude_known:
            command.append("--exclude-known")
            origin_module.EXCLUDE_BELOW_100 = True
        self.origin_log = open(os.path.join(self.work, "origin.log"), "wb")
        self.origin = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=self.origin_log, process_group=0)
        line = self.origin.stdout.readline().decode()
        match = re.search(r"127\.0\.0\.1:(\d+)", line)
        if not match:
            raise RuntimeError(f"the origin did not start: {line!r}")
        self.origin_port = int(match.group(1))
        print(f"fuzz-serve: {line.strip()}", flush=True)

    def origin_log_tail(self, lines=120):
        self.origin_log.flush()
        with open(self.origin_log.name, "rb") as f:
            f.seek(max(0, os.path.getsize(self.origin_log.name) - 200_000))
            return f.read().decode(errors="replace").splitlines()[-lines:]

    def start_server(self, signed):
        self.server_number += 1
        self.server = Server(self.args.binary, self.work, self.origin_port, self.seeds_dir, signed, self.server_number)
        self.signed = signed
        return self.server

    # ------------------------------------------------------------ findings

    def finding(self, kind, summary, requests, extra=(), log=None):
        self.findings.append((kind, summary))
        name = f"serve-{kind}-{len(self.findings)}-seed{self.args.seed}.txt"
        path = os.path.join(self.artifacts, name)
        if log:
            with open(path[:-4] + ".log", "wb") as f:
                f.write(log)
        lines = [f"# alcedo serve fuzz finding: {kind}: {summary}",
                 f"# server: alcedo {' '.join(self.server.arguments)}",
                 f"# origin: Fuzz/serve/origin.py (recipes are functions of their number; --describe N prints one)",
                 f"# replay: scripts/fuzz-serve.sh --replay {os.path.relpath(path, ROOT)}", ""]
        recipes = set()
        for req in requests:
            lines.append(f"# request {req.index} ({req.kind}){' signed' if req.sign_with else ''}: " + "; ".join(req.notes)[:2000])
            lines.append(req.line)
            recipes.update(int(m) for m in re.findall(rb"/o/(-?\d+)/", req.target))
        for number in sorted(recipes):
            lines.append("")
            recipe = origin_module.recipe(number, self.pool, self.origin_port)
            lines += ["# " + note for note in recipe.notes]
            sent = b"".join(a[1] for a in recipe.actions if a[0] == "send")
            if all(a[0] in ("send", "close") for a in recipe.actions) and len(sent) < 4096:
                from urlfuzz import escape
                lines.append("# the same answer as a corpus line: GET /insecure/plain/{raw:" + escape(sent, False, braces=True) + "}")
        lines += [""] + ["# " + line for text in extra for line in str(text).splitlines()]
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        print(f"fuzz-serve: FINDING {kind}: {summary} -> {os.path.relpath(path)}", flush=True)

    # ------------------------------------------------------------ one request

    async def send(self, req):
        await self.ready.wait()
        server = self.server
        data = req.wire(self.origin_port, f"{server.host}:{server.port}")
        if req.sign_with:
            head, _, rest = data.partition(b" ")
            target, _, rest = rest.partition(b" HTTP/1.1")
            data = head + b" " + signed_target(target, *req.sign_with) + b" HTTP/1.1" + rest
        key = object()
        self.in_flight[key] = (req, time.monotonic())
        try:
            answer, seconds, error = await exchange(server.host, server.port, data, self.args.timeout)
        finally:
            self.in_flight.pop(key, None)
        if not answer and server.process.poll() is not None:
            # The server died before this request reached it: send it to the next one.
            await self.ready.wait()
            if self.server is not server:
                return await self.send(req)
        self.recent.append(req)
        del self.recent[:-50]
        if not STATUS.match(answer):
            # A request cut off: if the server is dying, it was in flight at the end.
            self.cut_off.append((req, time.monotonic()))
            del self.cut_off[:-200]
        self.stats["requests"] += 1
        self.stats[req.kind] += 1
        match = STATUS.match(answer)
        if self.args.verbose:
            print(f"{req.index}: {answer[:12]!r} {error or ''} {seconds:.2f}s {req.line[:150]}", flush=True)
        if match:
            self.stats["answered"] += 1
            code = match.group(1).decode()
            self.stats["statuses"][code] = self.stats["statuses"].get(code, 0) + 1
            head = answer.split(b"\r\n\r\n", 1)[0]
            if OFF_LOOPBACK.search(head):
                self.stats["off-loopback"] += 1
                self.finding("off-loopback", "an answer says a connection or lookup off loopback was tried", [req],
                             [head.decode(errors="replace")])
        if error == "timeout":
            if server.process.poll() is None and server is self.server:
                self.stats["hangs"] += 1
                self.finding("hang", f"no complete answer after {self.args.timeout} s ({len(answer)} bytes read)", [req],
                             [answer[:300].decode(errors="replace")])
        elif not match:
            self.stats["closed without status"] += 1

    # ------------------------------------------------------------ watching

    async def watch(self, stop):
        last_health = time.monotonic()
        health_failures = 0
        while not stop.is_set():
            server = self.server
            code = server.process.poll()
            if code is not None:
                await self.died(server, code)
                continue
            rss = server.rss_mb()
            if self.args.verbose and rss > self.peak_rss + 100:
                print(f"fuzz-serve: RSS {rss:.0f} MB with in flight: "
                      + ", ".join(f"{r.index} {r.line[:100]}" for r, _ in self.in_flight.values()), flush=True)
            self.peak_rss = max(self.peak_rss, rss)
            if rss > self.args.rss_mb and not getattr(server, "memory_reported", False):
                server.memory_reported = True
                self.finding("memory", f"RSS {rss:.0f} MB over the bound of {self.args.rss_mb} MB",
                             [r for r, _ in self.in_flight.values()] + self.recent[-20:])
            if time.monotonic() - last_health > 5:
                last_health = time.monotonic()
                answer, seconds, error = await exchange(server.host, server.port,
                                                        b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 10)
                if server.process.poll() is None and not answer.startswith(b"HTTP/1.1 200"):
                    health_failures += 1
                    self.stats["health failures"] += 1
                    if health_failures == 2:
                        self.finding("hang", f"/health did not answer 200 within 10 s twice ({error})",
                                     [r for r, _ in self.in_flight.values()] + self.recent[-20:])
                else:
                    health_failures = 0
            await asyncio.sleep(0.25)

    async def died(self, server, code):
        self.ready.clear()
        self.stats["deaths"] += 1
        now = time.monotonic()
        # In flight: the requests still waiting, and those cut off since the death began (the
        # backtrace takes seconds, then every connection is reset).
        flight = [item for item in self.cut_off if item[1] > now - 40] + sorted(self.in_flight.values(), key=lambda item: item[1])
        self.cut_off.clear()
        server.log.flush()
        with open(server.log_path, "rb") as f:
            log = f.read()
        fatal = [line for line in log.decode(errors="replace").splitlines() if "Fatal error" in line or "crashed" in line][:5]
        self.finding("death", f"the server ended with {signal_name(code)} after {now - server.started:.0f} s "
                     f"with {len(flight)} requests in flight",
                     [r for r, _ in flight] + [r for r in self.recent[-20:] if r not in [f for f, _ in flight]],
                     ["server log: the .log file beside this one", "origin log (last lines):"]
                     + self.origin_log_tail() + fatal, log=log)
        server.log.close()
        self.start_server(self.signed)
        self.ready.set()

    # ------------------------------------------------------------ phases

    async def phase(self, generator, first, count, deadline):
        stop = asyncio.Event()
        next_index = first
        end = first + count

        async def worker():
            nonlocal next_index
            while next_index < end and time.monotonic() < deadline:
                index = next_index
                next_index += 1
                kind = "origin" if random.Random(self.args.seed * 31 + index).random() < self.args.origin_share else "url"
                await self.send(generator.request(index, kind))

        watcher = asyncio.create_task(self.watch(stop))
        await asyncio.gather(*(worker() for _ in range(self.args.concurrency)))
        stop.set()
        await watcher
        return next_index

    async def fuzz(self):
        self.ready = asyncio.Event()
        self.ready.set()
        start = time.monotonic()
        total = self.args.requests
        signed_count = total * self.args.signed_share
        phases = [(False, int(total - signed_count), self.args.seconds * (1 - self.args.signed_share)),
                  (True, int(signed_count), self.args.seconds * self.args.signed_share)]
        index = 0
        for signed, count, seconds in phases:
            until = time.monotonic() + seconds
            self.start_server(signed)
            generator = Generator(ROOT, self.args.seed, (KEY, SALT) if signed else None)
            print(f"fuzz-serve: {'signed' if signed else 'open'} phase, requests {index}..{index + count}, "
                  f"server on port {self.server.port} (pid {self.server.process.pid})", flush=True)
            index = await self.phase(generator, index, count, until)
            if self.server.process.poll() is not None:
                await self.died(self.server, self.server.process.returncode)
            self.server.stop()
        self.elapsed = time.monotonic() - start

    async def replay(self, files):
        self.ready = asyncio.Event()
        self.ready.set()
        self.start_server(False)
        start = time.monotonic()
        for path in files:
            with open(path, encoding="utf-8") as f:
                requests = [Request.parse(line.rstrip("\n")) for line in f if line.strip() and not line.startswith("#")]
            for i, req in enumerate(requests):
                req.index, req.kind = i, "url"
            print(f"fuzz-serve: replaying {len(requests)} requests of {path}", flush=True)
            stop = asyncio.Event()
            watcher = asyncio.create_task(self.watch(stop))
            for req in requests:
                await self.send(req)
                await asyncio.sleep(0.05)
                if self.server.process.poll() is not None:
                    await self.died(self.server, self.server.process.returncode)
            stop.set()
            await watcher
        self.server.stop()
        self.elapsed = time.monotonic() - start

    def report(self):
        s = self.stats
        rate = s["requests"] / self.elapsed if self.elapsed else 0
        summary = {
            "seed": self.args.seed, "seconds": round(self.elapsed, 1), "requests": s["requests"],
            "url requests": s["url"], "origin requests": s["origin"], "requests/s": round(rate, 1),
            "answered with a status": s["answered"], "closed without status": s["closed without status"],
            "deaths": s["deaths"], "hangs": s["hangs"], "health failures": s["health failures"],
            "off-loopback attempts": s["off-loopback"], "peak RSS MB": round(self.peak_rss),
            "origin responses": self.origin_served(), "statuses": dict(sorted(s["statuses"].items())),
            "findings": len(self.findings),
        }
        print("fuzz-serve: " + json.dumps(summary), flush=True)
        with open(os.path.join(self.artifacts, f"serve-summary-seed{self.args.seed}.json"), "w") as f:
            json.dump(summary, f, indent=1)

    def origin_served(self):
        return getattr(self, "origin_recipes", None)

    def cleanup(self):
        if self.origin.poll() is None:
            self.origin.terminate()
            self.origin.wait()
        text = self.origin.stdout.read().decode(errors="replace")
        match = re.search(r"(\d+) recipe responses", text)
        if match:
            self.origin_recipes = int(match.group(1))
        if not self.args.keep:
            subprocess.run(["rm", "-rf", self.work])
        else:
            print(f"fuzz-serve: logs and caches kept in {self.work}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", required=True)
    parser.add_argument("--seconds", type=float, default=300)
    parser.add_argument("--requests", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--timeout", type=float, default=30, help="seconds an answer may take before it counts as a hang")
    parser.add_argument("--rss-mb", type=float, default=1536, help="RSS bound of the server process")
    parser.add_argument("--origin-share", type=float, default=0.3, help="share of requests whose source is a mutated origin response")
    parser.add_argument("--signed-share", type=float, default=0.15, help="share of requests against a server with --key/--salt")
    parser.add_argument("--artifacts", default=os.path.join(ROOT, "fuzz-artifacts"))
    parser.add_argument("--extra-seeds", help="a folder of more seed images")
    parser.add_argument("--replay", nargs="*")
    parser.add_argument("--exclude-known", action="store_true", help="leave out the origin answers of known findings")
    parser.add_argument("--verbose", action="store_true", help="print each answer's status")
    parser.add_argument("--keep", action="store_true", help="keep the server logs and caches")
    args = parser.parse_args()
    run = Run(args)
    run.start_origin()
    try:
        if args.replay:
            asyncio.run(run.replay(args.replay))
        else:
            asyncio.run(run.fuzz())
    finally:
        try:
            run.server.stop()
        except Exception:
            pass
        run.cleanup()
    run.report()
    return 1 if run.findings else 0


if __name__ == "__main__":
    sys.exit(main())
