"""Downloads the same files with Python requests and with curl, sequentially and with a
fixed number at a time, and prints one JSON line per client and concurrency (median ms).
Usage: peers.py BASE_URL NAMES_FILE CONCURRENCY RUNS"""
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import requests

base, names_file, concurrency, runs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
urls = [f"{base}/{name}" for name in open(names_file).read().split()]


def median(values):
    return sorted(values)[len(values) // 2]


def report(client, samples, nbytes):
    print(json.dumps({"client": client, "concurrency": concurrency, "files": len(urls), "bytes": nbytes,
                      "median_ms": median(samples), "samples_ms": samples}, sort_keys=True), flush=True)


# requests: one Session (keep-alive) per worker thread, as a careful client would do.
local = threading.local()


def fetch(url):
    session = getattr(local, "session", None)
    if session is None:
        session = local.session = requests.Session()
    response = session.get(url)
    response.raise_for_status()
    return len(response.content)


samples, nbytes = [], 0
for _ in range(runs):
    start = time.perf_counter()
    if concurrency == 1:
        nbytes = sum(fetch(url) for url in urls)
    else:
        with ThreadPoolExecutor(max_workers=concurrency) as pool:
            nbytes = sum(pool.map(fetch, urls))
    samples.append((time.perf_counter() - start) * 1000)
report("requests", samples, nbytes)

# curl: one process for all URLs (connection reuse), --parallel for concurrency > 1.
with tempfile.NamedTemporaryFile("w", suffix=".curlrc", delete=False) as config:
    for url in urls:
        config.write(f'url = "{url}"\noutput = "/dev/null"\n')
arguments = ["curl", "-s", "-f", "--no-progress-meter", "-K", config.name]
if concurrency > 1:
    arguments[1:1] = ["--parallel", "--parallel-max", str(concurrency)]
samples = []
for _ in range(runs):
    start = time.perf_counter()
    subprocess.run(arguments, check=True, stdout=subprocess.DEVNULL)
    samples.append((time.perf_counter() - start) * 1000)
os.unlink(config.name)
report("curl", samples, nbytes)
