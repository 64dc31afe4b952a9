#!/usr/bin/env python3
"""Makes references.json: the expected composited RGBA8 frames of every GIF fixture, for GIFReferenceTests.

Run from the Fixtures folder: python3 gif-generated/make_references.py

The script has its own GIF reader (record parser, LZW decoder) and compositor written from the
GIF89a specification, following the rules GIFDecoder documents: a transparent canvas, frames
drawn at their offsets and clipped, the transparent index left undrawn, disposal 0/1 keep,
2 clears the frame's area, 3 restores it; missing or <= 1 cs delays become 100 ms; the loop
count is the number of plays (no NETSCAPE2.0: 1, NETSCAPE 0: forever = 0, N: N + 1); a single
frame is a still (duration 0, loop count 0).

Checks made here: the first frame matches Pillow's decode (convert('RGBA')) for every file, and
for every file with a giflib reference (giflib/tests/*.rgb, the output of `gif2rgb -1`), the last
frame's opaque pixels match it (gif2rgb paints every image of the file on one screen, ignoring
transparency and disposal, so it shows the last frame where that frame is opaque).

For each file the JSON gives the size, loop count, frame durations and a 64-bit digest of each
frame's RGBA (the same digest as png-generated/make_references.py).
"""
import glob, json, os, struct, sys
import numpy as np
from PIL import Image

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'png-generated'))
from make_references import digest  # noqa: E402


def lzw_decode(data, min_size, count):
    clear, end = 1 << min_size, (1 << min_size) + 1
    out = []
    width = min_size + 1
    table = [[i] for i in range(clear)] + [[], []]
    prev = None
    bits = nbits = 0
    pos = 0
    while len(out) < count:
        while nbits < width:
            if pos >= len(data):
                return out
            bits |= data[pos] << nbits
            nbits += 8
            pos += 1
        code = bits & ((1 << width) - 1)
        bits >>= width
        nbits -= width
        if code == clear:
            width = min_size + 1
            table = table[:clear + 2]
            prev = None
            continue
        if code == end:
            break
        if prev is None:
            entry = table[code]
        elif code < len(table):
            entry = table[code]
            if len(table) < 4096:
                table.append(table[prev] + [entry[0]])
        else:
            entry = table[prev] + [table[prev][0]]
            table.append(entry)
        out.extend(entry)
        prev = code
        if len(table) == (1 << width) and width < 12:
            width += 1
    return out[:count]


def parse(path):
    d = open(path, 'rb').read()
    w, h, flags = struct.unpack('<HHB', d[6:11])
    p = 13
    gct = None
    if flags & 0x80:
        n = 2 << (flags & 7)
        gct = np.frombuffer(d[p:p + 3 * n], dtype=np.uint8).reshape(-1, 3)
        p += 3 * n
    frames, gce, loops = [], None, None
    while p < len(d):
        b = d[p]
        p += 1
        if b == 0x21:
            label = d[p]
            p += 1
            blocks = []
            while True:
                n = d[p]
                p += 1
                if n == 0:
                    break
                blocks.append(d[p:p + n])
                p += n
            if label == 0xF9 and blocks and len(blocks[0]) >= 4:
                bb = blocks[0]
                gce = dict(disposal=(bb[0] >> 2) & 7, delay=bb[1] | bb[2] << 8, transparent=bb[3] if bb[0] & 1 else None)
            elif label == 0xFF and blocks and blocks[0] in (b'NETSCAPE2.0', b'ANIMEXTS1.0'):
                for blk in blocks[1:]:
                    if loops is None and len(blk) >= 3 and blk[0] == 1:
                        loops = blk[1] | blk[2] << 8
        elif b == 0x2C:
            x, y, fw, fh, f = struct.unpack('<HHHHB', d[p:p + 9])
            p += 9
            table = gct
            if f & 0x80:
                n = 2 << (f & 7)
                table = np.frombuffer(d[p:p + 3 * n], dtype=np.uint8).reshape(-1, 3)
                p += 3 * n
            min_size = d[p]
            p += 1
            data = b''
            while True:
                n = d[p]
                p += 1
                if n == 0:
                    break
                data += d[p:p + n]
                p += n
            pixels = lzw_decode(data, min_size, fw * fh)
            rows = list(range(fh))
            if f & 0x40:
                rows = list(range(0, fh, 8)) + list(range(4, fh, 8)) + list(range(2, fh, 4)) + list(range(1, fh, 2))
            frames.append(dict(x=x, y=y, w=fw, h=fh, table=table, pixels=pixels, rows=rows, gce=gce))
            gce = None
        elif b == 0x3B:
            break
        else:
            raise ValueError('unexpected byte')
    return w, h, frames, loops


def composite(w, h, frames):
    canvas = np.zeros((h, w, 4), dtype=np.uint8)
    out = []
    for fr in frames:
        gce = fr['gce'] or {}
        disposal, transparent = gce.get('disposal', 0), gce.get('transparent')
        x0, y0 = fr['x'], fr['y']
        x1, y1 = min(w, x0 + fr['w']), min(h, y0 + fr['h'])
        saved = canvas[y0:y1, x0:x1].copy() if x1 > x0 and y1 > y0 else None
        table = fr['table']
        for k, row in enumerate(fr['rows']):
            line = fr['pixels'][k * fr['w']:(k + 1) * fr['w']]
            cy = y0 + row
            if cy >= h:
                continue
            for col, index in enumerate(line):
                cx = x0 + col
                if cx >= w or index == transparent:
                    continue
                rgb = table[index] if table is not None and index < len(table) else ((0, 0, 0) if table is not None else (index,) * 3)
                canvas[cy, cx] = (*rgb, 255)
        out.append(canvas.copy())
        if saved is not None:
            if disposal == 2:
                canvas[y0:y1, x0:x1] = 0
            elif disposal == 3:
                canvas[y0:y1, x0:x1] = saved
    return out


def main():
    files = sorted(glob.glob('giflib/pic/*.gif') + glob.glob('go-image/image-testdata/*.gif'))
    references = []
    for f in files:
        w, h, frames, loops = parse(f)
        composited = composite(w, h, frames)
        pillow = np.asarray(Image.open(f).convert('RGBA'))
        first = composited[0]
        opaque = first[:, :, 3] == 255
        assert np.array_equal(pillow[opaque], first[opaque]) and np.all(pillow[~opaque][:, 3] == 0), f
        rgb_file = f.replace('/pic/', '/tests/').replace('.gif', '.rgb')
        if os.path.exists(rgb_file):
            ref = np.fromfile(rgb_file, dtype=np.uint8).reshape(h, w, 3)
            last = composited[-1]
            mask = last[:, :, 3] == 255
            assert np.array_equal(ref[mask], last[mask][:, :3]), f
        n = len(frames)
        durations = [0.0] if n == 1 else [
            (fr['gce']['delay'] / 100 if fr['gce'] and fr['gce']['delay'] > 1 else 0.1) for fr in frames]
        plays = 0 if n == 1 else (1 if loops is None else (0 if loops == 0 else loops + 1))
        references.append({'file': f, 'width': w, 'height': h, 'loopCount': plays, 'durations': durations,
                           'digests': [digest(c.tobytes()) for c in composited],
                           'transparentPixels': int(np.sum(composited[0][:, :, 3] == 0))})
    with open('gif-generated/references.json', 'w') as out:
        json.dump(references, out, indent=1)
        out.write('\n')
    print(len(references), 'files', file=sys.stderr)


if __name__ == '__main__':
    main()
