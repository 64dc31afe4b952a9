#!/usr/bin/env python3
"""Regenerates the JPEG reference data for Alcedo's JPEG tests.

Run from this folder with libjpeg-turbo's djpeg (2.1.x) and Pillow installed:
    python3 generate.py
It writes the small reference files next to itself and prints the FNV-1a hashes that
JPEGDecoderTests.swift records for the larger references (not committed as files).
"""
import struct
import subprocess
from pathlib import Path

from PIL import Image

HERE = Path(__file__).resolve().parent
FIXTURES = HERE.parent
GO = FIXTURES / "go-image" / "image-testdata"
LIBJPEG = FIXTURES / "libjpeg-turbo"


def djpeg(path, *arguments, data=None):
    """djpeg's PPM/PGM output for a file (or bytes), with its default settings."""
    if data is None:
        data = Path(path).read_bytes()
    result = subprocess.run(["djpeg", *arguments, "-ppm"], input=data, capture_output=True)
    # Exit status 2 means "finished with warnings" (for example a premature end of file).
    if result.returncode not in (0, 2):
        raise RuntimeError(result.stderr.decode())
    return result.stdout


def rgb_of(pnm):
    """(width, height, RGB bytes) of binary PPM or PGM data; gray samples are tripled."""
    parts = pnm.split(maxsplit=4)
    magic, width, height = parts[0], int(parts[1]), int(parts[2])
    pixels = parts[4]
    if magic == b"P5":
        pixels = bytes(b for b in pixels[: width * height] for _ in range(3))
    return width, height, pixels[: width * height * 3]


def fnv1a64(data):
    value = 0xCBF29CE484222325
    for byte in data:
        value = ((value ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return value


def write_references():
    # testimgint.jpg (progressive) and testimgari.jpg (arithmetic) hold the same coefficients:
    # djpeg decodes both to the same bytes, so one reference serves both.
    progressive = djpeg(LIBJPEG / "testimgint.jpg")
    assert progressive == djpeg(LIBJPEG / "testimgari.jpg")
    (HERE / "testimgint.ppm").write_bytes(progressive)
    (HERE / "testorig.scale-1-4.ppm").write_bytes(djpeg(LIBJPEG / "testorig.jpg", "-scale", "1/4"))


def write_sequential_multiscan():
    """A sequential (not progressive) file with one scan per component, from a 48x32 crop of
    testorig.ppm: the decoder must notice when a component's scan is missing."""
    crop = Image.open(LIBJPEG / "testorig.ppm").crop((64, 48, 112, 80))
    script = HERE / "scans.tmp"
    script.write_text("0;\n1;\n2;\n")
    ppm = HERE / "crop.tmp"
    crop.save(ppm, format="PPM")
    try:
        data = subprocess.run(["cjpeg", "-quality", "75", "-scans", str(script), str(ppm)],
                              capture_output=True, check=True).stdout
    finally:
        script.unlink()
        ppm.unlink()
    (HERE / "sequential-3-scans.jpg").write_bytes(data)


def print_hashes():
    cases = [(GO / name, []) for name in sorted(p.name for p in GO.glob("*.jpeg"))]
    cases += [(HERE / "sequential-3-scans.jpg", []), (LIBJPEG / "testorig.jpg", []), (LIBJPEG / "testorig.jpg", ["-scale", "1/2"]), (LIBJPEG / "testorig.jpg", ["-scale", "1/8"])]
    for path, arguments in cases:
        width, height, rgb = rgb_of(djpeg(path, *arguments))
        print(f'("{path.name}", "{" ".join(arguments)}", {width}, {height}, 0x{fnv1a64(rgb):016X}),')
    # testorig.jpg cut after 3000 bytes: djpeg warns "Premature end of JPEG file" and fills grey.
    data = (LIBJPEG / "testorig.jpg").read_bytes()[:3000]
    width, height, rgb = rgb_of(djpeg(None, data=data))
    print(f'("testorig.jpg", "first 3000 bytes", {width}, {height}, 0x{fnv1a64(rgb):016X}),')


# The upright pattern of the orientation files: 3 x 2 flat 8x8 blocks of distinct colours,
# aligned with the JPEG block grid so that each block decodes the same wherever it is stored.
COLORS = [(255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 0), (0, 0, 0), (255, 255, 255)]


def upright_pattern():
    image = Image.new("RGB", (24, 16))
    for index, color in enumerate(COLORS):
        x, y = (index % 3) * 8, (index // 3) * 8
        image.paste(color, (x, y, x + 8, y + 8))
    return image


# How to store the upright picture so that applying orientation N stands it upright again.
STORE = {
    1: None,
    2: Image.Transpose.FLIP_LEFT_RIGHT,
    3: Image.Transpose.ROTATE_180,
    4: Image.Transpose.FLIP_TOP_BOTTOM,
    5: Image.Transpose.TRANSPOSE,
    6: Image.Transpose.ROTATE_90,
    7: Image.Transpose.TRANSVERSE,
    8: Image.Transpose.ROTATE_270,
}


def exif_segment(orientation, big_endian):
    """An APP1 payload: Exif\\0\\0, a TIFF header and IFD0 holding only the orientation tag."""
    order = ">" if big_endian else "<"
    tiff = (b"MM" if big_endian else b"II") + struct.pack(order + "HI", 42, 8)
    tiff += struct.pack(order + "H", 1)
    tiff += struct.pack(order + "HHIHH", 0x0112, 3, 1, orientation, 0)
    tiff += struct.pack(order + "I", 0)
    return b"Exif\x00\x00" + tiff


def write_orientation_files():
    upright = upright_pattern()
    for orientation, method in STORE.items():
        stored = upright if method is None else upright.transpose(method)
        path = HERE / f"orientation-{orientation}.jpg"
        # Odd orientations get big-endian (MM) EXIF, even ones little-endian (II).
        exif = exif_segment(orientation, big_endian=orientation % 2 == 1)
        stored.save(path, quality=100, subsampling=0, exif=exif)
        if orientation == 8:
            # An XMP APP1 segment before the EXIF one: the reader must skip it.
            data = path.read_bytes()
            xmp = b"http://ns.adobe.com/xap/1.0/\x00<x:xmpmeta/>"
            segment = b"\xff\xe1" + struct.pack(">H", len(xmp) + 2) + xmp
            path.write_bytes(data[:2] + segment + data[2:])
        # Check with Pillow that the file stands upright as intended.
        from PIL import ImageOps
        check = ImageOps.exif_transpose(Image.open(path)).convert("RGB")
        assert check.size == (24, 16), (orientation, check.size)
        for index, color in enumerate(COLORS):
            got = check.getpixel(((index % 3) * 8 + 4, (index // 3) * 8 + 4))
            assert max(abs(a - b) for a, b in zip(got, color)) <= 4, (orientation, index, got, color)


if __name__ == "__main__":
    write_references()
    write_orientation_files()
    write_sequential_multiscan()
    print_hashes()
