#!/usr/bin/env bash
# Installs the system packages Alcedo builds against, only when they are missing.
# Called by `make demo` and `make test`; safe to run again (quiet when all is present).
set -euo pipefail

missing=()
have_pc() { pkg-config --exists "$1" 2>/dev/null; }
have_header() { [ -f "/usr/include/$1" ] || [ -f "/usr/include/$(uname -m)-linux-gnu/$1" ]; }

command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
have_pc zlib || missing+=(zlib1g-dev)
have_pc libjpeg || missing+=(libjpeg62-turbo-dev)
have_pc libpng || missing+=(libpng-dev)
# The PNG writer compresses with libdeflate.
have_header libdeflate.h || missing+=(libdeflate-dev)
have_header gif_lib.h || missing+=(libgif-dev)
{ have_pc libwebp && have_pc libwebpdemux && have_pc libwebpmux; } || missing+=(libwebp-dev)
have_pc lcms2 || missing+=(liblcms2-dev)
have_pc libavif || missing+=(libavif-dev)
have_pc libheif || missing+=(libheif-dev)
have_pc libtiff-4 || missing+=(libtiff-dev)
# JPEG XL (headers for the build, the library loaded on first use) and SVG (librsvg, loaded on first use).
have_pc libjxl || missing+=(libjxl-dev)
have_pc librsvg-2.0 || missing+=(librsvg2-dev)
# The shared cache tier's tests start their own redis-server processes on loopback ports.
command -v redis-server >/dev/null 2>&1 || [ -x /usr/bin/redis-server ] || missing+=(redis-server)
# The service unit's tests run systemd-analyze verify and security (contrib/systemd).
command -v systemd-analyze >/dev/null 2>&1 || missing+=(systemd)
# The TLS test makes a throwaway CA and server certificate with the openssl command.
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
# The server's multi-page TIFF test joins two pages with tiffcp (libtiff's own tool).
command -v tiffcp >/dev/null 2>&1 || missing+=(libtiff-tools)
# The object-storage tests run moto's S3 server and botocore from a Python virtual environment
# (made below by install-s3-test-tools.sh, from PyPI).
command -v python3 >/dev/null 2>&1 || missing+=(python3)
python3 -c 'import venv, ensurepip' 2>/dev/null || missing+=(python3-venv)

# Optional tools: reference decoders used by a few conformance tests and the benchmarks.
if [ "${ALCEDO_WITH_TOOLS:-0}" = "1" ]; then
  command -v djpeg >/dev/null 2>&1 || missing+=(libjpeg-turbo-progs)
  command -v dwebp >/dev/null 2>&1 || missing+=(webp)
  command -v gif2rgb >/dev/null 2>&1 || missing+=(giflib-tools)
  command -v pngcheck >/dev/null 2>&1 || missing+=(pngcheck)
  command -v jpgicc >/dev/null 2>&1 || missing+=(liblcms2-utils)
  command -v avifdec >/dev/null 2>&1 || missing+=(libavif-bin)
  command -v heif-convert >/dev/null 2>&1 || missing+=(libheif-examples)
  command -v icotool >/dev/null 2>&1 || missing+=(icoutils)
  command -v cjxl >/dev/null 2>&1 || missing+=(libjxl-tools)
  command -v rsvg-convert >/dev/null 2>&1 || missing+=(librsvg2-bin)
  command -v readelf >/dev/null 2>&1 || missing+=(binutils)
fi

# Benchmark peers only (libvips-tools is large): vipsthumbnail and GNU time for peak memory.
if [ "${ALCEDO_WITH_BENCH_TOOLS:-0}" = "1" ]; then
  command -v vipsthumbnail >/dev/null 2>&1 || missing+=(libvips-tools)
  [ -x /usr/bin/time ] || missing+=(time)
fi

# Optional: the Redis client benchmark's C peer (hiredis, with libcrypto for SHA-256).
if [ "${ALCEDO_WITH_REDIS_BENCH:-0}" = "1" ]; then
  [ -f /usr/include/hiredis/hiredis.h ] || missing+=(libhiredis-dev)
  [ -f /usr/include/openssl/sha.h ] || missing+=(libssl-dev)
  command -v cc >/dev/null 2>&1 || missing+=(gcc)
  command -v redis-cli >/dev/null 2>&1 || missing+=(redis-tools)
fi

# Optional: what the serve benchmark runs besides Alcedo (an nginx origin, wrk, libvips for a peer).
if [ "${ALCEDO_WITH_SERVE_BENCH:-0}" = "1" ]; then
  command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing+=(nginx-light)
  command -v wrk >/dev/null 2>&1 || missing+=(wrk)
  { ldconfig -p 2>/dev/null | grep -q 'libvips\.so\.42'; } || missing+=(libvips42)
  python3 -c 'import venv, ensurepip' 2>/dev/null || missing+=(python3-venv)
fi

if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    SUDO="sudo"
  fi
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# moto[server] and boto3 for the object-storage tests (quiet when already there).
bash "$(dirname "$0")/install-s3-test-tools.sh"
