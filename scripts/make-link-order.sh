#!/usr/bin/env bash
# Writes scripts/link-order.txt: the functions of the `alcedo` executable that short commands
# run (--version, info, convert to JPEG and PNG with and without --downsample, on the bundled
# samples), in the order callgrind first sees them. scripts/release-flags.sh hands the file to
# lld, which places those functions side by side: a short process then touches a few hundred
# KB of code instead of several MB. Run it again after large changes; names that no longer
# exist are skipped by the linker, so a stale file costs memory, never correctness.
# Needs valgrind (installed here when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null 2>&1 || {
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -q >/dev/null
  $sudo apt-get install -y -q valgrind >/dev/null
}
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# Built without the order being made (it must not steer itself) and without debug info,
# which valgrind's reader does not take.
swift build -c release $(ALCEDO_LINK_ORDER=0 bash scripts/release-flags.sh) --product alcedo >/dev/null
bin="$(swift build -c release --show-bin-path)/alcedo"
objcopy --strip-debug "$bin" "$work/alcedo"
samples=Sources/alcedo/Demo/Samples
run() { valgrind --tool=callgrind --demangle=no --callgrind-out-file="$work/cg.$1" "$work/alcedo" "${@:2}" >/dev/null 2>&1; }
run version --version
run info info "$samples/valley.jpg"
run thumb convert "$samples/valley.jpg" "$work/a.jpg" --downsample 64x64
run full convert "$samples/dusk.jpg" "$work/b.jpg"
run png convert "$samples/valley.jpg" "$work/c.png" --downsample 64x64
run webp convert "$samples/meadow.webp" "$work/d.png"
nm --defined-only "$work/alcedo" | awk '$2 ~ /^[tTwW]$/ { print $3 }' > "$work/functions"
python3 - "$work" > scripts/link-order.txt <<'PY'
import pathlib, re, sys
work = pathlib.Path(sys.argv[1])
functions = set((work / "functions").read_text().split())
seen = set()
for name in ["version", "info", "thumb", "full", "png", "webp"]:
    for line in (work / f"cg.{name}").read_text(errors="replace").splitlines():
        match = re.match(r"^c?fn=\(\d+\) (.+)$", line)
        if match and match.group(1) in functions and match.group(1) not in seen:
            seen.add(match.group(1))
            print(match.group(1))
PY
echo "scripts/link-order.txt: $(wc -l < scripts/link-order.txt) functions"
