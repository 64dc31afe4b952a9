#!/usr/bin/env bash
# make install / make uninstall.
#   scripts/install.sh install   [--prefix DIR] [--bin PATH] [--destdir DIR] [--manual-tool PATH]
#   scripts/install.sh uninstall [--prefix DIR] [--destdir DIR]
# install copies the stripped `alcedo` (default: the release build), its bash, zsh and fish
# completions and its man page (swift-argument-parser's generate-manual) under PREFIX
# (default /usr/local), and lists every file it wrote, and every folder it had to create, in
# PREFIX/share/alcedo/installed-files. uninstall removes exactly those files, then the list,
# then those folders when they are empty (never a folder that was there before, or that holds
# anything else).
set -euo pipefail
cd "$(dirname "$0")/.."

action=${1:-}; shift || true
prefix=${PREFIX:-/usr/local}
destdir=${DESTDIR:-}
bin=""
manual_tool=""
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix=$2; shift 2 ;;
    --destdir) destdir=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --manual-tool) manual_tool=$2; shift 2 ;;
    *) echo "install.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
root="$destdir$prefix"
manifest="$root/share/alcedo/installed-files"

case "$action" in
install)
  if [ -z "$bin" ]; then bin="$(swift build -c release --show-bin-path)/alcedo"; fi
  [ -x "$bin" ] || { echo "install.sh: no executable at $bin (run make release first)" >&2; exit 1; }
  # generate-manual is swift-argument-parser's man page generator, built in the configuration
  # of the binary being installed, with the same flags (so nothing already built is redone).
  if [ -z "$manual_tool" ]; then
    config=release; flags=$(bash scripts/release-flags.sh)
    case "$bin" in */debug/*) config=debug; flags="" ;; esac
    # shellcheck disable=SC2086 # the flags are words
    swift build -c "$config" $flags --product generate-manual >/dev/null
    manual_tool="$(swift build -c "$config" --show-bin-path)/generate-manual"
  fi

  work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
  "$manual_tool" "$bin" --output-directory "$work"
  "$bin" --generate-completion-script bash > "$work/alcedo.bash"
  "$bin" --generate-completion-script zsh > "$work/_alcedo"
  "$bin" --generate-completion-script fish > "$work/alcedo.fish"

  files=(bin/alcedo share/man/man1/alcedo.1 share/bash-completion/completions/alcedo
         share/zsh/site-functions/_alcedo share/fish/vendor_completions.d/alcedo.fish)
  # The folders this install creates (not those already there), parents first.
  created=()
  for f in "${files[@]}" share/alcedo/installed-files; do
    d=$(dirname "$f"); chain=()
    while [ "$d" != "." ]; do chain=("$d" "${chain[@]}"); d=$(dirname "$d"); done
    for d in "${chain[@]}"; do
      if [ ! -d "$root/$d" ]; then created+=("$d"); mkdir -p "$root/$d"; fi
    done
  done
  install -m 755 "$bin" "$root/bin/alcedo"
  strip --strip-all "$root/bin/alcedo" 2>/dev/null || echo "install.sh: strip not found: the binary is installed unstripped" >&2
  install -m 644 "$work/alcedo.1" "$root/share/man/man1/alcedo.1"
  install -m 644 "$work/alcedo.bash" "$root/share/bash-completion/completions/alcedo"
  install -m 644 "$work/_alcedo" "$root/share/zsh/site-functions/_alcedo"
  install -m 644 "$work/alcedo.fish" "$root/share/fish/vendor_completions.d/alcedo.fish"
  { printf 'file %s\n' "${files[@]}"; [ ${#created[@]} -eq 0 ] || printf 'dir %s\n' "${created[@]}"; } > "$manifest"
  for f in "${files[@]}"; do echo "installed $prefix/$f"; done
  ;;
uninstall)
  [ -f "$manifest" ] || { echo "install.sh: nothing installed under $prefix (no $manifest)" >&2; exit 0; }
  dirs=()
  while read -r kind path; do
    case "$path" in ""|/*|*..*) echo "install.sh: skipping unexpected entry '$path'" >&2; continue ;; esac
    case "$kind" in
      file) rm -f "$root/$path" && echo "removed $prefix/$path" ;;
      dir) dirs=("$path" "${dirs[@]}") ;;
    esac
  done < "$manifest"
  rm -f "$manifest"
  # The folders install created, children first, each only when empty.
  for d in "${dirs[@]}"; do rmdir "$root/$d" 2>/dev/null || true; done
  ;;
*)
  echo "usage: scripts/install.sh install|uninstall [--prefix DIR] [--destdir DIR] [--bin PATH]" >&2; exit 2 ;;
esac
