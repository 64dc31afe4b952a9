#!/usr/bin/env bash
# The main job on built-in samples, no network needed: decode every sample, make thumbnails, print their info.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$(swift build -c release --show-bin-path)/alcedo"
out="${ALCEDO_DEMO_OUT:-demo-output}"
mkdir -p "$out"
echo "== alcedo info Samples/*"
"$bin" info Samples/*.jpg Samples/*.png Samples/*.gif Samples/*.webp
echo
echo "== alcedo convert: 320x240 thumbnails into $out/"
for f in Samples/*.jpg Samples/*.png Samples/*.webp Samples/*.gif; do
  name="$(basename "${f%.*}")"
  case "$f" in
    *.gif) ext=gif ;;
    *.webp) ext=webp ;;
    *.png) ext=png ;;
    *) ext=jpg ;;
  esac
  "$bin" convert "$f" "$out/$name-thumb.$ext" --downsample 320x240 --quality 85
done
"$bin" info "$out"/*
