"""The source-response fuzzer: a loopback origin that answers `alcedo serve`'s fetches with
mutated responses.

Routes (the same under /fz/, the bucket of the S3 endpoint, path style):
  /f/N/NAME   seed image N, answered correctly (200, its Content-Type, Content-Length)
  /a.jpg, /a.png   the first JPEG and PNG seed images (as the regression corpus's origin has them)
  /redirect?to=URL a 302 to URL (percent-decoded)
  /r/B64      the bytes B64 decodes to, as they are, then the connection closes
  /o/S/NAME   the response of recipe S: a pure function of the integer S, so a request that
              found something names its whole origin answer; `origin.py --describe S` prints it
  anything else: 404

Recipes mutate the status line (odd codes, 1xx before the answer, redirects without or with odd
Location values: loops, chains, out-of-range ports, other schemes), the header fields
(Content-Length missing, wrong, huge or doubled, chunked bodies with bad chunks, lying
Content-Type, doubled and huge fields, garbage validators and dates), the body (truncated,
empty, not an image, corrupted seed images of every format, header dimensions patched) and the
timing (slow, stalled, closed or reset mid-way).

Only loopback addresses appear in Location values with a usable port; every other host comes
with a port no socket can have or is refused by the source guard before a connection.
"""
import argparse
import asyncio
import base64
import gzip
import os
import random
import re
import signal
import socket
import struct
import sys
import time
import urllib.parse
import zlib

MIME = {
    "jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png", "gif": "image/gif", "webp": "image/webp",
    "avif": "image/avif", "heic": "image/heic", "tif": "image/tiff", "tiff": "image/tiff", "bmp": "image/bmp",
    "ico": "image/x-icon", "cur": "image/x-icon", "jxl": "image/jxl", "svg": "image/svg+xml",
}
IMAGE_EXTENSIONS = set(MIME)


def load_pool(folders, max_bytes=400_000):
    """The seed images: every image file under `folders`, sorted, so an index names one file."""
    files = []
    for folder in folders:
        for root, _, names in os.walk(folder):
            for name in names:
                ext = name.rsplit(".", 1)[-1].lower()
                path = os.path.join(root, name)
                if ext in IMAGE_EXTENSIONS and os.path.getsize(path) <= max_bytes:
                    files.append(path)
    files.sort()
    return files


class Pool:
    def __init__(self, files):
        self.files = files
        self._cache = {}

    def __len__(self):
        return len(self.files)

    def get(self, index):
        path = self.files[index % len(self.files)]
        data = self._cache.get(path)
        if data is None:
            with open(path, "rb") as f:
                data = f.read()
            self._cache[path] = data
        return path, data


def ext_of(path):
    return path.rsplit(".", 1)[-1].lower()


# ---------------------------------------------------------------- body mutations

def png_chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def patch_dimensions(data, rng):
    """Sets the width/height fields of a PNG, GIF, BMP or JPEG header to odd values."""
    big = rng.choice([0, 1, 0xFFFF, 0x7FFF, 65536, 100_000, 0x7FFFFFFF, 0xFFFFFFFF, 50_000])
    out = bytearray(data)
    if data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 33:
        w, h = struct.unpack(">II", data[16:24])
        w, h = (big, h) if rng.random() < 0.5 else (w, big) if rng.random() < 0.5 else (big, big)
        ihdr = struct.pack(">II", w & 0xFFFFFFFF, h & 0xFFFFFFFF) + data[24:29]
        return bytes(data[:8] + png_chunk(b"IHDR", ihdr) + data[33:])
    if data[:4] == b"GIF8" and len(data) > 10:
        out[6:10] = struct.pack("<HH", big & 0xFFFF, rng.choice([big & 0xFFFF, 1]))
        return bytes(out)
    if data[:2] == b"BM" and len(data) > 26:
        out[18:26] = struct.pack("<ii", rng.choice([big & 0x7FFFFFFF, -5, 0]), rng.choice([-(big & 0x7FFFFFFF), 7, 0]))
        return bytes(out)
    if data[:2] == b"\xff\xd8":
        i = 2
        while i + 9 < len(data):
            if data[i] != 0xFF:
                break
            marker = data[i + 1]
            length = struct.unpack(">H", data[i + 2:i + 4])[0]
            if marker in (0xC0, 0xC1, 0xC2):
                out[i + 5:i + 9] = struct.pack(">HH", big & 0xFFFF, rng.choice([big & 0xFFFF, 1, 0]))
                return bytes(out)
            i += 2 + length
    return flip(data, rng)


def flip(data, rng, count=None):
    if not data:
        return data
    out = bytearray(data)
    for _ in range(count or rng.randint(1, 16)):
        limit = len(out) if rng.random() < 0.5 else min(len(out), 1024)
        out[rng.randrange(limit)] = rng.randrange(256)
    return bytes(out)


TEXT_BODIES = [
    b"<!doctype html><html><body>not an image</body></html>",
    b'{"error": "not found"}',
    b"",
    b"\x00" * 64,
    b"GIF89a",
    b"\x89PNG\r\n\x1a\n",
    b"\xff\xd8\xff",
    b"RIFF\x00\x00\x00\x00WEBPVP8 ",
    b"\x00\x00\x00\x1cftypavif\x00\x00\x00\x00avifmif1",
    b'<svg xmlns="http://www.w3.org/2000/svg" width="100000" height="100000"><script>alert(1)</script>'
    b'<rect width="100%" height="100%" onload="x()"/></svg>',
    b'<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10">' + b"<g>" * 5000 + b"</g>" * 5000 + b"</svg>",
    b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">'
    b'<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]><svg xmlns="http://www.w3.org/2000/svg"><text>&c;</text></svg>',
    b"II*\x00\x08\x00\x00\x00" + b"\xff" * 100,
    b"BM" + b"\xff" * 60,
    b"\x00\x00\x01\x00\x01\x00" + b"\xff" * 40,
    b"\xff\x0a" + b"\x00" * 30,
]


def mutate_body(rng, pool, notes):
    index = rng.randrange(len(pool))
    path, data = pool.get(index)
    notes.append(f"seed image {index}: {os.path.relpath(path)} ({len(data)} bytes)")
    choice = rng.random()
    if choice < 0.30:
        notes.append("body: the seed image as it is")
        return data, path
    if choice < 0.42:
        cut = rng.randrange(len(data) + 1) if rng.random() < 0.7 else rng.randrange(min(len(data), 64) + 1)
        notes.append(f"body: truncated to {cut} bytes")
        return data[:cut], path
    if choice < 0.57:
        notes.append("body: bytes flipped")
        return flip(data, rng), path
    if choice < 0.65:
        notes.append("body: header dimensions patched")
        return patch_dimensions(data, rng), path
    if choice < 0.70:
        _, other = pool.get(rng.randrange(len(pool)))
        cut = rng.randrange(min(len(data), 256) + 1)
        notes.append(f"body: first {cut} bytes of the seed, then another image's tail")
        return data[:cut] + other[cut:], path
    if choice < 0.75:
        start = rng.randrange(len(data) + 1)
        size = rng.randint(1, 4096)
        notes.append(f"body: {size} random bytes inserted at {start}")
        return data[:start] + rng.randbytes(size) + data[start:], path
    if choice < 0.80:
        notes.append("body: the image twice")
        return data + data, path
    if choice < 0.90:
        body = rng.choice(TEXT_BODIES)
        notes.append(f"body: not an image ({body[:24]!r}...)")
        return body, path
    if choice < 0.97:
        size = rng.choice([0, 1, 7, 100, 5000, 100_000])
        notes.append(f"body: {size} random bytes")
        return rng.randbytes(size), path
    size = rng.choice([33 << 20, 40 << 20])
    notes.append(f"body: a PNG signature and {size} zero bytes (over the source limit)")
    return b"\x89PNG\r\n\x1a\n" + bytes(size), path


# ---------------------------------------------------------------- recipes

ODD_PORTS = ["99999", "65536", "0", "-1", "4294967377", "18446744073709551696", "+80", "0x50", "", "1e3", "８０"]


def location_values(rng, port, seed):
    here = f"127.0.0.1:{port}"
    odd = rng.choice(ODD_PORTS)
    return [
        f"http://{here}/o/{seed}/loop.jpg",               # itself: a loop
        f"http://{here}/o/{seed + 1}/chain.jpg",          # the next recipe
        f"http://{here}/f/{rng.randrange(1000)}/x.png",
        f"/f/{rng.randrange(1000)}/relative.png",
        f"f/{rng.randrange(1000)}/relative.png",
        f"//{here}/f/{rng.randrange(1000)}/scheme-relative.png",
        f"http://localhost:{port}/f/{rng.randrange(1000)}/x.png",
        f"http://[::1]:{port}/f/{rng.randrange(1000)}/x.png",
        f"http://127.0.0.1:{odd}/a.jpg",
        f"http://8.8.8.8:{rng.choice(['99999', '65536', '70000', '4294967377'])}/a.jpg",
        f"http://[2001:4860:4860::8888]:{rng.choice(['99999', '65536'])}/a.jpg",
        f"http://[::1]:{odd}/a.jpg",
        "http://10.0.0.1/a.jpg", "http://192.168.1.1/a.jpg", "http://169.254.169.254/latest/meta-data/",
        "http://[fe80::1]/a.jpg", "http://[fd00::1]/a.jpg", "http://100.64.0.1/a.jpg", "http://224.0.0.1/a.jpg",
        f"http://0.0.0.0:{port}/f/1/x.png", f"http://127.1:{port}/f/1/x.png", f"http://2130706433:{port}/f/1/x.png",
        f"http://[::ffff:127.0.0.1]:{port}/f/2/x.png",
        "file:///etc/passwd", "ftp://127.0.0.1/a.jpg", "local:///a.png", "s3://fz/f/1/x.png",
        "data:image/png;base64,iVBORw0KGgo=", "javascript:alert(1)", "", " ", "http://", "http:", "http://[::1",
        "http://127.0.0.1:/a.jpg", f"http://user:pass@{here}/f/3/x.png",
        f"http://{here}/f/1/%00%ff%2e%2e/x.png", f"http://{here}/" + "a" * rng.choice([100, 8000, 70000]),
        f"http://{here}/ünïcode/ß.png", f"http://{here}/f/1/x.png\r\nX-Injected: 1",
        f"HTTP://{here}/F/1/X.PNG", f"http://{here}/o/{seed}/loop.jpg#frag",
        "\x00", "http://\u0430\u0440\u0440\u04cf\u0435.com:99999/", "http://127.0.0.1:65535/a.jpg",
    ]


STATUSES = [200] * 12 + [201, 203, 204, 206, 226, 299, 300, 301, 302, 303, 304, 305, 307, 308, 309, 399,
                         400, 401, 403, 404, 410, 416, 429, 500, 502, 503, 504, 599, 600, 999]
ODD_STATUS_LINES = [b"HTTP/1.1 000 Zero", b"HTTP/1.1 099 Low", b"HTTP/1.1 1000 High", b"HTTP/1.1 -1 Negative",
                    b"HTTP/1.1 abc Letters", b"HTTP/1.1 200", b"HTTP/1.1 200 " + b"x" * 9000, b"HTTP/2 200 OK",
                    b"HTTP/1.0 200 OK", b"HTTP/0.9 200 OK", b"HTTP/9.9 200 OK", b"HTTP/1.1  200 OK",
                    b"HTTP/1.1 200 \x00\x01", b"ICY 200 OK", b"http/1.1 200 ok", b"HTTP/1.1 2000 OK", b"",
                    b"HTTP/1.1 200 OK\nX-Bare: lf"]
CONTENT_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp", "text/html", "application/octet-stream",
                 "image/svg+xml", "", "image/", "image/png; charset=utf-8", "multipart/x-mixed-replace; boundary=x",
                 "x" * 5000, "image/jpeg\x00png", "IMAGE/PNG", "image/avif", "image/heic", "image/jxl",
                 "application/json", "image/x-icon", "image/tiff", "image/bmp"]
DATES = ["Thu, 01 Jan 1970 00:00:00 GMT", "Sat, 01 Jan 0000 00:00:00 GMT", "Fri, 31 Dec 9999 23:59:59 GMT",
         "Mon, 32 Foo 2024 25:61:61 GMT", "0", "-1", "yesterday", "", "Sun, 06 Nov 1994 08:49:37 GMT",
         "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994", "99999999999999999999",
         "Tue, 29 Feb 2023 00:00:00 GMT", "Wed, 01 Jan 2025 00:00:00 +0100", "\x00\x01", "9" * 500]
CACHE_CONTROLS = ["max-age=-1", "max-age=99999999999999999999", "max-age=abc", "no-store", "no-cache, private",
                  "s-maxage=1, max-age=0", "max-age=0", "max-age=31536000, immutable", "", ",,,", "max-age=1" * 500,
                  "max-age=\"10\"", "max-age=9223372036854775807", "max-age=9223372036854775808"]
ETAGS = ['"abc"', 'W/"abc"', "unquoted", '"', "", '"' + "e" * 9000 + '"', '"a", "b"', '"\x01\x7f"', "W/", '*']


# A status below 100 ends the process inside async-http-client 1.37 (a known finding, see
# Fuzz/README.md); --exclude-known leaves it out so that a run can look for other findings.
EXCLUDE_BELOW_100 = False


class Recipe:
    """A response as a list of actions: ('send', bytes), ('sleep', s), ('close',), ('reset',),
    ('stall', s); plus notes that say in words what it is."""

    def __init__(self):
        self.actions = []
        self.notes = []
        self.keep_alive = False


def recipe(seed, pool, port):
    rng = random.Random(seed)
    r = Recipe()
    notes = r.notes
    notes.append(f"recipe {seed}")
    body, path = mutate_body(rng, pool, notes)
    # Status line.
    status = rng.choice(STATUSES)
    version = b"HTTP/1.1"
    if rng.random() < 0.06:
        status_line = rng.choice(ODD_STATUS_LINES)
        if EXCLUDE_BELOW_100 and re.match(rb"HTTP/1\.1 0\d\d ", status_line):
            status_line = b"HTTP/1.1 200 OK"
            notes.append("(a status below 100 left out: --exclude-known)")
    else:
        status_line = version + b" %d %s" % (status, b"OK" if status == 200 else b"Fuzz")
    notes.append(f"status line: {status_line[:80]!r}")
    headers = []
    # Content-Type.
    if rng.random() < 0.7:
        content_type = MIME.get(ext_of(path), "image/png")
    else:
        content_type = rng.choice(CONTENT_TYPES)
    if rng.random() < 0.93:
        headers.append(("Content-Type", content_type))
    # Redirects.
    if 300 <= status < 400 or rng.random() < 0.04:
        if rng.random() < 0.85:
            location = rng.choice(location_values(rng, port, seed))
            headers.append(("Location", location))
            if rng.random() < 0.1:
                headers.append(("Location", rng.choice(location_values(rng, port, seed))))
            notes.append(f"Location: {location[:120]!r}")
        else:
            notes.append("redirect without Location")
    # Validators and caching fields.
    for name, values, p in (("Cache-Control", CACHE_CONTROLS, 0.3), ("ETag", ETAGS, 0.3), ("Last-Modified", DATES, 0.3),
                            ("Expires", DATES, 0.2), ("Date", DATES, 0.1), ("Age", ["-5", "abc", "99999999999999999999"], 0.05),
                            ("Retry-After", ["1", "-1", "abc", "99999999999"], 0.05),
                            ("Content-Range", ["bytes 0-9/100", "bytes */0", "garbage", "bytes 5-1/2"], 0.05),
                            ("Content-Disposition", ['attachment; filename="../../x"', "inline"], 0.03),
                            ("Vary", ["*", "Accept"], 0.03), ("Set-Cookie", ["a=b; Path=/"], 0.02)):
        if rng.random() < p:
            headers.append((name, rng.choice(values)))
    # Odd header fields.
    if rng.random() < 0.05:
        headers.append(("X-Huge", "h" * rng.choice([8000, 70000, 300_000])))
        notes.append("a huge header field")
    if rng.random() < 0.03:
        headers += [(f"X-Many-{i}", "v") for i in range(rng.choice([200, 3000]))]
        notes.append("many header fields")
    if rng.random() < 0.05:
        headers.append(("Content-Type", rng.choice(CONTENT_TYPES)))
        notes.append("Content-Type twice")
    raw_lines = []
    if rng.random() < 0.04:
        raw_lines.append(rng.choice([b"NoColonHere", b" obs-fold continuation", b"X-Null: a\x00b", b": empty-name",
                                     b"X-Bad Name: v", b"X-Utf8: \xc3\xa9\xff"]))
        notes.append(f"a malformed header line {raw_lines[-1]!r}")
    # Content encoding.
    if rng.random() < 0.04:
        coding = rng.choice(["gzip", "deflate", "br", "gzip, gzip", "x-unknown"])
        if coding == "gzip" and rng.random() < 0.6:
            body = gzip.compress(body)
        headers.append(("Content-Encoding", coding))
        notes.append(f"Content-Encoding: {coding}")
    # Framing.
    framing = rng.random()
    payload = body
    if framing < 0.55:
        headers.append(("Content-Length", str(len(body))))
        notes.append("framing: Content-Length")
    elif framing < 0.63:
        notes.append("framing: none (the body ends at close)")
    elif framing < 0.72:
        value = rng.choice([len(body) - 1, len(body) // 2, len(body) + 1, len(body) + 100_000, 0, -1, "abc",
                            "99999999999999999999", "9223372036854775807", f"{len(body)}, {len(body) + 1}",
                            f" {len(body)} ", f"+{len(body)}", "0x10", ""])
        headers.append(("Content-Length", str(value)))
        if rng.random() < 0.2:
            headers.append(("Content-Length", str(len(body))))
        notes.append(f"framing: Content-Length {str(value)[:40]!r} for {len(body)} bytes")
    elif framing < 0.9:
        headers.append(("Transfer-Encoding", rng.choice(["chunked"] * 6 + ["Chunked", "chunked, chunked", "gzip, chunked"])))
        if rng.random() < 0.1:
            headers.append(("Content-Length", str(rng.choice([len(body), 5]))))
        payload, how = chunked(body, rng)
        notes.append(f"framing: chunked ({how})")
    else:
        headers.append(("Transfer-Encoding", rng.choice(["identity", "gzip", "x", ""])))
        notes.append("framing: an odd Transfer-Encoding")
    head_lines = [status_line] + [f"{k}: {v}".encode("utf-8", "surrogateescape") for k, v in headers] + raw_lines
    r.keep_alive = rng.random() < 0.3
    head_lines.append(b"Connection: keep-alive" if r.keep_alive else b"Connection: close")
    separator = b"\r\n" if rng.random() < 0.97 else b"\n"
    head = separator.join(head_lines) + separator + separator
    if status_line.startswith(b"HTTP/0.9") or (not status_line and rng.random() < 0.5):
        head = b""
        notes.append("no head at all (HTTP/0.9 style)")
    # Interim responses.
    if rng.random() < 0.06:
        interim = rng.choice([b"HTTP/1.1 100 Continue\r\n\r\n", b"HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n",
                              b"HTTP/1.1 102 Processing\r\n\r\n" * 3, b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n"])
        head = interim + head
        notes.append(f"interim: {interim[:30]!r}")
    whole = head + payload
    # Timing.
    timing = rng.random()
    acts = r.actions
    if timing < 0.70:
        acts.append(("send", whole))
    elif timing < 0.76:
        delay = rng.choice([0.2, 1.0, 3.0, 20.0])
        notes.append(f"timing: {delay} s before the head")
        acts += [("sleep", delay), ("send", whole)]
    elif timing < 0.82:
        pieces = rng.choice([5, 20, 50])
        step = max(1, len(whole) // pieces)
        interval = min(0.2, 4.0 / pieces)
        notes.append(f"timing: {pieces} pieces {interval} s apart")
        for i in range(0, len(whole), step):
            acts += [("send", whole[i:i + step]), ("sleep", interval)]
    elif timing < 0.88:
        cut = rng.randrange(len(whole) + 1)
        notes.append(f"timing: stalls after {cut} of {len(whole)} bytes")
        acts += [("send", whole[:cut]), ("stall", 60.0)]
    elif timing < 0.94:
        cut = rng.randrange(len(whole) + 1)
        notes.append(f"timing: closes after {cut} of {len(whole)} bytes")
        acts += [("send", whole[:cut]), ("close",)]
    elif timing < 0.97:
        cut = rng.randrange(len(whole) + 1) if rng.random() < 0.5 else 0
        notes.append(f"timing: resets (RST) after {cut} bytes")
        acts += [("send", whole[:cut]), ("reset",)]
    else:
        notes.append("timing: closes without a byte")
        acts.append(("close",))
    if acts[-1][0] == "send" and not r.keep_alive:
        acts.append(("close",))
    return r


def chunked(body, rng):
    out = bytearray()
    i = 0
    bad = rng.random() < 0.4
    kind = rng.choice(["bad hex", "huge size", "size over the data", "no final chunk", "no CRLF", "extensions",
                       "trailers", "negative", "leading zeros"]) if bad else "valid"
    while i < len(body):
        n = rng.randint(1, max(1, min(len(body) - i, rng.choice([1, 100, 4096, 65536]))))
        size = b"%x" % n
        if kind == "extensions":
            size += b";name=value;x"
        if kind == "leading zeros":
            size = b"0" * 20 + size
        out += size + b"\r\n" + body[i:i + n] + b"\r\n"
        i += n
    end = b"0\r\n\r\n"
    if kind == "trailers":
        end = b"0\r\nX-Trailer: 1\r\nContent-Length: 5\r\n\r\n"
    if kind == "bad hex":
        out = b"zz\r\n" + out
    elif kind == "huge size":
        out += b"ffffffffffffffffffff\r\nabc\r\n"
    elif kind == "size over the data":
        out += b"100000\r\nshort\r\n"
        end = b""
    elif kind == "no final chunk":
        end = b""
    elif kind == "no CRLF":
        out = out.replace(b"\r\n", b"", 1)
    elif kind == "negative":
        out = b"-5\r\nabcde\r\n" + out
    return bytes(out) + end, kind


# ---------------------------------------------------------------- the server

class Origin:
    def __init__(self, pool, port=0):
        self.pool = pool
        self.port = port
        self.served = 0
        self.recipes = 0

    async def start(self):
        self.server4 = await asyncio.start_server(self.handle, "127.0.0.1", self.port, limit=1 << 20)
        self.port = self.server4.sockets[0].getsockname()[1]
        try:
            self.server6 = await asyncio.start_server(self.handle, "::1", self.port, limit=1 << 20)
        except OSError:
            self.server6 = None
        return self.port

    async def handle(self, reader, writer):
        self.connections = getattr(self, "connections", 0) + 1
        connection = self.connections
        number = 0
        try:
            while True:
                try:
                    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 60)
                except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, asyncio.TimeoutError, ConnectionError):
                    return
                line = head.split(b"\r\n", 1)[0].decode("latin-1")
                parts = line.split(" ")
                target = parts[1] if len(parts) > 1 else "/"
                method = parts[0]
                number += 1
                print(f"{time.time():.3f} connection {connection} request {number}: {line[:300]}", file=sys.stderr, flush=True)
                keep = await self.answer(method, target, writer)
                if not keep:
                    return
        except (ConnectionError, OSError):
            pass
        finally:
            try:
                writer.close()
            except Exception:
                pass

    async def answer(self, method, target, writer):
        self.served += 1
        path = target.split("?", 1)[0]
        if path.startswith("/fz/"):
            path = path[3:]
        parts = path.split("/")
        if len(parts) >= 3 and parts[1] == "r":
            # The regression corpus's {raw:...}: these bytes as they are, then close.
            try:
                data = base64.urlsafe_b64decode(parts[2] + "=" * (-len(parts[2]) % 4))
            except ValueError:
                data = b""
            writer.write(data)
            await writer.drain()
            return False
        if path == "/redirect":
            location = urllib.parse.unquote(target.partition("?to=")[2])
            writer.write(f"HTTP/1.1 302 Found\r\nLocation: {location}\r\nContent-Length: 0\r\n\r\n".encode("utf-8", "surrogateescape"))
            await writer.drain()
            return True
        if path in ("/a.jpg", "/a.png"):
            wanted = ".jpg" if path == "/a.jpg" else ".png"
            parts = ["", "f", str(next((i for i, f in enumerate(self.pool.files) if f.endswith(wanted)), 0)), "a"]
        if len(parts) >= 3 and parts[1] == "f" and parts[2].isdigit() and len(self.pool):
            file, data = self.pool.get(int(parts[2]))
            head = (f"HTTP/1.1 200 OK\r\nContent-Type: {MIME.get(ext_of(file), 'application/octet-stream')}\r\n"
                    f"Content-Length: {len(data)}\r\nETag: \"{int(parts[2]) % len(self.pool)}\"\r\n"
                    f"Last-Modified: Sun, 06 Nov 1994 08:49:37 GMT\r\n\r\n").encode()
            writer.write(head + (b"" if method == "HEAD" else data))
            await writer.drain()
            return True
        if len(parts) >= 3 and parts[1] == "o" and parts[2].lstrip("-").isdigit() and len(self.pool):
            self.recipes += 1
            r = recipe(int(parts[2]), self.pool, self.port)
            for action in r.actions:
                if action[0] == "send":
                    writer.write(action[1])
                    await writer.drain()
                elif action[0] == "sleep":
                    await asyncio.sleep(action[1])
                elif action[0] == "stall":
                    # Until the client goes away, or the bound.
                    await asyncio.sleep(action[1])
                    return False
                elif action[0] == "close":
                    return False
                elif action[0] == "reset":
                    sock = writer.transport.get_extra_info("socket")
                    if sock is not None:
                        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    writer.transport.abort()
                    return False
            return r.keep_alive
        writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
        await writer.drain()
        return True


def default_folders(root):
    return [os.path.join(root, "Tests/AlcedoTests/Fixtures"), os.path.join(root, "Sources/alcedo/Demo/Samples")]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--seeds", action="append", default=[], help="a folder of seed images (repeatable)")
    parser.add_argument("--describe", type=int, help="print what recipe N answers and exit")
    parser.add_argument("--exclude-known", action="store_true", help="leave out the known findings (statuses below 100)")
    args = parser.parse_args()
    global EXCLUDE_BELOW_100
    EXCLUDE_BELOW_100 = args.exclude_known
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "../.."))
    pool = Pool(load_pool(args.seeds or default_folders(root)))
    if args.describe is not None:
        r = recipe(args.describe, pool, args.port or 8081)
        print("\n".join(r.notes))
        return
    async def serve():
        origin = Origin(pool, args.port)
        port = await origin.start()
        print(f"origin on http://127.0.0.1:{port} with {len(pool)} seed images", flush=True)
        done = asyncio.Event()
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, done.set)
        await done.wait()
        print(f"origin: {origin.served} requests, {origin.recipes} recipe responses", flush=True)
    asyncio.run(serve())


if __name__ == "__main__":
    sys.exit(main())
