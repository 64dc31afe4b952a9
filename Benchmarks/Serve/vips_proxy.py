"""A small stand-in for imgproxy: the same URL shape (/insecure/rs:fit:W:H/plain/<encoded URL>),
libvips' thumbnail_buffer (JPEG shrink-on-load, as imgproxy does) and JPEG quality 80 without
metadata (WebP, PNG, AVIF or GIF when the URL ends in `@webp`, `@png`, `@avif` or `@gif`, at
imgproxy's default qualities and speeds), run as a WSGI app under gunicorn. Animated GIF and
WebP sources keep every frame (libvips' `n=-1`, as imgproxy does up to its frame limit), and
the frames' delays with them. Like imgproxy it keeps no result cache, turns off
libvips' operation cache and runs one libvips thread per request (VIPS_CONCURRENCY=1 is set by
the harness); sources are fetched once per worker and kept in memory. An If-None-Match equal
to the ETag of the (source, options) pair gets a 304 without processing.
Run: gunicorn -w 2 -b 127.0.0.1:PORT vips_proxy:app"""
import hashlib
import os
import urllib.parse
import urllib.request

import pyvips

pyvips.cache_set_max(0)
AVIF_QUALITY = int(os.environ.get("VIPS_AVIF_QUALITY", "63"))
sources = {}
# Output formats by the URL's `@ext` (JPEG when there is none), imgproxy's default qualities.
SAVERS = {
    "jpg": ("image/jpeg", lambda image: image.jpegsave_buffer(Q=80, strip=True)),
    "jpeg": ("image/jpeg", lambda image: image.jpegsave_buffer(Q=80, strip=True)),
    "webp": ("image/webp", lambda image: image.webpsave_buffer(Q=79, strip=True)),
    "png": ("image/png", lambda image: image.pngsave_buffer(strip=True)),
    # imgproxy: IMGPROXY_AVIF_SPEED 8 is libvips' effort 9 - 8. VIPS_AVIF_QUALITY (default 63, imgproxy's)
    # lets the benchmark find the quality at which libvips writes as many bytes as another server.
    "avif": ("image/avif", lambda image: image.heifsave_buffer(Q=AVIF_QUALITY, compression="av1", effort=1, strip=True)),
    "gif": ("image/gif", lambda image: image.gifsave_buffer(strip=True)),
}


def load_options(data):
    """libvips' load options for a source: every page of a GIF or WebP (its frames), none else."""
    if data[:4] == b"GIF8" or (data[:4] == b"RIFF" and data[8:12] == b"WEBP"):
        return "n=-1"
    return ""


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
    url, _, extension = parts[4].partition("@")  # imgproxy's `plain/URL@ext` picks the format
    url = urllib.parse.unquote(url)
    saver = SAVERS.get(extension or "jpg")
    if saver is None:
        return fail(start_response, "400 Bad Request", f"output format {extension!r}: only {', '.join(SAVERS)}")
    etag = '"' + hashlib.sha256(f"{url}\n{parts[2]}\n{extension}".encode()).hexdigest()[:32] + '"'
    headers = [("ETag", etag), ("Cache-Control", "public, max-age=31536000")]
    if environ.get("HTTP_IF_NONE_MATCH") == etag:
        start_response("304 Not Modified", headers)
        return []
    try:
        data = source(url)
    except Exception as error:  # the origin failed: imgproxy answers 404/502 the same way
        return fail(start_response, "502 Bad Gateway", f"source: {error}")
    image = pyvips.Image.thumbnail_buffer(data, width, height=height, size="down", option_string=load_options(data))
    content_type, save = saver
    body = save(image)
    start_response("200 OK", headers + [("Content-Type", content_type), ("Content-Length", str(len(body)))])
    return [body]
