"""Makes the metadata fixtures of the server tests (python3 + Pillow; run from this folder).

photo.jpg: 48x32 stored pixels (left half red, right half blue) with EXIF orientation 6
(shown 32x48), EXIF Make, Software, Artist and Copyright, PixelXDimension 48 and
PixelYDimension 32 (in the EXIF sub-IFD), an XMP packet (dc:rights,
dc:creator, xmp:CreatorTool, photoshop:City) and an APP13 Photoshop block whose IPTC has a
By-line (2:80), a City (2:90) and a Copyright Notice (2:116).
photo.png, photo.webp: the same pixels upright (orientation 1) with the same EXIF and XMP.
"""
from PIL import Image

XMP = (b'<?xpacket begin="\xef\xbb\xbf" id="W5M0MpCehiHzreSzNTczkc9d"?>\n'
       b'<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">'
       b'<rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/"'
       b' xmlns:xmp="http://ns.adobe.com/xap/1.0/" xmlns:photoshop="http://ns.adobe.com/photoshop/1.0/"'
       b' xmp:CreatorTool="Fixture Maker" photoshop:City="Lisbon">'
       b'<dc:rights><rdf:Alt><rdf:li xml:lang="x-default">(c) Alcedo Fixtures</rdf:li></rdf:Alt></dc:rights>'
       b'<dc:creator><rdf:Seq><rdf:li>Ada Photographer</rdf:li></rdf:Seq></dc:creator>'
       b'</rdf:Description></rdf:RDF></x:xmpmeta>\n<?xpacket end="w"?>')


def exif(orientation):
    data = Image.Exif()
    data[0x0112] = orientation
    data[0x010F] = "AlcedoCam"
    data[0x0131] = "Fixture Maker 1.0"
    data[0x013B] = "Ada Photographer"
    data[0x8298] = "(c) Alcedo Fixtures"
    sub = data.get_ifd(0x8769)
    sub[0xA002] = 48  # PixelXDimension, as stored
    sub[0xA003] = 32  # PixelYDimension
    return data.tobytes()


def iptc_app13():
    def dataset(record, number, value):
        return bytes([0x1C, record, number, len(value) >> 8, len(value) & 0xFF]) + value
    iptc = dataset(1, 90, b"\x1b%G") + dataset(2, 0, b"\x00\x04") + dataset(2, 80, b"Ada Photographer") \
        + dataset(2, 90, b"Lisbon") + dataset(2, 116, b"(c) Alcedo Fixtures")
    resource = b"8BIM\x04\x04\x00\x00" + len(iptc).to_bytes(4, "big") + iptc + (b"\x00" if len(iptc) % 2 else b"")
    body = b"Photoshop 3.0\x00" + resource
    return b"\xFF\xED" + (len(body) + 2).to_bytes(2, "big") + body


stored = Image.new("RGB", (48, 32), (0, 0, 255))
stored.paste((255, 0, 0), (0, 0, 24, 32))
stored.save("photo.jpg", quality=95, exif=exif(6), xmp=XMP)
data = open("photo.jpg", "rb").read()
open("photo.jpg", "wb").write(data[:2] + iptc_app13() + data[2:])

from PIL import PngImagePlugin
info = PngImagePlugin.PngInfo()
info.add_itxt("XML:com.adobe.xmp", XMP.decode("utf-8"))
stored.save("photo.png", exif=exif(1), pnginfo=info)
stored.save("photo.webp", quality=95, exif=exif(1), xmp=XMP)

# HEIC, AVIF, JPEG XL and TIFF sources, made by the formats' reference tools from the files
# above: heif-enc (libheif-examples) and avifenc (libavif-bin) copy the PNG's EXIF and XMP into
# `Exif` and XMP items; cjxl (libjxl-tools) keeps the JPEG's EXIF and XMP in Brotli-compressed
# `brob` boxes. The TIFF (Pillow) has the XMP packet (tag 700) and the IPTC block (tag 33723).
import subprocess
subprocess.run(["heif-enc", "-q", "90", "photo.png", "-o", "photo.heic"], check=True, capture_output=True)
subprocess.run(["avifenc", "photo.png", "photo.avif"], check=True, capture_output=True)
subprocess.run(["cjxl", "--lossless_jpeg=1", "photo.jpg", "photo.jxl"], check=True, capture_output=True)
iptc_block = iptc_app13()[4 + len(b"Photoshop 3.0\x00") + 12:]
iptc_block = iptc_block[:iptc_block.rindex(b"(c) Alcedo Fixtures") + len(b"(c) Alcedo Fixtures")]
iptc_block += b"\x00" * (-len(iptc_block) % 4)
stored.save("photo.tif", tiffinfo={700: XMP, 33723: iptc_block})
