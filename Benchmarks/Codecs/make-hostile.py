#!/usr/bin/env python3
"""Makes the hostile JPEG and WebP files of the codec benchmark in a folder (the test suite makes
the same kinds in Tests/AlcedoTests/Hostile at test time). Usage: make-hostile.py DIR"""
import io
import pathlib
import struct
import sys

from PIL import Image

out = pathlib.Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)


def segments(data):
    """(marker, start, end) of each segment after SOI; a scan's end includes its entropy-coded data."""
    index, found = 2, []
    while index + 1 < len(data):
        marker = data[index + 1]
        if marker == 0xD9:
            found.append((marker, index, index + 2))
            break
        end = index + 2 + (data[index + 2] << 8 | data[index + 3])
        if marker == 0xDA:
            while not (data[end] == 0xFF and data[end + 1] != 0 and not 0xD0 <= data[end + 1] <= 0xD7):
                end += 1
        found.append((marker, index, end))
        index = end
    return found


def progressive(width, height, mode="RGB"):
    colour = (120, 130, 140) if mode == "RGB" else (10, 20, 30, 40)
    buffer = io.BytesIO()
    Image.new(mode, (width, height), colour).save(buffer, "JPEG", progressive=True, quality=75)
    return buffer.getvalue()


def repeated_luma_scan(width, height, repeats):
    """A flat progressive picture whose smallest luma-only scan is repeated `repeats` times."""
    data = progressive(width, height)
    parts = segments(data)
    luma = [s for s in parts if s[0] == 0xDA and data[s[1] + 4] == 1 and data[s[1] + 5] == 1]
    marker, start, end = min(luma, key=lambda s: s[2] - s[1])
    eoi = parts[-1][1]
    return data[:eoi] + data[start:end] * repeats + b"\xff\xd9"


def progressive_header(width, height, components):
    """SOI, DQT, SOF2, DHT and a DC scan over every component, then a few bytes: libjpeg reads the
    header and sizes the coefficient buffer from it."""
    data = b"\xff\xd8" + b"\xff\xdb\x00\x43\x00" + b"\x01" * 64
    data += bytes([0xFF, 0xC2, 0, 8 + 3 * components, 8]) + struct.pack(">HHB", height, width, components)
    data += b"".join(bytes([c + 1, 0x11, 0]) for c in range(components))
    data += b"\xff\xc4\x00\x14\x00\x01" + b"\x00" * 15 + b"\x00"
    data += bytes([0xFF, 0xDA, 0, 6 + 2 * components, components])
    data += b"".join(bytes([c + 1, 0]) for c in range(components)) + b"\x00\x00\x00"
    return data + b"\x00" * 64 + b"\xff\xd9"


def chunk(fourcc, payload):
    return fourcc + struct.pack("<I", len(payload)) + payload + (b"\x00" if len(payload) % 2 else b"")


def le24(value):
    return struct.pack("<I", value)[:3]


# A 1x1 lossless picture (cwebp -lossless), as a VP8L chunk.
TINY_VP8L = bytes([0x56, 0x50, 0x38, 0x4C, 0x11, 0x00, 0x00, 0x00, 0x2F, 0x00, 0x00, 0x00, 0x00, 0x07, 0x50, 0x8A,
                   0x2A, 0xD4, 0xA3, 0xFF, 0x81, 0x88, 0xE8, 0x7F, 0x00, 0x00])


def tiny_frames_on_canvas(width, height, offsets):
    vp8x = chunk(b"VP8X", bytes([0x12, 0, 0, 0]) + le24(width - 1) + le24(height - 1))
    anim = chunk(b"ANIM", b"\x00" * 6)
    frames = b"".join(chunk(b"ANMF", le24(x // 2) + le24(y // 2) + le24(0) + le24(0) + le24(100) + b"\x00" + TINY_VP8L)
                      for x, y in offsets)
    body = b"WEBP" + vp8x + anim + frames
    return b"RIFF" + struct.pack("<I", len(body)) + body


files = {
    # Within the limits: the largest progressive picture whose coefficient buffer fits 256 MiB.
    "jpeg-progressive-9000x9000.jpg": progressive(9000, 9000),
    # A thousand repeats of a luma scan over 81 MP: refused after 64 passes over the blocks.
    "jpeg-1010-scans-9000x9000.jpg": repeated_luma_scan(9000, 9000, 1010),
    # Progressive CMYK 10000x10000: an 800 MB coefficient buffer, refused from the header.
    "jpeg-progressive-cmyk-10000x10000.jpg": progressive_header(10000, 10000, 4),
    # One tiny frame on a 16383x6103 canvas (the 92-byte file), and three tiny frames on it.
    "webp-tiny-frame-16383x6103.webp": tiny_frames_on_canvas(16383, 6103, [(0, 0)]),
    "webp-3-tiny-frames-16383x6103.webp": tiny_frames_on_canvas(16383, 6103, [(0, 0), (16380, 6100), (8000, 3000)]),
}

def gif_previous(side):
    """Two full-screen frames, the first disposed to "previous": the restore needs the canvas
    as it was, which a decoder may copy."""
    from PIL import Image
    palette = [0, 0, 0, 255, 0, 0, 0, 255, 0] + [0] * 759
    first, second = Image.new("P", (side, side), 1), Image.new("P", (side, side), 2)
    first.putpalette(palette)
    second.putpalette(palette)
    buffer = io.BytesIO()
    first.save(buffer, "GIF", save_all=True, append_images=[second], disposal=3, duration=100, loop=0)
    return buffer.getvalue()


files["gif-previous-8000x8000.gif"] = gif_previous(8000)
for name, data in files.items():
    (out / name).write_bytes(data)
print("\n".join(sorted(files)))
