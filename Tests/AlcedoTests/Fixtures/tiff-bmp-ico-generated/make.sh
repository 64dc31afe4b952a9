#!/usr/bin/env bash
# Regenerates the fixtures of this folder and their reference dumps (see PROVENANCE.md).
# Needs ImageMagick 6 (/usr/bin/convert), libtiff-tools (tiffcp) and icoutils (icotool).
set -euo pipefail
cd "$(dirname "$0")"
C=/usr/bin/convert
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Sources: an 8-bit colour picture, a 16-bit one, and one with graded transparency.
$C -size 37x23 -seed 7 plasma:fractal -depth 8 "$work/rgb8.png"
$C -size 37x23 -seed 7 plasma:fractal -depth 16 "$work/rgb16.png"
$C -size 37x23 gradient:red-blue -alpha set -channel A -fx "i/w" +channel -depth 8 "$work/alpha.png"
$C -size 20x31 -seed 9 plasma:fractal -depth 8 "$work/page2.png"

# TIFF
$C "$work/rgb8.png" -compress LZW -define tiff:predictor=2 lzw-rgb8.tif
$C "$work/rgb16.png" -compress LZW -define tiff:predictor=2 lzw-rgb16.tif
$C "$work/rgb8.png" -compress None none-rgb8.tif
$C "$work/rgb8.png" -compress Zip deflate-rgb8.tif
$C "$work/rgb8.png" -compress RLE packbits-rgb8.tif
$C "$work/rgb8.png" -compress JPEG -quality 92 jpeg-rgb8.tif
tiffcp -c jpeg:90 -p contig none-rgb8.tif jpeg-ycbcr.tif 2>/dev/null || tiffcp -c jpeg none-rgb8.tif jpeg-ycbcr.tif
$C "$work/alpha.png" -compress LZW rgba-unassociated.tif
$C "$work/alpha.png" -define tiff:alpha=associated -compress LZW rgba-associated.tif
$C "$work/rgb8.png" -colorspace gray -depth 8 gray8.tif
$C "$work/rgb16.png" -colorspace gray -depth 16 gray16.tif
$C "$work/alpha.png" -colorspace gray -alpha on -depth 8 gray-alpha.tif
$C "$work/rgb8.png" -colors 16 -type palette -depth 4 palette4.tif
$C "$work/rgb8.png" -colors 200 -type palette palette8.tif
$C "$work/rgb8.png" -monochrome -compress Group4 ccitt-g4.tif
$C "$work/rgb8.png" -monochrome -compress Fax ccitt-g3.tif
$C "$work/rgb8.png" -define tiff:tile-geometry=16x16 -compress LZW tiled-rgb8.tif
$C "$work/rgb8.png" -interlace plane -compress LZW planar-rgb8.tif
$C "$work/rgb8.png" -endian MSB -compress LZW bigendian-rgb8.tif
tiffcp -8 lzw-rgb8.tif bigtiff-rgb8.tif
tiffcp -r 4 lzw-rgb8.tif lzw-strips-rgb8.tif
$C "$work/rgb8.png" -colorspace cmyk -depth 8 cmyk8.tif
$C "$work/rgb8.png" -orient RightTop orientation6.tif
$C "$work/rgb8.png" "$work/page2.png" -compress LZW pages2.tif
# Floating-point (with the floating-point predictor) and 32-bit integer samples.
$C "$work/alpha.png" -depth 32 -define quantum:format=floating-point -compress Zip -define tiff:predictor=3 float32-rgba.tif
$C "$work/rgb8.png" -colorspace gray -depth 16 -define quantum:format=floating-point float16-gray.tif
$C "$work/rgb8.png" -depth 32 uint32-rgb.tif
$C "$work/rgb16.png" -colorspace Lab -depth 16 -compress LZW lab16.tif

# BMP
$C "$work/rgb8.png" -type truecolor BMP3:rgb24.bmp
$C "$work/alpha.png" BMP:rgba32-v5.bmp
$C "$work/rgb8.png" -monochrome BMP3:palette1.bmp
$C "$work/rgb8.png" -colors 16 -compress none -type palette BMP3:palette4.bmp
$C "$work/rgb8.png" -colors 200 -compress none -type palette BMP3:palette8.bmp
$C "$work/rgb8.png" -colors 200 -compress RLE -type palette BMP3:rle8.bmp
$C "$work/rgb8.png" -define bmp:subtype=RGB565 BMP:rgb565.bmp
$C "$work/rgb8.png" -define bmp:subtype=RGB555 BMP:rgb555.bmp
$C "$work/rgb8.png" BMP2:os2-rgb24.bmp

# ICO and CUR
for s in 16 32 48; do $C "$work/rgb8.png" -resize "${s}x${s}!" "$work/i$s.png"; done
$C "$work/alpha.png" -resize 256x256! "$work/i256.png"
icotool -c -o icons.ico "$work/i16.png" "$work/i32.png" "$work/i48.png" -r "$work/i256.png"
icotool -c --cursor --hotspot-x=3 --hotspot-y=5 -o cursor.cur "$work/i32.png"

# Reference dumps: RGBA8 as ImageMagick reads the file (upright), one .rgba per picture.
for f in *.tif *.bmp; do $C "$f[0]" -auto-orient -depth 8 "rgba:$f.rgba"; done
$C "pages2.tif[1]" -depth 8 rgba:pages2.tif.page1.rgba
# CIE L*a*b*: the reference is the picture it was made from (ImageMagick's own Lab decode is off by up to 26).
$C "$work/rgb16.png" -depth 8 rgba:lab16.tif.rgba
for i in 0 1 2 3; do $C "icons.ico[$i]" -depth 8 "rgba:icons.ico.$i.rgba"; done
$C "cursor.cur[0]" -depth 8 rgba:cursor.cur.rgba
