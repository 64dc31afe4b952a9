#!/usr/bin/env python3
"""Makes the HEIC fixtures that heif-enc 1.15 cannot write: grid images and transforms.

Run from this folder after make.py: python3 make_heic_boxes.py (numpy, Pillow; heif-enc and
heif-convert from libheif-examples 1.15).

How: each picture (a 64x64 grid tile, or a small whole picture) is encoded on its own with
heif-enc; the script reads that file's ISO-BMFF boxes, keeps the primary item's `hvcC`
property and its coded bytes (the `iloc` extents in `mdat`), and writes a new file around
them: `ftyp`, `meta` (`hdlr`, `pitm`, `iinf`/`infe`, `iref`/`dimg`, `iprp` with
`ipco` + `ipma`, `iloc`, `idat`) and `mdat` (ISO/IEC 23008-12 and 14496-12 layouts).

Files (references are heif-convert's PNG output, `<file>.ref.png`, which assembles grids and
applies irot/imir/clap):
- `grid-2x2.heic`: a `grid` item, 2x2 tiles of 64x64, output 128x128 (`ImageGrid` in
  `idat`); each tile is a different colour with a different gradient, so a tile in the wrong
  place is obvious. `grid-source.png` is the picture that was tiled.
- `grid-cropped.heic`: the same tiles, output 120x100 (right and bottom tiles cropped).
- `grid-10bit.heic`: the 2x2 grid with 10-bit tiles (`pixi` 10,10,10), encoded from a 16-bit
  copy of the source picture.
- `grid-irot1-imir0.heic`: the cropped grid with `irot` 1 (90 degrees anti-clockwise) then `imir`
  axis 0 on the grid item.
- `irot1.heic`, `irot2.heic`, `irot3.heic`, `imir0.heic`, `imir1.heic`, `clap.heic`: one
  96x64 HEVC item (red 16x16 marker in the top-left corner) with `irot` angle 1/2/3, `imir`
  axis 0/1, or a centred 80x48 `clap`. `transform-source.png` is the stored picture.
- `grid-huge.heic` (hostile): a grid whose `ispe` and `ImageGrid` (32-bit fields) declare
  60000x60000 over the same four 64x64 tiles. No reference.
- `grid-lying.heic` (hostile): a grid whose `ispe` says 128x128 but whose `ImageGrid`
  declares 30000x30000; its first tile's coded bytes are zeros, so a decoder that lets
  libheif start (libheif allocates the whole output before decoding the first tile) reports
  a corrupt tile, while one that checks the grid's declared size first refuses it. No reference.
- `grid-uncovered.heic` (hostile): the 2x2 tiles of 64x64 under a 200x200 output; libheif
  1.15 leaves the uncovered part of its canvas uninitialised. No reference.
- `grid-tile-gap.heic` (hostile): tiles coded 64x64 whose `ispe` says 100x100, output 200x200;
  libheif places them 100 pixels apart and leaves the gaps uninitialised. No reference.
- `grid-ispe-mismatch.heic` (hostile): the 2x2 tiles under a 120x100 `ImageGrid` output whose
  `ispe` says 128x128; libheif reports the `ispe` size for the item but assembles the
  `ImageGrid` size. No reference.
- `grid-cycle.heic` (hostile): two 1x1 grids whose `dimg` references name each other; libheif
  1.15 recurses between them until its stack overflows (heif-convert dies of SIGSEGV). No reference.
"""
import os, struct, subprocess, tempfile, zlib
import numpy as np
from PIL import Image

TMP = tempfile.mkdtemp(prefix="alcedo-heic-")


def run(*args):
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


# --- reading boxes -------------------------------------------------------------------------

def boxes(data, start=0, end=None):
    """Yields (type, payload start, payload end) for the boxes in data[start:end]."""
    end = len(data) if end is None else end
    pos = start
    while pos + 8 <= end:
        size, kind = struct.unpack(">I4s", data[pos:pos + 8])
        header = 8
        if size == 1:
            size = struct.unpack(">Q", data[pos + 8:pos + 16])[0]
            header = 16
        elif size == 0:
            size = end - pos
        yield kind.decode("latin-1"), pos + header, pos + size
        pos += size


def child(data, start, end, kind):
    return next((s, e) for k, s, e in boxes(data, start, end) if k == kind)


def read_single_item(path):
    """The primary item's hvcC box (whole, with header), ispe size and coded bytes."""
    data = open(path, "rb").read()
    ms, me = child(data, 0, len(data), "meta")
    ms += 4  # FullBox header
    ps, pe = child(data, ms, me, "pitm")
    primary = struct.unpack(">H", data[ps + 4:ps + 6])[0]
    ips, ipe = child(data, ms, me, "iprp")
    cs, ce = child(data, ips, ipe, "ipco")
    props = [(k, data[s - 8:e]) for k, s, e in boxes(data, cs, ce)]
    hvcc = next(box for k, box in props if k == "hvcC")
    ispe = next(box for k, box in props if k == "ispe")
    width, height = struct.unpack(">II", ispe[12:20])
    ls, le = child(data, ms, me, "iloc")
    version = data[ls]
    assert version == 0, "heif-enc 1.15 writes iloc version 0"
    sizes = data[ls + 4] << 8 | data[ls + 5]
    off_size, len_size, base_size = sizes >> 12, (sizes >> 8) & 15, (sizes >> 4) & 15
    count = struct.unpack(">H", data[ls + 6:ls + 8])[0]
    pos = ls + 8

    def number(n):
        nonlocal pos
        value = int.from_bytes(data[pos:pos + n], "big") if n else 0
        pos += n
        return value

    coded = None
    for _ in range(count):
        item = number(2)
        number(2)  # data_reference_index
        base = number(base_size)
        parts = []
        for _ in range(number(2)):
            offset, length = number(off_size), number(len_size)
            parts.append(data[base + offset:base + offset + length])
        if item == primary:
            coded = b"".join(parts)
    return hvcc, (width, height), coded


# --- writing boxes -------------------------------------------------------------------------

def box(kind, payload):
    return struct.pack(">I4s", 8 + len(payload), kind.encode()) + payload


def full_box(kind, version, flags, payload):
    return box(kind, struct.pack(">I", version << 24 | flags) + payload)


def ispe(width, height):
    return full_box("ispe", 0, 0, struct.pack(">II", width, height))


def pixi(bits=8):
    return full_box("pixi", 0, 0, bytes([3, bits, bits, bits]))


def irot(angle):
    return box("irot", bytes([angle & 3]))


def imir(axis):
    return box("imir", bytes([axis & 1]))


def clap(width, height):
    # Clean aperture width/height and a centred offset of 0 (offsets count from the centre).
    return box("clap", struct.pack(">IIIIiIiI", width, 1, height, 1, 0, 1, 0, 1))


def image_grid(rows, columns, width, height):
    if width > 0xFFFF or height > 0xFFFF:
        return struct.pack(">BBBBII", 0, 1, rows - 1, columns - 1, width, height)
    return struct.pack(">BBBBHH", 0, 0, rows - 1, columns - 1, width, height)


def heic(items, primary, references=()):
    """items: dicts with id, type, props (list of property boxes), data (bytes),
    in_idat (bool). references: (from, [to...]) `dimg` references. Returns the file bytes."""
    ftyp = box("ftyp", b"heic" + struct.pack(">I", 0) + b"mif1heicmiaf")
    hdlr = full_box("hdlr", 0, 0, struct.pack(">I", 0) + b"pict" + bytes(12) + b"\0")
    pitm = full_box("pitm", 0, 0, struct.pack(">H", primary))
    # Tiles are hidden items (infe flags 1), as in the files phones write.
    infes = b"".join(full_box("infe", 2, 1 if item.get("hidden") else 0,
                              struct.pack(">HH", item["id"], 0) + item["type"].encode() + b"\0")
                     for item in items)
    iinf = full_box("iinf", 0, 0, struct.pack(">H", len(items)) + infes)
    iref = b""
    if references:
        iref = full_box("iref", 0, 0, b"".join(
            box("dimg", struct.pack(">HH", source, len(targets)) + b"".join(struct.pack(">H", t) for t in targets))
            for source, targets in references))
    # Properties: identical boxes are shared, as encoders do.
    ipco_boxes, associations = [], []
    for item in items:
        indices = []
        for prop in item["props"]:
            if prop not in ipco_boxes:
                ipco_boxes.append(prop)
            kind = prop[4:8].decode()
            essential = kind in ("hvcC", "irot", "imir", "clap")
            indices.append((ipco_boxes.index(prop) + 1) | (0x80 if essential else 0))
        associations.append(struct.pack(">HB", item["id"], len(indices)) + bytes(indices))
    ipco = box("ipco", b"".join(ipco_boxes))
    ipma = full_box("ipma", 0, 0, struct.pack(">I", len(items)) + b"".join(associations))
    iprp = box("iprp", ipco + ipma)
    idat_payload = b"".join(item["data"] for item in items if item["in_idat"])
    idat = box("idat", idat_payload) if idat_payload else b""

    def iloc(mdat_start):
        # Version 1 (construction_method), 4-byte offsets and lengths, no base offset.
        entries, mdat_pos, idat_pos = [], mdat_start, 0
        for item in items:
            if item["in_idat"]:
                method, offset = 1, idat_pos
                idat_pos += len(item["data"])
            else:
                method, offset = 0, mdat_pos
                mdat_pos += len(item["data"])
            entries.append(struct.pack(">HHHHII", item["id"], method, 0, 1, offset, len(item["data"])))
        return full_box("iloc", 1, 0, struct.pack(">BBH", 0x44, 0x00, len(items)) + b"".join(entries))

    def meta(mdat_start):
        return full_box("meta", 0, 0, hdlr + pitm + iloc(mdat_start) + iinf + iref + iprp + idat)

    mdat_payload = b"".join(item["data"] for item in items if not item["in_idat"])
    mdat_start = len(ftyp) + len(meta(0)) + 8
    return ftyp + meta(mdat_start) + box("mdat", mdat_payload)


def save_rgb16_png(pixels, path):
    """A 16-bit RGB PNG (Pillow writes 16 bits for gray only); heif-enc -b 10 needs deep input."""
    deep = pixels.astype(">u2") * 257
    rows = b"".join(b"\0" + row.tobytes() for row in deep)  # filter type 0 on every row

    def chunk(kind, payload):
        return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))

    header = struct.pack(">IIBBBBB", pixels.shape[1], pixels.shape[0], 16, 2, 0, 0, 0)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b""))


def encode_picture(pixels, name, quality="95", bits=8):
    if bits > 8:
        save_rgb16_png(pixels, f"{TMP}/{name}.png")
    else:
        Image.fromarray(pixels, "RGB").save(f"{TMP}/{name}.png")
    run("heif-enc", "-q", quality, "-b", str(bits), "-o", f"{TMP}/{name}.heic", f"{TMP}/{name}.png")
    return read_single_item(f"{TMP}/{name}.heic")


def write(name, content, reference=True):
    with open(name, "wb") as f:
        f.write(content)
    if reference:
        run("heif-convert", name, f"{name}.ref.png")
    print(f"{name}: {len(content)} bytes")


# --- the pictures --------------------------------------------------------------------------

T = 64
y, x = np.mgrid[0:T, 0:T]
tile_colours = [(220, 40, 40), (40, 200, 60), (50, 70, 230), (230, 210, 40)]  # tl, tr, bl, br
source = np.zeros((2 * T, 2 * T, 3), np.uint8)
for index, (r, g, b) in enumerate(tile_colours):
    ty, tx = divmod(index, 2)
    shade = (x + y) * 30 // (2 * T - 2)  # a soft gradient, different in every tile
    tile = np.stack([np.full_like(x, r), np.full_like(x, g), np.full_like(x, b)], -1) - shade[..., None] * (index % 2 * 2 - 1)
    source[ty * T:(ty + 1) * T, tx * T:(tx + 1) * T] = np.clip(tile, 0, 255)
Image.fromarray(source, "RGB").save("grid-source.png")

def encode_tiles(bits):
    return [encode_picture(np.ascontiguousarray(source[ty * T:(ty + 1) * T, tx * T:(tx + 1) * T]), f"tile{ty}{tx}-{bits}", bits=bits)
            for ty in range(2) for tx in range(2)]


tiles, tiles10 = encode_tiles(8), encode_tiles(10)


def grid_file(width, height, grid_props=(), ispe_size=None, broken_first_tile=False, bits=8, tile_ispe=None):
    items = [{"id": 1, "type": "grid", "in_idat": True, "data": image_grid(2, 2, width, height),
              "props": [ispe(*(ispe_size or (width, height))), pixi(bits), *grid_props]}]
    for index, (hvcc, size, coded) in enumerate(tiles if bits == 8 else tiles10):
        data = bytes(len(coded)) if broken_first_tile and index == 0 else coded
        items.append({"id": index + 2, "type": "hvc1", "in_idat": False, "data": data, "hidden": True,
                      "props": [hvcc, ispe(*(tile_ispe or size)), pixi(bits)]})
    return heic(items, primary=1, references=[(1, [2, 3, 4, 5])])


write("grid-2x2.heic", grid_file(128, 128))
write("grid-cropped.heic", grid_file(120, 100))
write("grid-10bit.heic", grid_file(128, 128, bits=10))
write("grid-irot1-imir0.heic", grid_file(120, 100, grid_props=[irot(1), imir(0)]))
write("grid-huge.heic", grid_file(60000, 60000), reference=False)
write("grid-lying.heic", grid_file(30000, 30000, ispe_size=(128, 128), broken_first_tile=True), reference=False)
write("grid-uncovered.heic", grid_file(200, 200), reference=False)
write("grid-tile-gap.heic", grid_file(200, 200, tile_ispe=(100, 100)), reference=False)
write("grid-ispe-mismatch.heic", grid_file(120, 100, ispe_size=(128, 128)), reference=False)
cycle = [{"id": 1, "type": "grid", "in_idat": True, "data": image_grid(1, 1, 64, 64), "props": [ispe(64, 64), pixi()]},
         {"id": 2, "type": "grid", "in_idat": True, "data": image_grid(1, 1, 64, 64), "props": [ispe(64, 64), pixi()],
          "hidden": True}]
write("grid-cycle.heic", heic(cycle, primary=1, references=[(1, [2]), (2, [1])]), reference=False)

h, w = 64, 96  # heif-enc 1.15 wraps pictures under 64 pixels in a 1x1 grid
y, x = np.mgrid[0:h, 0:w]
picture = np.stack([x * 255 // (w - 1), y * 255 // (h - 1), np.full_like(x, 128)], -1).astype(np.uint8)
picture[:16, :16] = [255, 0, 0]  # the marker shows where the stored top-left corner went
Image.fromarray(picture, "RGB").save("transform-source.png")
hvcc, size, coded = encode_picture(picture, "transform")


def single(props):
    return heic([{"id": 1, "type": "hvc1", "in_idat": False, "data": coded,
                  "props": [hvcc, ispe(*size), pixi(), *props]}], primary=1)


for angle in (1, 2, 3):
    write(f"irot{angle}.heic", single([irot(angle)]))
for axis in (0, 1):
    write(f"imir{axis}.heic", single([imir(axis)]))
write("clap.heic", single([clap(80, 48)]))
print("done")
