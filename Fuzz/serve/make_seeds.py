"""Writes the seed images the fixtures lack into a folder: odd but valid files made with Pillow
(progressive, CMYK and EXIF-rotated JPEGs, 16-bit and palette PNGs, animated GIF and WebP,
multi-page TIFF, multi-size ICO, a 144-megapixel PNG of a few kilobytes). Deterministic."""
import io
import os
import sys

from PIL import Image, ImageDraw


def gradient(width, height, mode="RGB"):
    image = Image.new("RGB", (width, height))
    draw = ImageDraw.Draw(image)
    for x in range(0, width, 4):
        draw.rectangle([x, 0, x + 3, height], fill=(x * 255 // max(1, width), 128, 255 - x * 255 // max(1, width)))
    draw.ellipse([width // 4, height // 4, width * 3 // 4, height * 3 // 4], fill=(250, 220, 40))
    return image.convert(mode)


def main(folder):
    os.makedirs(folder, exist_ok=True)
    out = lambda name: os.path.join(folder, name)
    g = gradient(320, 240)
    g.save(out("progressive.jpg"), "JPEG", quality=80, progressive=True)
    gradient(320, 240, "CMYK").save(out("cmyk.jpg"), "JPEG", quality=70)
    gradient(200, 100, "L").save(out("gray.jpg"), "JPEG")
    exif = Image.Exif()
    exif[0x0112] = 6
    g.save(out("rotated.jpg"), "JPEG", exif=exif.tobytes())
    gradient(1, 1).save(out("one.jpg"), "JPEG")
    gradient(1, 1).save(out("one.png"), "PNG")
    gradient(300, 10).save(out("wide.png"), "PNG")
    gradient(64, 64, "RGBA").save(out("rgba.png"), "PNG")
    gradient(64, 64, "I;16").save(out("gray16.png"), "PNG")
    palette = gradient(64, 64).convert("P", palette=Image.ADAPTIVE, colors=16)
    palette.info["transparency"] = 0
    palette.save(out("palette.png"), "PNG", transparency=0)
    # 12000 x 12000 one-bit pixels: 144 MP in a few kilobytes (over the 50 MP limit).
    Image.new("1", (12000, 12000)).save(out("bomb.png"), "PNG", optimize=True)
    frames = [gradient(48, 48).rotate(angle) for angle in (0, 90, 180, 270)]
    frames[0].save(out("animated.gif"), "GIF", save_all=True, append_images=frames[1:], duration=[50, 0, 65535, 10], loop=0)
    frames[0].save(out("animated.webp"), "WEBP", save_all=True, append_images=frames[1:], duration=80, loop=3)
    g.save(out("lossy.webp"), "WEBP", quality=60)
    gradient(64, 64, "RGBA").save(out("lossless.webp"), "WEBP", lossless=True)
    g.save(out("pages.tif"), "TIFF", save_all=True, append_images=[gradient(32, 32)], compression="tiff_lzw")
    g.save(out("plain.bmp"), "BMP")
    gradient(64, 64, "RGBA").save(out("sizes.ico"), "ICO", sizes=[(16, 16), (32, 32), (64, 64)])
    for name, fmt in (("pillow.avif", "AVIF"),):
        try:
            buffer = io.BytesIO()
            g.save(buffer, fmt, quality=50)
            with open(out(name), "wb") as f:
                f.write(buffer.getvalue())
        except (KeyError, OSError, ValueError):
            pass


if __name__ == "__main__":
    main(sys.argv[1])
