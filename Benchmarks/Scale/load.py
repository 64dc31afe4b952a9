#!/usr/bin/env python3
"""Load generator of the multi-host harness (Benchmarks/Scale/run.sh), run inside its own network
namespace: THREADS threads send GETs for the URLs of a file, round-robin over the nodes, for
SECONDS seconds (or once through the list with --once), and print one JSON line: requests,
failures (anything but 200 or 304, and connection errors), p50 and p99 latency in ms, and the
first few failures.

  load.py NODES URLS THREADS SECONDS [--once] [--down FILE]
      NODES: comma-separated http://HOST:PORT; URLS: a file of paths, one a line; FILE: the
      HOST:PORT of nodes out of rotation, one a line, read again every 100 ms (as a load
      balancer's health check takes a node out).
"""
import http.client
import json
import sys
import threading
import time


def main():
    nodes = [n.replace("http://", "") for n in sys.argv[1].split(",")]
    paths = [line.strip() for line in open(sys.argv[2]) if line.strip()]
    threads = int(sys.argv[3])
    seconds = float(sys.argv[4])
    once = "--once" in sys.argv
    down_file = sys.argv[sys.argv.index("--down") + 1] if "--down" in sys.argv else None
    down = {"nodes": set(), "read": 0.0}

    def rotation():
        if down_file and time.monotonic() - down["read"] > 0.1:
            try:
                down["nodes"] = {line.strip() for line in open(down_file) if line.strip()}
            except OSError:
                down["nodes"] = set()
            down["read"] = time.monotonic()
        return [n for n in nodes if n not in down["nodes"]] or nodes
    lock = threading.Lock()
    latencies, failures, examples = [], [0], []
    counter = [0]
    deadline = time.monotonic() + seconds

    def worker():
        connections = {}
        while True:
            with lock:
                index = counter[0]
                counter[0] += 1
            if once and index >= len(paths):
                return
            if not once and time.monotonic() >= deadline:
                return
            path = paths[index % len(paths)]
            with lock:
                live = rotation()
            node = live[index % len(live)]
            start = time.monotonic()
            status = 0
            # A kept-alive connection the node closed meanwhile (it restarted) gets the GET once
            # more on a new connection, as browsers and load balancers do; any other error, or
            # the same on a new connection, is a failure.
            for attempt in (0, 1):
                reused = node in connections
                try:
                    connection = connections.get(node) or http.client.HTTPConnection(node, timeout=30)
                    connections[node] = connection
                    connection.request("GET", path)
                    response = connection.getresponse()
                    response.read()
                    status = response.status
                    break
                except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError) as error:
                    connections.pop(node, None)
                    status = repr(error)[:120]
                    if not reused:
                        break
                except Exception as error:  # a refused connection, a timeout: a failure
                    connections.pop(node, None)
                    status = repr(error)[:120]
                    break
            elapsed = (time.monotonic() - start) * 1000
            with lock:
                latencies.append(elapsed)
                if status not in (200, 304):
                    failures[0] += 1
                    if len(examples) < 5:
                        examples.append(f"{node}{path[:60]}: {status}")

    pool = [threading.Thread(target=worker) for _ in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    latencies.sort()

    def quantile(q):
        return round(latencies[min(len(latencies) - 1, int(q * len(latencies)))], 1) if latencies else None

    print(json.dumps({"requests": len(latencies), "failures": failures[0], "p50_ms": quantile(0.5),
                      "p99_ms": quantile(0.99), "failure_examples": examples}))


if __name__ == "__main__":
    main()
