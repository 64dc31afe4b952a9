#!/usr/bin/env python3
"""Makes references.json: the expected RGBA8 of every PNG fixture, for PNGReferenceTests.

Run from the Fixtures folder: python3 png-generated/make_references.py

Samples are read by the small zlib + numpy reader below (no libpng), cross-checked against
Pillow for every file of 8 bits or fewer. Pillow is not used as the reference itself because
it truncates 16-bit RGB to 8 bits and mishandles tRNS in 1/2/4-bit gray files (it compares the
key to the scaled sample).

The expected pixels follow the decoder's gamma decision: a gAMA chunk (without sRGB) more than
5% away from 1/2.2 converts samples with out = in ** (1 / (gamma * 2.2)); untagged files keep
their samples at every bit depth; 16-bit samples round to 8 bits (round(v * 255 / 65535)).

For each file the JSON gives the size and a 64-bit digest of the expected RGBA (see digest()).
libpng converts 16-bit samples through a reduced-precision gamma table, so a gamma-converted
16-bit file is not compared by digest: its expected RGBA is stored as an untagged 8-bit RGBA
PNG next to this script ("reference", named by its digest), itself checked by digest, and compared with tolerance.
"""
import glob, json, os, struct, sys, zlib
import numpy as np
from PIL import Image

PRIME = 0x100000001B3
MASK = (1 << 64) - 1


def digest(data: bytes) -> str:
    """FNV-1a over little-endian 64-bit words (the tail zero-padded), then the length."""
    h = 0xCBF29CE484222325
    padded = data + b'\0' * (-len(data) % 8)
    for (w,) in struct.iter_unpack('<Q', padded):
        h = ((h ^ w) * PRIME) & MASK
    h = ((h ^ len(data)) * PRIME) & MASK
    return f'{h:016x}'


def chunks(d):
    p = 8
    while p + 8 <= len(d):
        n, t = struct.unpack('>I4s', d[p:p + 8])
        yield t.decode('latin1'), d[p + 8:p + 8 + n]
        p += 12 + n


def unfilter(raw, w, h, depth, channels):
    bpp = max(1, depth * channels // 8)
    stride = (w * depth * channels + 7) // 8
    out = np.zeros((h, stride), dtype=np.uint8)
    pos = 0
    prev = np.zeros(stride, dtype=np.int32)
    for y in range(h):
        ft = raw[pos]
        line = np.frombuffer(raw[pos + 1:pos + 1 + stride], dtype=np.uint8).astype(np.int32)
        pos += 1 + stride
        cur = np.zeros(stride, dtype=np.int32)
        if ft == 0:
            cur = line.copy()
        elif ft == 2:
            cur = (line + prev) & 255
        else:
            for x in range(stride):
                a = cur[x - bpp] if x >= bpp else 0
                b = prev[x]
                c = prev[x - bpp] if x >= bpp else 0
                if ft == 1:
                    v = a
                elif ft == 3:
                    v = (a + b) >> 1
                elif ft == 4:
                    pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                    v = a if (pa <= pb and pa <= pc) else (b if pb <= pc else c)
                else:
                    raise ValueError('bad filter')
                cur[x] = (line[x] + v) & 255
        out[y] = cur
        prev = cur
    return out, pos


def unpack(rows, w, depth, channels):
    h = rows.shape[0]
    if depth == 16:
        return rows.view('>u2').astype(np.int64)[:, :w * channels].reshape(h, w, channels)
    if depth == 8:
        return rows[:, :w * channels].astype(np.int64).reshape(h, w, channels)
    bits = np.unpackbits(rows, axis=1)
    vals = np.zeros((h, w), dtype=np.int64)
    for b in range(depth):
        vals = (vals << 1) | bits[:, b:w * depth:depth][:, :w]
    return vals.reshape(h, w, 1)


def read(path):
    d = open(path, 'rb').read()
    idat, plte, trns, gamma, srgb = b'', None, None, None, False
    for t, c in chunks(d):
        if t == 'IHDR':
            w, h, depth, ctype, _, _, interlace = struct.unpack('>IIBBBBB', c)
        elif t == 'PLTE':
            plte = np.frombuffer(c, dtype=np.uint8).reshape(-1, 3).astype(np.int64)
        elif t == 'tRNS':
            trns = c
        elif t == 'gAMA':
            gamma = struct.unpack('>I', c)[0] / 100000.0
        elif t == 'sRGB':
            srgb = True
        elif t == 'IDAT':
            idat += c
    raw = zlib.decompress(idat)
    channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[ctype]
    if interlace:
        samples = np.zeros((h, w, channels), dtype=np.int64)
        pos = 0
        for (x0, y0, dx, dy) in [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]:
            pw, ph = (w - x0 + dx - 1) // dx, (h - y0 + dy - 1) // dy
            if pw and ph:
                rows, n = unfilter(raw[pos:], pw, ph, depth, channels)
                pos += n
                samples[y0::dy, x0::dx] = unpack(rows, pw, depth, channels)
    else:
        samples = unpack(unfilter(raw, w, h, depth, channels)[0], w, depth, channels)
    maxv = (1 << depth) - 1
    rgba = np.zeros((h, w, 4))
    if ctype == 3:
        idx = samples[:, :, 0]
        rgba[:, :, :3] = plte[idx] / 255.0
        alpha = np.full(256, 255)
        if trns is not None:
            alpha[:len(trns)] = np.frombuffer(trns, dtype=np.uint8)
        rgba[:, :, 3] = alpha[idx] / 255.0
    else:
        if ctype in (0, 4):
            rgba[:, :, :3] = samples[:, :, :1] / maxv
        else:
            rgba[:, :, :3] = samples[:, :, :3] / maxv
        rgba[:, :, 3] = samples[:, :, -1] / maxv if ctype in (4, 6) else 1.0
        if trns is not None and ctype in (0, 2):
            key = struct.unpack('>%dH' % (1 if ctype == 0 else 3), trns[:2 if ctype == 0 else 6])
            mask = np.all(samples[:, :, :len(key)] == np.array(key), axis=2)
            rgba[mask, 3] = 0
    converted = gamma is not None and not srgb and abs(gamma * 2.2 - 1) > 0.05
    if converted:
        rgba[:, :, :3] = rgba[:, :, :3] ** (1.0 / (gamma * 2.2))
    expected = np.floor(rgba * 255 + 0.5).astype(np.uint8)
    return w, h, depth, expected, converted


def main():
    files = sorted(glob.glob('libpng/testpngs/*.png') + glob.glob('go-image/png-testdata/pngsuite/*.png')
                   + [f for f in glob.glob('go-image/png-testdata/*.png') if 'invalid-' not in os.path.basename(f)])
    references = []
    pillow_tRNS_bug = 0
    for f in files:
        w, h, depth, expected, converted = read(f)
        if depth <= 8 and not converted:
            pillow = np.asarray(Image.open(f).convert('RGBA'))
            if not np.array_equal(pillow, expected):
                same_colour = np.array_equal(pillow[:, :, :3], expected[:, :, :3])
                assert same_colour and Image.open(f).mode == 'L' and depth < 8, f
                pillow_tRNS_bug += 1
        entry = {'file': f, 'width': w, 'height': h, 'digest': digest(expected.tobytes())}
        if depth == 16 and converted:
            name = 'png-generated/expected-' + entry['digest'] + '.png'
            if not os.path.exists(name):
                Image.fromarray(expected, 'RGBA').save(name, optimize=True)
            entry['reference'] = name
        references.append(entry)
    with open('png-generated/references.json', 'w') as out:
        json.dump(references, out, indent=1)
        out.write('\n')
    print(len(references), 'files;', pillow_tRNS_bug, 'differ from Pillow only by its low-bit gray tRNS bug', file=sys.stderr)


if __name__ == '__main__':
    main()
