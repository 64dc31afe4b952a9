#!/usr/bin/env bash
# The multi-host harness: 5 `alcedo serve` nodes, 3 Redis nodes, an S3-speaking server (moto,
# authentication on), an origin (python's http.server) and the load generator, each in its own
# network namespace (ip netns, a veth pair each, one bridge), addressed like separate hosts on
# 10.77.0.0/24. Partitions are nftables rules inside a namespace, made and healed while load runs.
#
# Scenarios, each printed as a row (requests, failures, origin GETs, processing runs summed over
# the nodes, p50/p99 latency, resident memory per node):
#   cold            every variant once, spread over the 5 nodes: each source downloaded once,
#                   each variant processed once
#   warm            the same variants again for a while: no download, no processing
#   rolling-restart Redis flushed, then every node restarted in turn (out of rotation, stopped,
#                   its disk cache wiped, started, back in rotation) while load runs
#   after-restart   every stored variant once: 0 processing runs, 0 origin GETs
#   cut-redis       node 1 cut from the 3 Redis nodes before the load, healed halfway; each
#                   partition scenario asks for 2 new variants of every source besides stored ones
#   cut-store       node 1 cut from the S3 server, healed halfway
#   cut-origin      node 1 cut from the origin, healed halfway (new variants of stored sources)
#   redis2-isolated Redis node 2 cut from everything, healed halfway
#   cut-redis+store node 1 cut from Redis and S3 together (a goal cannot hold: it works alone)
#   new-node        node 5 stopped, its cache wiped, Redis flushed, started: every stored
#                   variant asked from it alone
#
# Run as root on Linux: `sudo bash Benchmarks/Scale/run.sh`. Installs what it lacks (iproute2,
# nftables, redis-server, python3; the moto venv; the release alcedo through `make release`).
# Environment: SCALE_SOURCES (default 40), SCALE_SECONDS (load time per scenario, default 12),
# SCALE_THREADS (default 16), ALCEDO_BINARY (default .build/release/alcedo).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
[ "$(id -u)" = 0 ] || { echo "run.sh: network namespaces need root: sudo bash $0" >&2; exit 1; }

missing=()
command -v ip >/dev/null || missing+=(iproute2)
command -v nft >/dev/null || missing+=(nftables)
command -v redis-server >/dev/null || missing+=(redis-server)
command -v python3 >/dev/null || missing+=(python3 python3-venv)
command -v curl >/dev/null || missing+=(curl)
if [ ${#missing[@]} -gt 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
fi
bash "$root/scripts/install-s3-test-tools.sh"
venv="${ALCEDO_S3_VENV:-$root/Tests/.venv-s3}"
binary="${ALCEDO_BINARY:-$root/.build/release/alcedo}"
[ -x "$binary" ] || (cd "$root" && make release)

sources="${SCALE_SOURCES:-40}"
seconds="${SCALE_SECONDS:-12}"
threads="${SCALE_THREADS:-16}"
net=10.77.0
work="$(mktemp -d /tmp/alcedo-scale.XXXXXX)"
declare -A pid=()
namespaces=(alc-node1 alc-node2 alc-node3 alc-node4 alc-node5 alc-redis1 alc-redis2 alc-redis3 alc-s3 alc-origin alc-load)
declare -A address=([alc-node1]=$net.11 [alc-node2]=$net.12 [alc-node3]=$net.13 [alc-node4]=$net.14 [alc-node5]=$net.15
  [alc-redis1]=$net.21 [alc-redis2]=$net.22 [alc-redis3]=$net.23 [alc-s3]=$net.30 [alc-origin]=$net.40 [alc-load]=$net.50)

teardown() {
  exec 2>/dev/null
  for name in "${!pid[@]}"; do kill "${pid[$name]}" 2>/dev/null || true; done
  sleep 0.5
  for name in "${!pid[@]}"; do kill -9 "${pid[$name]}" 2>/dev/null || true; done
  for ns in "${namespaces[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
  ip link del alc-br0 2>/dev/null || true
  [ -n "${SCALE_KEEP:-}" ] || rm -rf "$work"
}
trap teardown EXIT

# The network: one bridge, one namespace per host.
ip link add alc-br0 type bridge
ip addr add "$net.1/24" dev alc-br0
ip link set alc-br0 up
for ns in "${namespaces[@]}"; do
  ip netns add "$ns"
  ip link add "h-${ns#alc-}" type veth peer name eth0 netns "$ns"
  ip link set "h-${ns#alc-}" master alc-br0 up
  ip netns exec "$ns" ip addr add "${address[$ns]}/24" dev eth0
  ip netns exec "$ns" ip link set eth0 up
  ip netns exec "$ns" ip link set lo up
done

wait_port() {  # host port
  for _ in $(seq 300); do
    python3 -c "import socket,sys; socket.create_connection(('$1', $2), 0.2)" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "run.sh: nothing listens on $1:$2" >&2; return 1
}

# Redis, S3 (authentication on after the set-up), the origin.
for i in 1 2 3; do
  ip netns exec "alc-redis$i" redis-server --bind "$net.2$i" --port 6379 --save '' --appendonly no --protected-mode no \
    --maxmemory 256mb --maxmemory-policy allkeys-lru --dir "$work" --loglevel warning >"$work/redis$i.log" 2>&1 &
  pid[redis$i]=$!
done
ip netns exec alc-s3 env INITIAL_NO_AUTH_ACTION_COUNT=5 PYTHONUNBUFFERED=1 "$venv/bin/python" -m moto.server -H "$net.30" -p 5000 \
  >"$work/moto.log" 2>&1 &
pid[moto]=$!
wait_port "$net.30" 5000
echo '{"buckets": ["alcedo"], "objects": []}' >"$work/manifest.json"
credentials="$("$venv/bin/python" "$root/scripts/s3-test-fixture.py" setup "http://$net.30:5000" "$work/manifest.json")"
key_id="$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["accessKeyID"])' "$credentials")"
secret="$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["secretAccessKey"])' "$credentials")"

mkdir -p "$work/origin"
"$venv/bin/python" - "$work/origin" "$sources" <<'PY'
import random, sys
from PIL import Image, ImageDraw
folder, count = sys.argv[1], int(sys.argv[2])
for index in range(count):
    rng = random.Random(index)
    image = Image.new("RGB", (1600, 1200), (rng.randrange(256), rng.randrange(256), rng.randrange(256)))
    draw = ImageDraw.Draw(image)
    for _ in range(60):
        x, y = rng.randrange(1600), rng.randrange(1200)
        draw.ellipse((x, y, x + rng.randrange(20, 400), y + rng.randrange(20, 400)),
                     fill=(rng.randrange(256), rng.randrange(256), rng.randrange(256)))
    image.save(f"{folder}/img{index}.jpg", quality=88)
PY
ip netns exec alc-origin python3 -u -m http.server 80 --bind "$net.40" --directory "$work/origin" >"$work/origin.log" 2>&1 &
pid[origin]=$!
for i in 1 2 3; do wait_port "$net.2$i" 6379; done
wait_port "$net.40" 80

# The nodes.
start_node() {  # index
  local i=$1
  ip netns exec "alc-node$i" env AWS_ACCESS_KEY_ID="$key_id" AWS_SECRET_ACCESS_KEY="$secret" \
    IMGPROXY_S3_ENDPOINT="http://$net.30:5000" \
    "$binary" serve --host "$net.1$i" --port 8080 --cache-dir "$work/cache$i" --allow-private-networks \
    --redis "redis://$net.21:6379" --redis "redis://$net.22:6379" --redis "redis://$net.23:6379" \
    --result-storage s3://alcedo/cache --source-storage s3://alcedo/cache >>"$work/node$i.log" 2>&1 &
  pid[node$i]=$!
  wait_port "$net.1$i" 8080
}
retired_runs=0
metric() {  # node-index series -> value (0 when absent)
  curl -s --max-time 5 "http://$net.1$1:8080/metrics" | awk -v name="$2" '$1 == name { print int($2); found=1 } END { if (!found) print 0 }'
}
stop_node() {  # index: its processing runs are kept in retired_runs
  local i=$1
  retired_runs=$((retired_runs + $(metric "$i" alcedo_processing_runs_total)))
  kill "${pid[node$i]}"; wait "${pid[node$i]}" 2>/dev/null || true
  unset "pid[node$i]"
}
for i in 1 2 3 4 5; do start_node "$i"; done

processing_runs() {
  local total=$retired_runs
  for i in 1 2 3 4 5; do [ -n "${pid[node$i]:-}" ] && total=$((total + $(metric "$i" alcedo_processing_runs_total))); done
  echo "$total"
}
origin_gets() { grep -c '"GET /img' "$work/origin.log" || true; }
rss() {
  local out=""
  for i in 1 2 3 4 5; do
    if [ -n "${pid[node$i]:-}" ]; then out+="$(awk '/VmRSS/ { printf "%d", $2 / 1024 }' "/proc/${pid[node$i]}/status")/"; else out+="-/"; fi
  done
  echo "${out%/}"
}

# The URLs: every source at widths W, as WebP.
urls() {  # file widths... ; shuffled
  local file=$1; shift
  python3 - "$sources" "$net.40" "$@" >"$file" <<'PY'
import random, sys
count, origin, widths = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
paths = [f"/insecure/rs:fit:{w}:{w}/plain/http://{origin}/img{i}.jpg@webp" for i in range(count) for w in widths]
random.Random(7).shuffle(paths)
print("\n".join(paths))
PY
}
urls "$work/stored.txt" 100 200 300 400 500
nodes="$(printf "http://$net.1%s:8080," 1 2 3 4 5)"; nodes="${nodes%,}"

printf '| scenario | requests | failures | origin GETs | processing runs | p50 ms | p99 ms | RSS MB per node |\n'
printf '|---|---|---|---|---|---|---|---|\n'
row() {  # name result.json origin-before runs-before
  python3 - "$1" "$2" "$(( $(origin_gets) - $3 ))" "$(( $(processing_runs) - $4 ))" "$(rss)" <<'PY'
import json, sys
name, path, origin, runs, rss = sys.argv[1:]
r = json.loads(open(path).read().strip().splitlines()[-1])
print(f"| {name} | {r['requests']} | {r['failures']} | {origin} | {runs} | {r['p50_ms']} | {r['p99_ms']} | {rss} |")
for example in r["failure_examples"]:
    print(f"|   failure: {example} | | | | | | | |")
PY
}
# scenario NAME URLFILE MODE [ACTION HEAL]: load for $seconds (MODE time) or once through (MODE once);
# a partition ACTION made before the load starts and healed (HEAL) halfway; a rolling restart 2 s in.
scenario() {
  local name=$1 file=$2 mode=$3 action=${4:-} heal=${5:-}
  local origin_before runs_before
  sleep 1
  origin_before=$(origin_gets); runs_before=$(processing_runs)
  local flag=""; [ "$mode" = once ] && flag="--once"
  # A partition is made before the load starts, so the new variants meet it too.
  [ -n "$action" ] && [ "$action" != rolling_restart ] && $action
  ip netns exec alc-load python3 "$here/load.py" "$nodes" "$file" "$threads" "$seconds" --down "$work/down" $flag \
    >"$work/$name.json" &
  local load=$!
  if [ "$action" = rolling_restart ]; then
    sleep 2; $action
  elif [ -n "$action" ]; then
    sleep $((seconds / 2)); $heal
  fi
  wait "$load"
  row "$name" "$work/$name.json" "$origin_before" "$runs_before"
}

cut() {  # namespace addresses...: drop traffic to and from them
  local ns=$1; shift
  local set; set="$(IFS=,; echo "$*")"
  ip netns exec "$ns" nft add table inet alcedo_cut
  ip netns exec "$ns" nft "add chain inet alcedo_cut out { type filter hook output priority 0; policy accept; }"
  ip netns exec "$ns" nft "add chain inet alcedo_cut in { type filter hook input priority 0; policy accept; }"
  ip netns exec "$ns" nft add rule inet alcedo_cut out ip daddr "{ $set }" drop
  ip netns exec "$ns" nft add rule inet alcedo_cut in ip saddr "{ $set }" drop
}
isolate() {  # namespace: drop everything but loopback
  ip netns exec "$1" nft add table inet alcedo_cut
  ip netns exec "$1" nft "add chain inet alcedo_cut out { type filter hook output priority 0; policy accept; }"
  ip netns exec "$1" nft "add chain inet alcedo_cut in { type filter hook input priority 0; policy accept; }"
  ip netns exec "$1" nft add rule inet alcedo_cut out oifname != lo drop
  ip netns exec "$1" nft add rule inet alcedo_cut in iifname != lo drop
}
heal() { ip netns exec "$1" nft delete table inet alcedo_cut 2>/dev/null || true; }

cut_redis() { cut alc-node1 "$net.21" "$net.22" "$net.23"; }
heal_node1() { heal alc-node1; }
cut_store() { cut alc-node1 "$net.30"; }
cut_origin() { cut alc-node1 "$net.40"; }
cut_both() { cut alc-node1 "$net.21" "$net.22" "$net.23" "$net.30"; }
isolate_redis2() { isolate alc-redis2; }
heal_redis2() { heal alc-redis2; }
flush_redis() { for i in 1 2 3; do ip netns exec "alc-redis$i" redis-cli -h "$net.2$i" flushall >/dev/null; done; }

# A rolling restart as behind a load balancer: each node in turn is taken out of rotation (the
# load generator stops sending to it), drained for a second, stopped, its disk cache wiped,
# started, and put back.
rolling_restart() {
  for i in 1 2 3 4 5; do
    echo "$net.1$i:8080" >>"$work/down"
    sleep 1
    stop_node "$i"
    rm -rf "$work/cache$i"
    start_node "$i"
    grep -v "^$net.1$i:8080\$" "$work/down" >"$work/down.next" || true
    mv "$work/down.next" "$work/down"
  done
}
nothing() { :; }
: >"$work/down"

scenario cold "$work/stored.txt" once
scenario warm "$work/stored.txt" time
flush_redis
seconds=$((seconds * 2)) scenario rolling-restart "$work/stored.txt" time rolling_restart nothing
scenario after-restart "$work/stored.txt" once
urls "$work/mix1.txt" 100 200 310 320; scenario cut-redis "$work/mix1.txt" time cut_redis heal_node1
urls "$work/mix2.txt" 100 200 330 340; scenario cut-store "$work/mix2.txt" time cut_store heal_node1
urls "$work/mix3.txt" 100 200 350 360; scenario cut-origin "$work/mix3.txt" time cut_origin heal_node1
urls "$work/mix4.txt" 100 200 370 380; scenario redis2-isolated "$work/mix4.txt" time isolate_redis2 heal_redis2
urls "$work/mix5.txt" 100 200 390 410; scenario cut-redis+store "$work/mix5.txt" time cut_both heal_node1
stop_node 5; rm -rf "$work/cache5"; flush_redis; start_node 5
nodes="http://$net.15:8080"
scenario new-node "$work/stored.txt" once
echo
echo "sources: $sources JPEG 1600x1200; variants: WebP fit 100..500; threads: $threads; load per timed scenario: ${seconds} s"
echo "S3 objects: $(ip netns exec alc-s3 true; "$venv/bin/python" - "http://$net.30:5000" "$key_id" "$secret" <<'PY'
import sys, boto3
s3 = boto3.client("s3", endpoint_url=sys.argv[1], aws_access_key_id=sys.argv[2], aws_secret_access_key=sys.argv[3], region_name="us-east-1")
sizes = {"results": [], "sources": []}
for page in s3.get_paginator("list_objects_v2").paginate(Bucket="alcedo", Prefix="cache/"):
    for item in page.get("Contents", []):
        sizes[item["Key"].split("/")[1]].append(item["Size"])
print(", ".join(f"{k} {len(v)} (mean {sum(v) // max(1, len(v))} bytes)" for k, v in sizes.items()))
PY
)"
