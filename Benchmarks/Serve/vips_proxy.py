"""A small stand-in for imgproxy: the same URL shape (/insecure/rs:fit:W:H/plain/<encoded URL>),
libvips' thumbnail_buffer (JPEG shrink-on-load, as imgproxy does) and JPEG quality 80 without
metadata, run as a WSGI app under gunicorn. Like imgproxy it keeps no result cache, turns off
libvips' operation cache and runs one libvips thread per request (VIPS_CONCURRENCY=1 is set by
the harness); sources are fetched once per worker and kept in memory. An If-None-Match equal
to the ETag of the (source, options) pair gets a 304 without processing.
Run: gunicorn -w 2 -b 127.0.0.1:PORT vips_proxy:app"""
import hashlib
import urllib.parse
import urllib.request

import pyvips

pyvips.cache_set_max(0)
sources = {}


def source(url):
    data = sources.get(url)
    if data is None:
        with urllib.request.urlopen(url, timeout=15) as response:
            data = response.read()
        sources[url] = data
    return data


def fail(start_response, status, message):
    body = (message + "\n").encode()
    start_response(status, [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]


def app(environ, start_response):
    raw = environ.get("RAW_URI") or environ.get("PATH_INFO", "")
    parts = raw.split("/", 4)
    # ['', 'insecure', 'rs:fit:W:H', 'plain', '<encoded url>']
    if len(parts) != 5 or parts[1] != "insecure" or parts[3] != "plain":
        return fail(start_response, "404 Not Found", "expected /insecure/rs:fit:W:H/plain/URL")
    options = parts[2].split(":")
    if len(options) != 4 or options[0] not in ("rs", "resize") or options[1] != "fit":
        return fail(start_response, "400 Bad Request", "only rs:fit:W:H is supported")
    try:
        width, height = int(options[2]), int(options[3])
    except ValueError:
        return fail(start_response, "400 Bad Request", "rs: width and height must be integers")
    url = urllib.parse.unquote(parts[4])
    etag = '"' + hashlib.sha256(f"{url}\n{parts[2]}".encode()).hexdigest()[:32] + '"'
    headers = [("ETag", etag), ("Cache-Control", "public, max-age=31536000")]
    if environ.get("HTTP_IF_NONE_MATCH") == etag:
        start_response("304 Not Modified", headers)
        return []
    try:
        data = source(url)
    except Exception as error:  # the origin failed: imgproxy answers 404/502 the same way
        return fail(start_response, "502 Bad Gateway", f"source: {error}")
    image = pyvips.Image.thumbnail_buffer(data, width, height=height, size="down")
    body = image.jpegsave_buffer(Q=80, strip=True)
    start_response("200 OK", headers + [("Content-Type", "image/jpeg"), ("Content-Length", str(len(body)))])
    return [body]
