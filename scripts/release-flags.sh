#!/usr/bin/env bash
# Prints the `swift build -c release` flags of Alcedo's executables (used by the Makefile and
# the benchmarks), so that a short `alcedo` process maps and touches as little as it can:
#
#   --static-swift-stdlib       the Swift runtime and Foundation linked in: no shared Swift
#                               libraries to load and relocate at start.
#   -use-ld=lld                 the toolchain's lld, for the two options below.
#   -z pack-relative-relocs     the 130,000 relative relocations stored as a 25 KB bitmap
#                               (DT_RELR) instead of a 3 MB table read at every start
#                               (needs glibc 2.36 or later at run time: Debian 12).
#   --no-export-dynamic         no dynamic symbol table of every Swift symbol (40,000
#                               entries that each symbol lookup at start walked through).
#   no autolinked Foundation    every Swift module is compiled with -disable-autolink-library
#                               for Foundation, FoundationInternationalization, CoreFoundation
#                               and ICU, and those libraries are named once at the end of the
#                               link instead. Alcedo's modules use FoundationEssentials; the
#                               few full-Foundation symbols left (the Kingfisher geometry
#                               types) then come from full Foundation's own small objects.
#                               Named first, as autolinking names them, full Foundation also
#                               lends FoundationEssentials shared generic code from its
#                               FileManager, which drags CoreFoundation and ICU's 30 MB data
#                               table in: the stripped binary is about 37 MB instead of 80.
#   --symbol-ordering-file      the functions short commands run (scripts/link-order.txt,
#                               made by scripts/make-link-order.sh) placed side by side, so
#                               they fill a few pages of code instead of touching hundreds.
#                               Names it lists that no longer exist are skipped.
#
# Without lld in the toolchain only --static-swift-stdlib is printed.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
flags=(--static-swift-stdlib)
swift_bin="$(command -v swift 2>/dev/null || true)"
if [ -n "$swift_bin" ] && { [ -x "$(dirname "$(readlink -f "$swift_bin")")/ld.lld" ] || command -v ld.lld >/dev/null 2>&1; }; then
  flags+=(-Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs -Xlinker --no-export-dynamic)
  for library in Foundation FoundationInternationalization CoreFoundation _FoundationICU; do
    flags+=(-Xswiftc -Xfrontend -Xswiftc -disable-autolink-library -Xswiftc -Xfrontend -Xswiftc "$library")
    flags+=(-Xlinker "-l$library")
  done
  # The flags are printed as one line of words: a path with a space cannot be one of them.
  if [ -s "$here/link-order.txt" ] && [ "${ALCEDO_LINK_ORDER:-1}" != "0" ] && [[ "$here" != *" "* ]]; then
    flags+=(-Xlinker "--symbol-ordering-file=$here/link-order.txt" -Xlinker --no-warn-symbol-ordering)
  fi
fi
echo "${flags[@]}"
