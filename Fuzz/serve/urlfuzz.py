"""The URL fuzzer: requests made by mutating imgproxy's documented URLs and Alcedo's own test URLs.

A request is a pure function of (seed, index), so a run can be repeated and any request named by
its index. Requests are kept as templates: `{origin}` (the loopback origin, http://127.0.0.1:PORT),
`{host}` (127.0.0.1:PORT) and `{b64:TEXT}` (TEXT as URL-safe base64 without padding, after its own
placeholders) and `{raw:BYTES}` (a URL on the origin that answers BYTES, \\xNN escapes decoded,
and closes) are filled in when the request is sent, so the same seed gives the same requests
whatever ports a run gets. The line format (`Request.line`) is also the format of the regression
corpus, Tests/AlcedoServerTests/Fixtures/request-corpus.txt:

    METHOD TARGET[ | Name: value]...

with every byte outside printable ASCII (and `\\`, `|`, and spaces in the target) written as \\xNN.
"""
import base64
import hashlib
import hmac
import os
import random
import re

# Option names and shorthands from imgproxy's processing documentation (docs/usage/processing.mdx),
# plus Alcedo's own.
OPTION_NAMES = """a adjust aq ar att auto_rotate autoquality avif_options avifo ba background background_alpha bc bd bg
bga bl blur blur_areas blur_detections br brightness bypass_cache c cache_tags cachebuster car cb co col color_profile
colorize contrast cp crop crop_ar crop_aspect_ratio crop_objects ct da dd disable_animation dpi dpr draw_detections dt
duotone el enforce_thumbnail enlarge eth ex exar exp expires ext extend extend_ar extend_aspect_ratio f
fallback_image_url filename fiu fl flip fn format format_quality fq g gr gradient gravity h hashsum height hs icc
jpeg_options jpgo kcr keep_copyright maf mafr max_animation_frame_resolution max_animation_frames max_bytes
max_result_dimension max_src_file_size max_src_resolution mb mc mh min-height min-width monochrome mrd msfs msr mw
obj_pos objects_position op padding page pages pbl pd pg pgs ph pix pixelate png_options pngo pr preserve_hdr preset
progressive_blur q quality ra raw resize resizing_algorithm resizing_type return_attachment rot rotate rs rt s sa
saturation scp sh sharpen size skip_processing skp sm st strip_color_profile strip_metadata style t trim
unsharp_masking ush video_thumbnail_animation video_thumbnail_keyframes video_thumbnail_second video_thumbnail_tile vta
vtk vts vtt w watermark watermark_rotate watermark_shadow watermark_size watermark_text watermark_url webp_options
webpo width wm wm_rot wmr wms wmsh wmt wmu z zoom round_corner border tint""".split()

# Typical option segments, the building blocks of generated paths.
COMMON_OPTIONS = ["rs:fit:300:200", "rs:fill:100:100:1:1", "rs:fill-down:50:20", "rs:force:10:10", "rs:auto:64:64",
                  "s:300:0", "w:32", "h:50", "mw:10", "mh:10", "z:0.5:0.25", "dpr:2", "el:1", "ex:1:nowe",
                  "exar:1:so", "g:sm", "g:noea:3:4", "g:fp:0.5:0.5", "c:50:60:so", "c:0.5:0.5:nowe", "t:10:ff0000",
                  "pd:10:20", "ar:1", "rot:90", "fl:1:0", "bg:ff0000", "bg:255:0:0", "bl:1.5", "sh:0.5", "pix:5",
                  "wm:0.5:so", "sm:0", "kcr:0", "scp:1", "q:70", "fq:webp:50", "mb:10000", "f:png", "f:webp",
                  "f:avif", "f:gif", "f:jxl", "f:heic", "f:tiff", "f:bmp", "f:ico", "skp:png", "raw:1", "cb:abc",
                  "exp:4102444800", "fn:name", "att:1", "pr:thumb", "pr:sharp", "preset:thumb", "msr:1", "msfs:100",
                  "maf:1", "mafr:0.1", "mrd:100", "pg:1", "round_corner:8", "border:2:ff0000", "tint:ff000080",
                  "eth:1", "ph:1", "rt:fill", "rs:fit:0:0", "size:100:100:1"]

EXTENSIONS = ["jpg", "png", "webp", "avif", "gif", "jxl", "heic", "tiff", "bmp", "ico", "svg", "psd", "", "JPG",
              "jpeg", "best", "mp4", "pdf"]

INTERESTING_NUMBERS = ["0", "-0", "1", "-1", "2", "255", "256", "65535", "65536", "99999", "2147483647", "2147483648",
                       "-2147483649", "4294967295", "4294967296", "9223372036854775807", "9223372036854775808",
                       "-9223372036854775809", "18446744073709551616", "99999999999999999999999999999999999999",
                       "1e308", "1e309", "-1e309", "NaN", "nan", "inf", "-inf", "Infinity", "0.0000001", "0x10",
                       "1_000", "+5", " 5", "5 ", "", "1.5.5", "٣", "１０", "0.5", "-0.5", "1e-320", "8193", "50000",
                       "1" * 400]

ODD_PORTS = ["99999", "65536", "70000", "0", "-1", "4294967377", "18446744073709551696", "+80", "0x50", "080",
             "", "1e3", "８０", "65535", "6553500000000000000000000000"]

PUBLIC_HOSTS = ["8.8.8.8", "93.184.216.34", "[2001:4860:4860::8888]", "1.1.1.1"]

# Sources: {origin} routes the origin answers (seed images and recipes), other schemes, odd forms.
def source_templates(rng, recipe_seed):
    n = rng.randrange(1000)
    odd = rng.choice(ODD_PORTS)
    return [
        f"{{origin}}/f/{n}/image.jpg", f"{{origin}}/f/{n}/image.png", f"{{origin}}/o/{recipe_seed}/image.jpg",
        f"http://localhost:{{port}}/f/{n}/x.png", f"http://[::1]:{{port}}/f/{n}/x.png",
        f"http://127.0.0.1:{odd}/a.jpg", f"http://[::1]:{odd}/a.jpg", f"http://localhost:{odd}/a.jpg",
        f"http://{rng.choice(PUBLIC_HOSTS)}:{rng.choice(['99999', '65536', '70000', '4294967377'])}/a.jpg",
        f"https://127.0.0.1:{odd}/a.jpg", f"http://0.0.0.0:{{port}}/f/{n}/x.png",
        f"http://127.1:{{port}}/f/{n}/x.png", f"http://2130706433:{{port}}/f/{n}/x.png",
        f"http://[::ffff:127.0.0.1]:{{port}}/f/{n}/x.png", f"http://[fe80::1%25lo]:{{port}}/a.jpg",
        f"http://127.0.0.1:{{port}}@127.0.0.1:{odd}/a.jpg", f"http://user:pass@127.0.0.1:{{port}}/f/{n}/x.png",
        "http://10.0.0.1/a.jpg", "http://169.254.169.254/latest/meta-data/", "http://[fd00::1]/a.jpg",
        f"local:///{rng.choice(['a.png', 'jpg/sample.jpg', '../../etc/passwd', '%2e%2e/x', 'dir/', '', '.', 'x' * 300])}",
        f"s3://fz/f/{n}/x.png", f"s3://fz/o/{recipe_seed}/x.jpg", "s3://", "s3:///key", "s3://bucket", "s3://Bad_Bucket!/k",
        "file:///etc/passwd", "ftp://127.0.0.1/a.jpg", "data:image/png;base64,iVBORw0KGgo=", "gopher://127.0.0.1/",
        "javascript:alert(1)", "http://", "http:/", "http:", "//127.0.0.1/a.jpg", "/a.jpg", "", "http://[::1",
        "http://[]/a.jpg", "http://[::1]]:80/", "http://127.0.0.1:80:80/a.jpg", "http://%31%32%37.0.0.1:{port}/f/1/x.png",
        "http://\u0430\u0440\u0440\u04cf\u0435.com:99999/", "http://ÿ.com:99999/", f"{{origin}}/f/{n}/ü ß%00.png",
        f"{{origin}}/f/{n}/" + "a" * rng.choice([200, 5000, 70000]), f"{{origin}}/f/{n}/x.png?q=1&b=%ff#frag",
        f"HTTP://127.0.0.1:{{port}}/f/{n}/X.PNG", f"http://127.0.0.1:{{port}}/f/{n}/x.png\r\nX-Injected: 1",
    ]


def b64url(text):
    return base64.urlsafe_b64encode(text.encode("utf-8", "surrogateescape")).decode().rstrip("=")


def percent_encode(text, rng):
    level = rng.random()
    if level < 0.5:
        return text
    safe = b"" if level < 0.8 else b":/"
    out = []
    for b in text.encode("utf-8", "surrogateescape"):
        if (48 <= b <= 57) or (65 <= b <= 90) or (97 <= b <= 122) or b in b"-._~" or b in safe or b in b"{}":
            out.append(chr(b))
        else:
            out.append("%%%02X" % b)
    return "".join(out)


def expand(template, origin_port):
    """Fills in {origin}, {host}, {port} and {b64:...} (innermost first)."""
    text = template.replace("{origin}", f"http://127.0.0.1:{origin_port}").replace("{host}", f"127.0.0.1:{origin_port}")
    text = text.replace("{port}", str(origin_port))
    pattern = re.compile(r"\{(b64|raw):([^{}]*)\}")

    def fill(m):
        if m.group(1) == "raw":
            raw = unescape(m.group(2))
            return f"http://127.0.0.1:{origin_port}/r/" + base64.urlsafe_b64encode(raw).decode().rstrip("=")
        return b64url(m.group(2))
    while True:
        new = pattern.sub(fill, text)
        if new == text:
            return text
        text = new


def escape(data, keep_spaces, braces=False):
    """`data` as line text: bytes outside printable ASCII, `\\` and `|` as \\xNN (and `{`, `}` with
    `braces`, for the bytes inside a {raw:...} placeholder)."""
    out = []
    for b in data:
        if 0x21 <= b <= 0x7E and b not in (0x5C, 0x7C) and not (braces and b in (0x7B, 0x7D)) or (keep_spaces and b == 0x20):
            out.append(chr(b))
        else:
            out.append("\\x%02x" % b)
    return "".join(out)


def unescape(text):
    return re.sub(rb"\\x([0-9a-fA-F]{2})", lambda m: bytes([int(m.group(1), 16)]), text.encode("latin-1"))


class Request:
    def __init__(self, method, target, headers=(), notes=(), kind="url", index=None):
        self.method = method            # bytes
        self.target = target            # bytes, a template
        self.headers = list(headers)    # [(bytes, bytes)]
        self.notes = list(notes)
        self.kind = kind
        self.index = index
        self.sign_with = None           # (key, salt): sign the target once it is expanded

    @property
    def line(self):
        parts = [escape(self.method, False) + " " + escape(self.target, False)]
        for name, value in self.headers:
            parts.append(escape(name, False) + ": " + escape(value, True))
        return " | ".join(parts)

    @staticmethod
    def parse(line):
        parts = line.split(" | ")
        method, _, target = parts[0].partition(" ")
        headers = []
        for part in parts[1:]:
            name, _, value = part.partition(": ")
            headers.append((unescape(name), unescape(value)))
        return Request(unescape(method), unescape(target), headers)

    def wire(self, origin_port, host):
        target = expand(self.target.decode("latin-1"), origin_port).encode("latin-1")
        lines = [self.method + b" " + target + b" HTTP/1.1"]
        names = {n.lower() for n, _ in self.headers}
        if b"host" not in names:
            lines.append(b"Host: " + host.encode())
        lines += [n + b": " + expand(v.decode("latin-1"), origin_port).encode("latin-1") for n, v in self.headers]
        if b"connection" not in names:
            lines.append(b"Connection: close")
        return b"\r\n".join(lines) + b"\r\n\r\n"


# ---------------------------------------------------------------- seeds

def load_seeds(root):
    """imgproxy's documented and tested URLs (the compatibility corpus made from imgproxy's
    repository and docs), and the static URLs of Alcedo's server tests."""
    seeds = []
    corpus = os.path.join(root, "Tests/AlcedoServerTests/Fixtures/imgproxy-corpus.tsv")
    with open(corpus, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#") or line.startswith("@") or not line.strip():
                continue
            fields = line.rstrip("\n").split("\t")
            if len(fields) > 2 and fields[2].startswith("/"):
                path = fields[2]
                # The corpus's own placeholders, mapped onto this fuzzer's.
                path = re.sub(r"\{b64split:([^}]*)\}", r"{b64:\1}", path)
                path = re.sub(r"\{pathescape:([^}]*)\}", r"\1", path)
                path = re.sub(r"\{slash1:([^}]*)\}", r"\1", path)
                path = path.replace("{sig}", "insecure").replace("{dir}", "").replace("{half:", "{")
                path = re.sub(r"\{origin\}/[^@/]*/?[^@]*?\.(jpg|png|gif|webp)", lambda m: "{origin}/f/%d/x.%s" % (len(seeds), m.group(1)), path)
                seeds.append(path)
    tests = os.path.join(root, "Tests/AlcedoServerTests")
    for name in sorted(os.listdir(tests)):
        if not name.endswith(".swift"):
            continue
        with open(os.path.join(tests, name), encoding="utf-8") as f:
            for literal in re.findall(r'"(/(?:insecure|unsafe|info|health|metrics)[^"\\]*)"', f.read()):
                seeds.append(literal.replace("http://a.test/", "{origin}/f/7/"))
    return seeds


SOURCE_SPLIT = re.compile(r"/(plain/.*|[A-Za-z0-9_-]{16,}(?:/[A-Za-z0-9_-]+)*(?:\.[a-z]+)?)$")


class Generator:
    def __init__(self, root, seed, signing=None):
        self.seeds = load_seeds(root)
        self.seed = seed
        self.signing = signing  # (key bytes, salt bytes) when the server checks signatures

    def request(self, index, kind):
        rng = random.Random(self.seed * 1_000_003 + index)
        if kind == "origin":
            req = self.origin_request(rng, index)
        else:
            req = self.url_request(rng, index)
        req.index = index
        req.kind = kind
        return req

    # A plain request whose source is a mutated origin response (the source-response fuzzer).
    def origin_request(self, rng, index):
        recipe = self.seed * 1_000_003 + index
        options = "/".join(rng.sample(COMMON_OPTIONS[:40], rng.randint(0, 3))) or "rs:fit:64:64"
        if rng.random() < 0.08:
            options = "raw:1"
        source = f"{{origin}}/o/{recipe}/image.jpg"
        if rng.random() < 0.25:
            path = f"/insecure/{options}/{{b64:{source}}}"
        elif rng.random() < 0.1:
            path = f"/insecure/{options}/plain/s3://fz/o/{recipe}/image.jpg"
        else:
            path = f"/insecure/{options}/plain/{source}"
        if rng.random() < 0.3:
            path += "@" + rng.choice(["png", "webp", "jpg", "avif", "gif"])
        if rng.random() < 0.1:
            path = "/info" + path
        req = Request(b"GET" if rng.random() < 0.9 else b"HEAD", path.encode(), self.headers(rng, light=True),
                      [f"source-response recipe {recipe}"])
        self.sign(req, rng)
        return req

    def url_request(self, rng, index):
        notes = []
        if rng.random() < 0.6:
            path = rng.choice(self.seeds)
            notes.append("seed: " + path[:200])
        else:
            path = self.compose(rng)
            notes.append("composed")
        for _ in range(rng.choice([0, 1, 1, 2, 3, 5])):
            path, what = self.mutate(rng, path)
            notes.append(what)
        method = rng.choices([b"GET", b"HEAD", b"POST", b"PUT", b"DELETE", b"OPTIONS", b"PATCH", b"TRACE", b"CONNECT",
                              b"GETT", b"get", b"G\x00T", b"BREW"], [80, 8, 3, 1, 1, 1, 1, 1, 0.5, 0.5, 0.5, 0.5, 0.5])[0]
        req = Request(method, path.encode("utf-8", "surrogateescape"), self.headers(rng), notes)
        self.sign(req, rng)
        return req

    def compose(self, rng):
        options = "/".join(rng.sample(COMMON_OPTIONS, rng.randint(0, 4)))
        source = rng.choice(source_templates(rng, self.seed * 7 + rng.randrange(1 << 30)))
        signature = rng.choice(["insecure", "unsafe", "_", "sig", "x" * 43, "AAAA", ""])
        form = rng.random()
        prefix = rng.choice(["", "", "", "", "/info"])
        if form < 0.55:
            path = f"{prefix}/{signature}/{options}/plain/{percent_encode(source, rng)}"
            if rng.random() < 0.4:
                path += "@" + rng.choice(EXTENSIONS)
        else:
            encoded = f"{{b64:{source}}}"
            if rng.random() < 0.2:
                encoded = "/".join(b64url(source)[i:i + 16] for i in range(0, len(b64url(source)), 16)) if "{" not in source else encoded
            path = f"{prefix}/{signature}/{options}/{encoded}"
            if rng.random() < 0.4:
                path += "." + rng.choice(EXTENSIONS)
        return path.replace("//plain", "/plain").replace("///", "//")

    def mutate(self, rng, path):
        op = rng.randrange(22)
        segments = path.split("/")
        if op == 0:  # an option's name
            i = rng.randrange(len(segments))
            name, sep, rest = segments[i].partition(":")
            segments[i] = rng.choice(OPTION_NAMES) + (sep or ":") + rest
            return "/".join(segments), f"option name of segment {i}"
        if op in (1, 2, 3):  # an option's value
            i = rng.randrange(len(segments))
            args = segments[i].split(":")
            j = rng.randrange(len(args))
            args[j] = rng.choice(INTERESTING_NUMBERS) if rng.random() < 0.8 else rng.choice(["ce", "sm", "fp", "nowe", "fit", "fill", "x" * 1000, "%00", "\u00e9", "true", "t"])
            segments[i] = ":".join(args)
            return "/".join(segments), f"argument {j} of segment {i}"
        if op == 4:  # many arguments
            i = rng.randrange(len(segments))
            segments[i] += ":" * rng.choice([1, 10, 1000]) + "1"
            return "/".join(segments), "extra arguments"
        if op == 5:  # an inserted option
            i = rng.randrange(1, max(2, len(segments)))
            opt = rng.choice(OPTION_NAMES) + "".join(":" + rng.choice(INTERESTING_NUMBERS) for _ in range(rng.randint(0, 5)))
            segments.insert(i, opt)
            return "/".join(segments), f"option {opt[:60]} inserted"
        if op == 6:  # a doubled or dropped segment
            i = rng.randrange(len(segments))
            if rng.random() < 0.5:
                segments.insert(i, segments[i])
            else:
                del segments[i]
            return "/".join(segments), f"segment {i} doubled or dropped"
        if op == 7:  # separators
            old, new = rng.choice([(":", ","), (":", "%3A"), ("/", "//"), ("/", "%2F"), ("/", "\\"), ("@", "%40"),
                                   (".", ".."), ("plain", "PLAIN"), (":", "::"), ("/", "/./"), ("/", "/../")])
            return path.replace(old, new, rng.randint(1, 3)), f"{old!r} -> {new!r}"
        if op == 8:  # control bytes
            i = rng.randrange(len(path) + 1)
            b = rng.choice(["\x00", "\r", "\n", "\r\n", "\t", " ", "\x7f", "\x1b", "%00", "%0d%0a", "#", "?", "%", "%zz"])
            return path[:i] + b + path[i:], f"{b!r} at {i}"
        if op == 9:  # unicode
            i = rng.randrange(len(path) + 1)
            u = rng.choice(["é", "\u0301", "\u202e", "\ufeff", "\U0001f600", "\udcff", "ß", "\u0130", "\u2215", "／"])
            return path[:i] + u + path[i:], f"unicode at {i}"
        if op == 10:  # a very long path
            n = rng.choice([1000, 8000, 17000, 70000, 200000])
            where = rng.random()
            filler = rng.choice(["a", "rs:fit:1:1/", "%41", "/", "::"])
            text = filler * (n // len(filler))
            if where < 0.5:
                return path + text, f"{n} bytes appended"
            return "/insecure/" + text + path, f"{n} bytes of options"
        if op == 11:  # a byte flip
            if not path:
                return path, "nothing"
            i = rng.randrange(len(path))
            return path[:i] + chr(rng.randrange(0x20, 0x7f)) + path[i + 1:], f"byte {i} changed"
        if op == 12:  # the signature
            sig = rng.choice(["", "x", "A" * 43, "A" * 44, "-_-_", "insecure" * 100, "%00", "sig=", "unsafe"])
            if len(segments) > 1:
                segments[1] = sig
            return "/".join(segments), f"signature {sig[:20]!r}"
        if op == 13:  # the source
            source = rng.choice(source_templates(rng, self.seed * 11 + rng.randrange(1 << 30)))
            m = SOURCE_SPLIT.search(path)
            head = path[:m.start()] if m else path
            if rng.random() < 0.6:
                return head + "/plain/" + percent_encode(source, rng), f"source {source[:80]!r}"
            return head + "/{b64:" + source + "}", f"base64 source {source[:80]!r}"
        if op == 14:  # a preset
            preset = rng.choice(["pr:thumb", "preset:sharp", "pr:thumb:sharp", "pr:nope", "pr:", "pr:thumb:thumb:thumb",
                                 "pr:default", "preset:" + "x" * 500])
            segments.insert(min(2, len(segments)), preset)
            return "/".join(segments), preset
        if op == 15:  # the route
            prefix = rng.choice(["/info", "/health", "/metrics", "", "/favicon.ico", "/insecure", "/info/info", "//",
                                 "/robots.txt", "/plain", "/HEALTH", "/metrics/x"])
            return prefix + path, f"prefix {prefix!r}"
        if op == 16:  # an extension
            ext = rng.choice(EXTENSIONS)
            return path + rng.choice(["@", ".", "@@", "@."]) + ext, f"extension {ext!r}"
        if op == 17:  # a port
            port = rng.choice(ODD_PORTS)
            new = re.sub(r"(127\.0\.0\.1|localhost|\[::1\]|\{origin\}|8\.8\.8\.8)(:[^/@%]*)?", lambda m: ("127.0.0.1" if m.group(1) == "{origin}" else m.group(1)) + ":" + port, path, count=1)
            return new, f"port {port!r}"
        if op == 18:  # percent-encoding of the whole source
            m = SOURCE_SPLIT.search(path)
            if m and m.group(1).startswith("plain/"):
                return path[:m.start()] + "/plain/" + percent_encode(m.group(1)[6:], rng), "source re-encoded"
            return path, "nothing"
        if op == 19:  # a truncation
            cut = rng.randrange(len(path) + 1)
            return path[:cut], f"cut at {cut}"
        if op == 20:  # a splice of two seeds
            other = rng.choice(self.seeds)
            a, b = rng.randrange(len(path) + 1), rng.randrange(len(other) + 1)
            return path[:a] + other[b:], "spliced"
        # Arguments separator and option repetition.
        i = rng.randrange(len(segments))
        segments[i] = ":".join([segments[i]] * rng.choice([2, 50]))
        return "/".join(segments), f"segment {i} repeated"

    def headers(self, rng, light=False):
        headers = []
        if rng.random() < 0.5:
            headers.append((b"Accept", rng.choice([b"image/webp", b"image/avif,image/webp,*/*", b"*/*", b"image/jxl",
                                                    b"image/webp;q=0", b"image/avif;q=0.5, image/webp;q=abc", b"",
                                                    b"text/html", b"image/*;q=1e9", b",,,,;;;", b"a" * 9000])))
        if light:
            return headers
        p = rng.random
        if p() < 0.08:
            headers.append((b"Range", rng.choice([b"bytes=0-10", b"bytes=-1", b"bytes=5-1", b"bytes=0-", b"garbage",
                                                   b"bytes=0-1,2-3,4-5", b"bytes=99999999999999999999-"])))
        if p() < 0.1:
            headers.append((b"If-None-Match", rng.choice([b"*", b'"abc"', b'W/"x"', b"garbage", b'"a", "b"' * 500, b""])))
        if p() < 0.08:
            headers.append((b"If-Modified-Since", rng.choice([b"Sun, 06 Nov 1994 08:49:37 GMT", b"garbage", b"0",
                                                               b"Fri, 31 Dec 9999 23:59:59 GMT", b"Mon, 32 Foo 2024 25:61:61 GMT"])))
        if p() < 0.06:
            headers.append((b"Host", rng.choice([b"", b"evil.example", b"h" * 9000, b"[::1]", b"127.0.0.1:99999", b"a b"])))
        if p() < 0.05:
            for name in (b"DPR", b"Width", b"Viewport-Width", b"Sec-CH-DPR", b"Sec-CH-Width"):
                headers.append((name, rng.choice([b"2", b"0", b"-1", b"1e9", b"NaN", b"99999999999999999999", b"abc"])))
        if p() < 0.03:
            headers.append((b"X-Huge", b"v" * rng.choice([8000, 70000, 300000])))
        if p() < 0.03:
            headers.append((b"Transfer-Encoding", b"chunked"))
        if p() < 0.03:
            headers.append((b"Content-Length", rng.choice([b"5", b"-1", b"99999999999999999999", b"abc"])))
        if p() < 0.03:
            headers.append((b"Expect", b"100-continue"))
        if p() < 0.03:
            headers.append((b"Connection", rng.choice([b"Upgrade", b"keep-alive", b"close, close"])))
            if p() < 0.5:
                headers.append((b"Upgrade", b"h2c"))
        if p() < 0.03:
            headers.append((b"Authorization", b"Bearer " + b"x" * rng.choice([1, 5000])))
        if p() < 0.02:
            headers.append((b"X\x00Bad", b"v"))
        return headers

    def sign(self, req, rng):
        """With a key, most requests carry the right signature for their (expanded-later) path:
        the signature covers the template, so it is right only when the path has no placeholder
        that changes with the port; sources on the origin are signed after expansion by the sender."""
        if not self.signing or rng.random() < 0.1:
            return
        req.notes.append("signed")
        req.sign_with = self.signing


def signature(key, salt, path):
    digest = hmac.new(key, salt + path, hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=")


def signed_target(target, key, salt):
    """Replaces the first segment of `target` with the signature of the rest."""
    if not target.startswith(b"/"):
        return target
    prefix = b""
    if target.startswith(b"/info/"):
        prefix, target = b"/info", target[5:]
    rest = target[1:]
    _, slash, tail = rest.partition(b"/")
    if not slash:
        return prefix + target
    path = b"/" + tail
    return prefix + b"/" + signature(key, salt, path) + path
