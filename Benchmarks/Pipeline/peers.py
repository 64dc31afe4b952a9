#!/usr/bin/env python3
"""The peers of the pipeline benchmark: the same work as Alcedo's retrieve (download from the
loopback server, decode, fit in 256x256, JPEG q85, write to a cache folder) with Pillow +
requests (one at a time, and on 4 threads, the usual way to speed it up) and pyvips.
Usage: peers.py BASE_URL REPETITIONS NAME... Prints one JSON object of median seconds per batch."""
import concurrent.futures
import hashlib
import io
import json
import os
import shutil
import sys
import tempfile
import threading
import time

import requests
from PIL import Image

try:
    import pyvips
except Exception:  # pyvips is optional
    pyvips = None

base, repetitions, names = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
urls = [base + name for name in names]


def cache_path(folder, url):
    return os.path.join(folder, hashlib.sha256(url.encode()).hexdigest() + ".jpg")


def pillow_one(session, url, folder):
    body = session.get(url).content
    image = Image.open(io.BytesIO(body))
    image.thumbnail((256, 256))
    image.save(cache_path(folder, url), quality=85)
    assert max(image.size) == 256


def pillow(folder):
    with requests.Session() as session:
        for url in urls:
            pillow_one(session, url, folder)


local = threading.local()


def pillow_threaded_one(url, folder):
    if not hasattr(local, "session"):
        local.session = requests.Session()
    pillow_one(local.session, url, folder)


def pillow_threads(folder):
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(lambda url: pillow_threaded_one(url, folder), urls))
    local.__dict__.clear()


def vips(folder):
    with requests.Session() as session:
        for url in urls:
            body = session.get(url).content
            thumb = pyvips.Image.thumbnail_buffer(body, 256, height=256)
            thumb.jpegsave(cache_path(folder, url), Q=85)
            assert max(thumb.width, thumb.height) == 256


def timed(run):
    samples = []
    for _ in range(repetitions):
        folder = tempfile.mkdtemp(prefix="pipeline-peer-")
        try:
            start = time.perf_counter()
            run(folder)
            samples.append(time.perf_counter() - start)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    samples.sort()
    return samples[len(samples) // 2]


results = {"pillow": timed(pillow), "pillow_threads": timed(pillow_threads)}
if pyvips is not None:
    results["pyvips"] = timed(vips)
print(json.dumps(results, sort_keys=True))
