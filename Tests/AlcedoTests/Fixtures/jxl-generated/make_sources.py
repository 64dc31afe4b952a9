#!/usr/bin/env python3
"""Writes the 16-bit PPM/PGM and animated GIF sources that make.sh encodes (plain python3)."""
import struct


def ppm16(path, width, height, channels, pixel):
    magic = b"P6" if channels == 3 else b"P5"
    with open(path, "wb") as f:
        f.write(magic + b"\n%d %d\n65535\n" % (width, height))
        for y in range(height):
            for x in range(width):
                for value in pixel(x, y)[:channels]:
                    f.write(struct.pack(">H", value))


def gif(path, width, height, frames, delays, loops):
    """An animated GIF with a 4-colour global palette. The LZW stream sends a clear code
    before every pixel code, so codes stay 3 bits wide and no dictionary is needed."""
    palette = [(0, 0, 0), (255, 0, 0), (0, 200, 0), (30, 60, 255)]
    out = bytearray(b"GIF89a")
    out += struct.pack("<HHBBB", width, height, 0x80 | 0x01, 0, 0)  # global table, 2^(1+1) = 4 colours
    for r, g, b in palette:
        out += bytes((r, g, b))
    out += b"\x21\xff\x0bNETSCAPE2.0\x03\x01" + struct.pack("<H", loops) + b"\x00"
    for frame, delay in zip(frames, delays):
        out += b"\x21\xf9\x04\x04" + struct.pack("<H", delay) + b"\x00\x00"  # disposal 1 (keep)
        out += b"\x2c" + struct.pack("<HHHHB", 0, 0, width, height, 0)
        min_code = 2
        clear, end = 1 << min_code, (1 << min_code) + 1
        codes = []
        for index in frame:
            codes += [clear, index]
        codes.append(end)
        bits = 0
        nbits = 0
        data = bytearray()
        for code in codes:
            bits |= code << nbits
            nbits += 3
            while nbits >= 8:
                data.append(bits & 0xFF)
                bits >>= 8
                nbits -= 8
        if nbits:
            data.append(bits & 0xFF)
        out.append(min_code)
        for i in range(0, len(data), 255):
            chunk = data[i:i + 255]
            out.append(len(chunk))
            out += chunk
        out.append(0)
    out.append(0x3B)
    with open(path, "wb") as f:
        f.write(out)


ppm16("rgb16.ppm", 48, 32, 3, lambda x, y: (x * 1365, y * 2047, (x * y * 37) % 65536))
ppm16("gray16.pgm", 64, 32, 1, lambda x, y: ((x * 1024 + y * 31) % 65536,))
w, h = 32, 24
frames = [
    [1 if x < w // 2 else 2 for y in range(h) for x in range(w)],
    [3 if y < h // 2 else 0 for y in range(h) for x in range(w)],
    [(x // 4 + y // 4) % 4 for y in range(h) for x in range(w)],
]
gif("anim.gif", w, h, frames, [10, 20, 30], 3)
