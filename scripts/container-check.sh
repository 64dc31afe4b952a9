#!/usr/bin/env bash
# make container-check: what the container image's runtime stage would hold, without a
# container engine. Makes a fresh Debian 12 (debootstrap, minbase) in .build/container-root,
# installs exactly contrib/container/runtime-packages.txt into it, installs the release alcedo
# with scripts/install.sh, and runs it there as an unprivileged user under chroot:
# --version, the demo, and a served request (health check and an image from the samples) as
# contrib/kubernetes/deployment.yaml runs the image: its user id, a read-only root, only the
# cache folder and /tmp writable; SIGTERM exits 0.
# Downloads a base system (about 100 MB): not part of make test. Needs root.
set -euo pipefail
cd "$(dirname "$0")/.."
root="${ALCEDO_CONTAINER_ROOT:-$PWD/.build/container-root}"
suite=bookworm
[ "$(id -u)" = 0 ] || { echo "container-check: needs root (debootstrap, chroot)" >&2; exit 1; }
command -v debootstrap >/dev/null 2>&1 || { apt-get update -qq; apt-get install -y -qq debootstrap; }
command -v curl >/dev/null 2>&1 || { apt-get update -qq; apt-get install -y -qq curl; }

mounted=()
cleanup() {
  [ -n "${server_pid:-}" ] && kill "$server_pid" 2>/dev/null || true
  for m in "${mounted[@]}"; do umount -l "$m" 2>/dev/null || true; done
}
trap cleanup EXIT

if [ ! -x "$root/usr/bin/apt-get" ]; then
  echo "container-check: debootstrap $suite into $root"
  rm -rf "$root"
  debootstrap --variant=minbase "$suite" "$root" >/dev/null
fi
mount --bind /proc "$root/proc"; mounted+=("$root/proc")
mount --bind /dev "$root/dev"; mounted+=("$root/dev")
cp /etc/resolv.conf "$root/etc/resolv.conf"

packages=$(grep -v '^#' contrib/container/runtime-packages.txt | grep -v '^$' | tr '\n' ' ')
echo "container-check: installing $packages"
chroot "$root" apt-get update -qq
# shellcheck disable=SC2086
chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $packages >/dev/null

bin="$(swift build -c release --show-bin-path)/alcedo"
bash scripts/install.sh install --prefix /usr/local --destdir "$root" --bin "$bin" >/dev/null
run() { chroot --userspec=nobody:nogroup "$root" env HOME=/tmp XDG_CACHE_HOME=/tmp/cache "$@"; }

echo "container-check: libraries the binary links"
missing=$(chroot "$root" ldd /usr/local/bin/alcedo | grep "not found" || true)
[ -z "$missing" ] || { echo "container-check: missing in the runtime package set:"; echo "$missing"; exit 1; }

echo "container-check: alcedo --version"
run /usr/local/bin/alcedo --version
echo "container-check: alcedo demo"
run /usr/local/bin/alcedo demo --out /tmp/demo | tail -2
[ -s "$root/tmp/demo/contact-sheet.png" ] || { echo "container-check: the demo wrote no contact sheet"; exit 1; }

# The image's own user (the Containerfile's useradd line), as contrib/kubernetes runs it.
useradd_line=$(grep -o 'useradd [^\\&]*' contrib/container/Containerfile | head -1)
uid=$(echo "$useradd_line" | grep -o -- '--uid [0-9]*' | awk '{print $2}')
chroot "$root" id -u "$uid" >/dev/null 2>&1 || chroot "$root" $useradd_line

echo "container-check: alcedo serve --samples as the Kubernetes Deployment runs it (uid $uid, read-only root,"
echo "  the cache folder and /tmp the only writable places, settings from the environment)"
port=$(( 20000 + RANDOM % 20000 ))
log="$PWD/.build/container-serve.log"
cache_dir=$(grep -o 'ALCEDO_CACHE_DIR=[^ ]*' contrib/container/Containerfile | cut -d= -f2)
mkdir -p "$root$cache_dir"
unshare --mount --propagation private bash -c '
  set -e
  root="$1"; uid="$2"; port="$3"; cache_dir="$4"
  mount --rbind "$root" "$root"
  mount -o remount,bind,ro "$root"
  mount -t tmpfs -o size=16m,mode=1777 tmpfs "$root/tmp"
  mount -t tmpfs -o size=256m,uid=$uid,gid=$uid,mode=0700 tmpfs "$root$cache_dir"
  exec chroot --userspec="$uid:$uid" "$root" env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$cache_dir" \
      ALCEDO_HOST=127.0.0.1 ALCEDO_PORT="$port" ALCEDO_CACHE_DIR="$cache_dir" \
      /usr/local/bin/alcedo serve --samples
' container-check "$root" "$uid" "$port" "$cache_dir" 2>"$log" >/dev/null &
server_pid=$!
for _ in $(seq 1 100); do grep -q "example:" "$log" 2>/dev/null && break; sleep 0.1; done
url=$(grep -o "'http[^']*'" "$log" | head -1 | tr -d "'")
[ -n "$url" ] || { echo "container-check: no example URL"; cat "$log"; exit 1; }
health=$(grep -o 'curl -fsS http://127\.0\.0\.1:[0-9]*/[a-z]*' contrib/container/Containerfile | grep -o '/[a-z]*$')
curl -fsS "http://127.0.0.1:$port$health"
status=$(curl -s -o "$PWD/.build/container-served" -w '%{http_code} %{content_type} %{size_download}' "$url")
echo "served $url: $status"
case "$status" in 200\ image/*) ;; *) echo "container-check: the served request failed"; cat "$log"; exit 1 ;; esac
if grep -qi "read-only\|permission denied" "$log"; then
  echo "container-check: alcedo tried to write outside its cache folder:"; cat "$log"; exit 1
fi
kill -TERM "$server_pid"; wait "$server_pid" && code=0 || code=$?
server_pid=
[ "$code" = 0 ] || { echo "container-check: SIGTERM ended alcedo serve with $code, not 0"; cat "$log"; exit 1; }
echo "container-check: passed (runtime packages: $packages)"
