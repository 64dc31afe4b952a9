#!/usr/bin/env python3
"""Reads the size tables of imgproxy's processing tests (processing/*_test.go) and prints one
line per case: provenance, source image, URL options, status, result size, format.

Usage: python3 scripts/imgproxy-corpus-tables.py IMGPROXY_CHECKOUT

Each test case struct is evaluated as Go would build it, and its URLOptions() is re-created here
for the case types those tests use. Standard library only.
"""
import re, sys, os
ROOT = sys.argv[1]
GRAV = {'Center':'ce','North':'no','East':'ea','South':'so','West':'we','NorthWest':'nowe','NorthEast':'noea',
        'SouthWest':'sowe','SouthEast':'soea','Smart':'sm','FocusPoint':'fp','Replicate':'re','Unknown':None}
RT = {'Fit':'fit','Fill':'fill','FillDown':'fill-down','Force':'force','Auto':'auto'}

COL = dict(Black=(0,0,0), White=(255,255,255), Gray=(127,127,127), Red=(255,0,0), Green=(0,255,0), Blue=(0,0,255), Cyan=(0,255,255), Yellow=(255,255,0), Magenta=(255,0,255))
class TS:
    def __init__(self, *a, width=0, height=0):
        if a: width, height = a
        self.width, self.height = width, height

def gofmt(v):
    if v is True: return 'true'
    if v is False: return 'false'
    if isinstance(v, float):
        return str(int(v)) if v == int(v) else repr(v)
    return str(v)

def block(text, start):
    # text[start] == '{'; return index of matching '}'
    depth = 0
    for i in range(start, len(text)):
        c = text[i]
        if c == '{': depth += 1
        elif c == '}':
            depth -= 1
            if depth == 0: return i
    raise ValueError

def split_top(s):
    parts, depth, cur = [], 0, ''
    for c in s:
        if c in '{([': depth += 1
        if c in '})]': depth -= 1
        if c == ',' and depth == 0:
            parts.append(cur); cur = ''
        else: cur += c
    if cur.strip(): parts.append(cur)
    return [p.strip() for p in parts if p.strip()]

def strip_comments(t):
    return re.sub(r'//[^\n]*', '', t)

def to_py(expr):
    e = expr
    e = re.sub(r'processing\.Gravity(\w+)', lambda m: repr(GRAV[m.group(1)]), e)
    e = re.sub(r'processing\.Resize(\w+)', lambda m: repr(RT[m.group(1)]), e)
    e = re.sub(r'imagetype\.(\w+)', lambda m: repr(m.group(1).lower()), e)
    e = re.sub(r'&color\.(Black|White|Gray|Red|Green|Blue|Cyan|Yellow|Magenta)\b', lambda m: repr(COL[m.group(1)]), e)
    e = re.sub(r'&color\.RGB\{R:\s*(\d+),\s*G:\s*(\d+),\s*B:\s*(\d+)\}', r'(\1,\2,\3)', e)
    e = re.sub(r'testSize\{width:\s*([^,]+),\s*height:\s*([^}]+)\}', r'TS(width=\1, height=\2)', e)
    e = re.sub(r'testSize\{([^}]*)\}', r'TS(\1)', e)
    return e

def ev(expr, env):
    return eval(to_py(expr), {'TS': TS, 'true': True, 'false': False, 'nil': None}, env)

def fields(body, env):
    out = {}
    for i, part in enumerate(split_top(body)):
        if ':' not in part or part.strip().startswith('&'):
            k, v = ['blur', 'sharpen', 'pixelate'][i], part
        else:
            k, v = part.split(':', 1)
        out[k.strip()] = ev(v.strip(), env)
    return out

class Opts:
    def __init__(self): self.o = {}
    def add(self, k):
        self.o.setdefault(k, {}); return self.o[k]
    def s(self):
        res = []
        for k, args in self.o.items():
            n = max(args) + 1 if args else 0
            res.append(k + ':' + ':'.join(gofmt(args.get(i, '')) for i in range(n)))
        return '/'.join(res)

def g(f, k, d=0): return f.get(k, d)

def url_for(T, f):
    o = Opts()
    if T == 'resizeFillGravityTestCase':
        a = o.add('rs'); a[0] = 'fill'; a[1] = f['size'].width; a[2] = f['size'].height
        if g(f, 'gravity', None):
            b = o.add('g'); b[0] = f['gravity']
            if g(f, 'xOffset'): b[1] = f['xOffset']
            if g(f, 'yOffset'): b[2] = f['yOffset']
        if g(f, 'dpr'): o.add('dpr')[0] = f['dpr']
        return o.s(), 'geometry.png'
    if T == 'cropTestCase':
        a = o.add('crop'); a[0] = f['cropSize'].width; a[1] = f['cropSize'].height
        if g(f, 'cropGravity', None):
            a[2] = f['cropGravity']
            if g(f, 'xOffset'): a[3] = f['xOffset']
            if g(f, 'yOffset'): a[4] = f['yOffset']
        if g(f, 'gravity', None): o.add('gravity')[0] = f['gravity']
        if g(f, 'dpr'): o.add('dpr')[0] = f['dpr']
        return o.s(), 'geometry.png'
    if T in ('extendTestCase', 'extendArTestCase'):
        o.add('width')[0] = f['size'].width; o.add('height')[0] = f['size'].height
        a = o.add('extend' if T == 'extendTestCase' else 'extend_aspect_ratio'); a[0] = 1
        if g(f, 'gravity', None):
            a[1] = f['gravity']
            if g(f, 'xOffset'): a[2] = f['xOffset']
            if g(f, 'yOffset'): a[3] = f['yOffset']
        if g(f, 'dpr'): o.add('dpr')[0] = f['dpr']
        return o.s(), 'geometry.png'
    if T == 'paddingTestCase':
        return 'dpr:%f/padding:%d:%d:%d:%d/background:f00/enlarge:1' % (g(f,'dpr'), g(f,'paddingTop'), g(f,'paddingRight'), g(f,'paddingBottom'), g(f,'paddingLeft')), 'geometry.png'
    if T == 'sizeTestCase':
        if g(f, 'limit'): o.add('max_result_dimension')[0] = f['limit']
        a = o.add('resize'); a[0] = f['resizingType']; a[1] = g(f,'width'); a[2] = g(f,'height')
        if g(f, 'enlarge', False): o.add('enlarge')[0] = 1
        if g(f, 'extend', False): o.add('extend')[0] = 1
        if g(f, 'extendAR', False): o.add('extend_aspect_ratio')[0] = 1
        if g(f, 'rotate'): o.add('rotate')[0] = f['rotate']
        p = [g(f,'paddingTop'), g(f,'paddingRight'), g(f,'paddingBottom'), g(f,'paddingLeft')]
        if any(x > 0 for x in p):
            a = o.add('padding')
            for i, x in enumerate(p): a[i] = x
        return o.s(), 'geometry.png'
    if T == 'trimTestCase':
        a = o.add('trim'); a[0] = g(f, 'threshold')
        if g(f, 'color', None): a[1] = '%02x%02x%02x' % f['color']
        if g(f, 'equalHor', False): a[2] = 1
        if g(f, 'equalVer', False): a[3] = 1
        return o.s(), f['sourceFile']
    if T == 'watermarkTestCase':
        a = o.add('watermark'); a[0] = g(f, 'opacity'); a[1] = f['position']
        if g(f, 'xOffset'): a[2] = f['xOffset']
        if g(f, 'yOffset'): a[3] = f['yOffset']
        if g(f, 'scale'): a[4] = f['scale']
        if g(f, 'dpr'): o.add('dpr')[0] = f['dpr']
        if g(f, 'format', None): o.add('format')[0] = f['format']
        return o.s(), f['sourceFile']
    if T == 'effectTestCase':
        return 'blur:%f/sharpen:%f/pixelate:%d' % (g(f,'blur'), g(f,'sharpen'), g(f,'pixelate')), 'test-images/png/png.png'
    if T == 'flattenTestCase':
        a = o.add('resize'); a[0] = 'fill'; a[1] = 300; a[2] = 300
        o.add('enlarge')[0] = 1; o.add('padding')[0] = 100; o.add('format')[0] = f['format']
        if g(f, 'background', None):
            b = o.add('background'); b[0], b[1], b[2] = f['background']
        return o.s(), f['sourceFile']
    return None, None

rows = []
for fn in ['processing_test.go', 'crop_test.go', 'extend_test.go', 'padding_test.go', 'trim_test.go', 'watermark_test.go', 'apply_filters_test.go', 'flatten_test.go']:
    text = strip_comments(open(os.path.join(ROOT, 'processing', fn)).read())
    for m in re.finditer(r'func \(s \*\w+\) (Test\w+)\(\) \{', text):
        name = m.group(1)
        end = block(text, m.end() - 1)
        body = text[m.end():end]
        env = {'flattenTestOutSize': TS(500, 500), 'colorspaceTestOutSize': TS(0,0)}
        for vm in re.finditer(r'(\w+)\s*:=\s*(testSize\{[^}]*\})', body):
            env[vm.group(1)] = ev(vm.group(2), env)
        tm = re.search(r'testCases := \[\]testCase\[(\w+)\]\{', body)
        if not tm: continue
        T = tm.group(1)
        lend = block(body, tm.end() - 1)
        lst = body[tm.end():lend]
        rest = body[lend:]
        overrides = {}
        for am in re.finditer(r'tc\.opts\.(\w+)\s*=\s*([^\n]+)', rest):
            overrides[am.group(1)] = ev(am.group(2).strip(), env)
        for el in split_top(lst):
            el = el.strip()[1:-1]
            parts = {}
            for p in split_top(el):
                k, v = p.split(':', 1)
                parts[k.strip()] = v.strip()
            om = re.match(r'\w+\{(.*)\}$', parts['opts'], re.S)
            f = fields(om.group(1), env)
            f.update(overrides)
            size = ev(parts['outSize'], env) if 'outSize' in parts else None
            path, src = url_for(T, f)
            if path is None: continue
            fmt = '-'
            if T in ('watermarkTestCase', 'flattenTestCase') and f.get('format'): fmt = f['format']
            rows.append(('imgproxy processing/%s %s' % (fn, name), src, path, '200',
                         '%dx%d' % (size.width, size.height) if size else '-', fmt))
for r in rows: print('\t'.join(r))
