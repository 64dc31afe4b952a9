#!/usr/bin/env python3
"""Makes the colour-management fixtures and their sRGB references.

Run from this folder: python3 make.py (needs numpy, Pillow with ImageCms, liblcms2 and a C
compiler with libjpeg for cmyk_jpeg.c). Profiles are built with Little CMS through ctypes;
references are Pillow ImageCms transforms (relative colorimetric + black-point
compensation, as Alcedo) of Pillow's decode of each file, saved as untagged PNGs.
"""
import ctypes, io, os, struct, subprocess, zlib
import numpy as np
from PIL import Image, ImageCms, PngImagePlugin

lcms = ctypes.CDLL("liblcms2.so.2")

class xyY(ctypes.Structure):
    _fields_ = [("x", ctypes.c_double), ("y", ctypes.c_double), ("Y", ctypes.c_double)]

class xyYTriple(ctypes.Structure):
    _fields_ = [("r", xyY), ("g", xyY), ("b", xyY)]

vp = ctypes.c_void_p
lcms.cmsBuildGamma.restype = vp
lcms.cmsBuildGamma.argtypes = [vp, ctypes.c_double]
lcms.cmsBuildParametricToneCurve.restype = vp
lcms.cmsBuildParametricToneCurve.argtypes = [vp, ctypes.c_int, ctypes.POINTER(ctypes.c_double)]
lcms.cmsCreateRGBProfile.restype = vp
lcms.cmsCreateRGBProfile.argtypes = [ctypes.POINTER(xyY), ctypes.POINTER(xyYTriple), ctypes.POINTER(vp)]
lcms.cmsCreateGrayProfile.restype = vp
lcms.cmsCreateGrayProfile.argtypes = [ctypes.POINTER(xyY), vp]
lcms.cmsMLUalloc.restype = vp
lcms.cmsMLUalloc.argtypes = [vp, ctypes.c_uint]
lcms.cmsMLUsetASCII.argtypes = [vp, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p]
lcms.cmsWriteTag.argtypes = [vp, ctypes.c_uint, vp]
lcms.cmsSaveProfileToMem.argtypes = [vp, vp, ctypes.POINTER(ctypes.c_uint)]
lcms.cmsCloseProfile.argtypes = [vp]
lcms.cmsCreateProfilePlaceholder.restype = vp
lcms.cmsCreateProfilePlaceholder.argtypes = [vp]
lcms.cmsSetProfileVersion.argtypes = [vp, ctypes.c_double]
lcms.cmsSetDeviceClass.argtypes = [vp, ctypes.c_uint]
lcms.cmsSetColorSpace.argtypes = [vp, ctypes.c_uint]
lcms.cmsSetPCS.argtypes = [vp, ctypes.c_uint]
lcms.cmsPipelineAlloc.restype = vp
lcms.cmsPipelineAlloc.argtypes = [vp, ctypes.c_uint, ctypes.c_uint]
lcms.cmsStageAllocCLut16bit.restype = vp
lcms.cmsStageAllocCLut16bit.argtypes = [vp, ctypes.c_uint, ctypes.c_uint, ctypes.c_uint, vp]
SAMPLER = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_uint16), ctypes.POINTER(ctypes.c_uint16), vp)
lcms.cmsStageSampleCLut16bit.argtypes = [vp, SAMPLER, vp, ctypes.c_uint]
lcms.cmsPipelineInsertStage.argtypes = [vp, ctypes.c_int, vp]
lcms.cmsStageAllocToneCurves.restype = vp
lcms.cmsStageAllocToneCurves.argtypes = [vp, ctypes.c_uint, vp]
lcms.cmsCreate_sRGBProfile.restype = vp
lcms.cmsCreateLab4Profile.restype = vp
lcms.cmsCreateLab4Profile.argtypes = [vp]
lcms.cmsCreateTransform.restype = vp
lcms.cmsCreateTransform.argtypes = [vp, ctypes.c_uint, vp, ctypes.c_uint, ctypes.c_uint, ctypes.c_uint]
lcms.cmsDoTransform.argtypes = [vp, vp, vp, ctypes.c_uint]

SIG_DESC = 0x64657363
SIG_A2B0 = 0x41324230
SIG_WTPT = 0x77747074

def describe(profile, text):
    mlu = lcms.cmsMLUalloc(None, 1)
    lcms.cmsMLUsetASCII(mlu, b"en", b"US", text.encode())
    lcms.cmsWriteTag(profile, SIG_DESC, mlu)

def save(profile):
    size = ctypes.c_uint(0)
    lcms.cmsSaveProfileToMem(profile, None, ctypes.byref(size))
    buffer = ctypes.create_string_buffer(size.value)
    lcms.cmsSaveProfileToMem(profile, buffer, ctypes.byref(size))
    lcms.cmsCloseProfile(profile)
    return buffer.raw[: size.value]

def rgb_profile(name, white, primaries, curve):
    w = xyY(white[0], white[1], 1.0)
    p = xyYTriple(*(xyY(x, y, 1.0) for x, y in primaries))
    curves = (vp * 3)(curve, curve, curve)
    profile = lcms.cmsCreateRGBProfile(ctypes.byref(w), ctypes.byref(p), curves)
    describe(profile, name)
    return save(profile)

def srgb_curve():
    params = (ctypes.c_double * 5)(2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045)
    return lcms.cmsBuildParametricToneCurve(None, 4, params)

D65 = (0.3127, 0.3290)
D50 = (0.3457, 0.3585)
P3 = rgb_profile("Display P3 (Alcedo test)", D65, [(0.680, 0.320), (0.265, 0.690), (0.150, 0.060)], srgb_curve())
ADOBE = rgb_profile("Adobe RGB (1998) compatible (Alcedo test)", D65, [(0.64, 0.33), (0.21, 0.71), (0.15, 0.06)],
                    lcms.cmsBuildGamma(None, 563 / 256))
PROPHOTO = rgb_profile("ProPhoto RGB compatible (Alcedo test)", D50,
                       [(0.7347, 0.2653), (0.1596, 0.8404), (0.0366, 0.0001)], lcms.cmsBuildGamma(None, 1.8))
gray = lcms.cmsCreateGrayProfile(ctypes.byref(xyY(D50[0], D50[1], 1.0)), lcms.cmsBuildGamma(None, 1.8))
describe(gray, "Gray gamma 1.8 (Alcedo test)")
GRAY = save(gray)

# A CMYK profile with dot gain, impure inks and a black that is not sRGB's black (so that
# black-point compensation matters), as a v4 input profile whose A2B0 maps CMYK to Lab.
TYPE_RGB_DBL = (4 << 16) | (3 << 3) | 0   # COLORSPACE_SH(PT_RGB)|CHANNELS_SH(3)|BYTES_SH(0)
TYPE_RGB_16 = (4 << 16) | (3 << 3) | 2
TYPE_LAB_16 = (10 << 16) | (3 << 3) | 2
srgb = lcms.cmsCreate_sRGBProfile()
lab4 = lcms.cmsCreateLab4Profile(None)
to_lab = lcms.cmsCreateTransform(srgb, TYPE_RGB_16, lab4, TYPE_LAB_16, 1, 0x0040)

def press(c, m, y, k):
    g = lambda v: v ** 0.8  # dot gain
    c, m, y, k = g(c), g(m), g(y), g(k)
    r = (1 - 0.93 * c) * (1 - 0.08 * m) * (1 - 0.02 * y) * (1 - 0.88 * k)
    gg = (1 - 0.30 * c) * (1 - 0.90 * m) * (1 - 0.05 * y) * (1 - 0.87 * k)
    b = (1 - 0.10 * c) * (1 - 0.45 * m) * (1 - 0.90 * y) * (1 - 0.85 * k)
    return r, gg, b

@SAMPLER
def sample(inp, out, cargo):
    rgb = press(*(inp[i] / 65535 for i in range(4)))
    source = (ctypes.c_uint16 * 3)(*(int(round(v * 65535)) for v in rgb))
    lcms.cmsDoTransform(to_lab, source, out, 1)
    return 1

cmyk = lcms.cmsCreateProfilePlaceholder(None)
lcms.cmsSetProfileVersion(cmyk, 4.3)
lcms.cmsSetDeviceClass(cmyk, 0x73636E72)  # 'scnr'
lcms.cmsSetColorSpace(cmyk, 0x434D594B)   # 'CMYK'
lcms.cmsSetPCS(cmyk, 0x4C616220)          # 'Lab '
pipeline = lcms.cmsPipelineAlloc(None, 4, 3)
clut = lcms.cmsStageAllocCLut16bit(None, 7, 4, 3, None)
lcms.cmsStageSampleCLut16bit(clut, sample, None, 0)
lcms.cmsPipelineInsertStage(pipeline, 1, lcms.cmsStageAllocToneCurves(None, 4, None))  # A curves
lcms.cmsPipelineInsertStage(pipeline, 1, clut)
lcms.cmsPipelineInsertStage(pipeline, 1, lcms.cmsStageAllocToneCurves(None, 3, None))  # B curves (mAB needs them)
lcms.cmsWriteTag(cmyk, SIG_A2B0, pipeline)
d50 = (ctypes.c_double * 3)(0.9642, 1.0, 0.8249)
lcms.cmsWriteTag(cmyk, SIG_WTPT, d50)
describe(cmyk, "Press CMYK with dot gain (Alcedo test)")
CMYK = save(cmyk)

for name, data in [("p3", P3), ("adobe-rgb", ADOBE), ("prophoto", PROPHOTO), ("gray-18", GRAY), ("press-cmyk", CMYK)]:
    with open(f"{name}.icc", "wb") as f:
        f.write(data)

SRGB = ImageCms.createProfile("sRGB")
FLAGS = ImageCms.Flags.BLACKPOINTCOMPENSATION

def to_srgb(image, icc):
    source = ImageCms.ImageCmsProfile(io.BytesIO(icc))
    out_mode = "RGB"
    t = ImageCms.buildTransform(source, SRGB, image.mode, out_mode,
                                renderingIntent=ImageCms.Intent.RELATIVE_COLORIMETRIC, flags=FLAGS)
    return ImageCms.applyTransform(image, t)

def rgb_pattern(w=48, h=32):
    y, x = np.mgrid[0:h, 0:w]
    r = (x * 255 // (w - 1))
    g = (y * 255 // (h - 1))
    b = ((x + y) * 255 // (w + h - 2))
    rgb = np.stack([r, g, b], -1).astype(np.uint8)
    rgb[:8, :8] = [255, 0, 0]   # saturated corners: out of sRGB's gamut in wide spaces
    rgb[:8, -8:] = [0, 255, 0]
    rgb[-8:, :8] = [0, 0, 255]
    return Image.fromarray(rgb, "RGB")

def reference(path, image):
    image.convert("RGB").save(path + ".srgb.png")

pattern = rgb_pattern()
for name, icc in [("p3", P3), ("adobe-rgb", ADOBE), ("prophoto", PROPHOTO)]:
    path = f"{name}.jpg"
    pattern.save(path, quality=95, subsampling=0, icc_profile=icc)
    reference(path, to_srgb(Image.open(path).convert("RGB"), icc))
pattern.save("p3.png", icc_profile=P3)
reference("p3.png", to_srgb(Image.open("p3.png").convert("RGB"), P3))
pattern.save("p3.webp", lossless=True, icc_profile=P3)
reference("p3.webp", to_srgb(Image.open("p3.webp").convert("RGB"), P3))

gray_image = pattern.convert("L")
gray_image.save("gray-18.jpg", quality=95, icc_profile=GRAY)
reference("gray-18.jpg", to_srgb(Image.open("gray-18.jpg"), GRAY))

# A JPEG whose profile is cut in half: decoded as if untagged.
pattern.save("truncated-profile.jpg", quality=95, subsampling=0, icc_profile=P3[: len(P3) // 2])
reference("truncated-profile.jpg", Image.open("truncated-profile.jpg").convert("RGB"))

# A multi-segment profile: P3 padded with a private tag area to 70 KB (two APP2 segments).
big = bytearray(P3) + bytes(70_000)
struct.pack_into(">I", big, 0, len(big))
pattern.save("p3-multisegment.jpg", quality=95, subsampling=0, icc_profile=bytes(big))

# PNG with gAMA 1/1.8 and cHRM (Adobe-RGB-like primaries, D65), no iCCP or sRGB.
info = PngImagePlugin.PngInfo()
info.add(b"gAMA", struct.pack(">I", 55556))
chrm = [D65[0], D65[1], 0.64, 0.33, 0.21, 0.71, 0.15, 0.06]
info.add(b"cHRM", struct.pack(">8I", *(int(round(v * 100000)) for v in chrm)))
pattern.save("gama-chrm.png", pnginfo=info)
chrm_profile = rgb_profile("gAMA cHRM reference", D65, [(0.64, 0.33), (0.21, 0.71), (0.15, 0.06)],
                           lcms.cmsBuildGamma(None, 1 / 0.55556))
reference("gama-chrm.png", to_srgb(pattern, chrm_profile))

# GIF with an ICCRGBG1012 application extension carrying the P3 profile.
pattern.save("p3-plain.gif")
gif = open("p3-plain.gif", "rb").read()
packed = gif[10]
table = 3 << ((packed & 7) + 1) if packed & 0x80 else 0
header_end = 13 + table
ext = b"\x21\xff\x0bICCRGBG1012"
for i in range(0, len(P3), 255):
    block = P3[i:i + 255]
    ext += bytes([len(block)]) + block
ext += b"\x00"
open("p3.gif", "wb").write(gif[:header_end] + ext + gif[header_end:])
os.remove("p3-plain.gif")
reference("p3.gif", to_srgb(Image.open("p3.gif").convert("RGB"), P3))

# CMYK and YCCK JPEGs: ink values in a pattern; "inverted" files carry Adobe's APP14 and
# store 255 - ink, "plain" ones carry no APP14 and store ink.
h, w = 32, 48
y, x = np.mgrid[0:h, 0:w]
ink = np.stack([x * 255 // (w - 1), y * 255 // (h - 1), (w - 1 - x) * 255 // (w - 1),
                ((x // 12) * 85).clip(0, 255)], -1).astype(np.uint8)
tool = os.environ.get("CMYK_JPEG", "./cmyk_jpeg")
for kind in ["cmyk", "ycck"]:
    for inverted in [True, False]:
        if kind == "ycck" and not inverted:
            continue  # YCCK is only recognised through the Adobe marker
        for tagged in [True, False]:
            name = f"{kind}-{'inverted' if inverted else 'plain'}{'-profile' if tagged else ''}.jpg"
            samples = 255 - ink if inverted else ink
            subprocess.run([tool, str(w), str(h), kind, "adobe" if inverted else "noadobe",
                            "press-cmyk.icc" if tagged else "-", name], input=samples.tobytes(), check=True)
            decoded = Image.open(name)
            # Pillow takes every CMYK JPEG as Adobe-inverted and hands back 255 - stored value.
            # Alcedo follows the APP14 marker: a file without it stores ink, so its ink is
            # 255 minus what Pillow hands back.
            values = np.asarray(decoded).astype(np.float64) / 255
            if not inverted:
                values = 1 - values
            if tagged:
                # Pillow/lcms read CMYK images as ink values (0 = no ink).
                cmyk_image = Image.fromarray((values * 255).round().astype(np.uint8), "CMYK")
                result = to_srgb(cmyk_image, CMYK)
            else:
                c, m, yy, k = [values[..., i] for i in range(4)]
                rgb = np.stack([(1 - c) * (1 - k), (1 - m) * (1 - k), (1 - yy) * (1 - k)], -1)
                result = Image.fromarray((rgb * 255).round().astype(np.uint8), "RGB")
            reference(name, result)
print("done")

# EXIF orientation 6 (turn 90° clockwise to stand upright) in a PNG eXIf chunk and a WebP
# EXIF chunk; the stored picture has a red marker in its top-left corner.
exif = Image.Exif()
exif[0x0112] = 6
pattern.save("orientation-6.png", exif=exif.tobytes())
pattern.save("orientation-6.webp", lossless=True, exif=exif.tobytes())
print("orientation done")
