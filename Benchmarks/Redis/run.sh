#!/usr/bin/env bash
# Redis client benchmark: Alcedo's RESP client on SwiftNIO against hiredis (Debian's C client),
# GETs of 50 KB entries from one local redis-server, one at a time and 16 in flight, each side
# checking the value's SHA-256 as the shared tier does (hiredis also without the check: "raw").
# Three rounds, alternating; prints the median microseconds per GET and the ratios.
# Environment: REDIS_BENCH_GETS (default 2000), REDIS_BENCH_VALUE (bytes, default 51200),
# REDIS_BENCH_IN_FLIGHT (default 16).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
ALCEDO_WITH_REDIS_BENCH=1 bash "$root/scripts/install-deps.sh"
work="$(mktemp -d)"
server=""
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"' EXIT
gets="${REDIS_BENCH_GETS:-2000}"
value="${REDIS_BENCH_VALUE:-51200}"
in_flight="${REDIS_BENCH_IN_FLIGHT:-16}"

# The Swift side shares the main package's release build folder (the same dependencies).
(cd "$here" && swift build -c release --scratch-path "$root/.build" >"$work/build.log" 2>&1) || { cat "$work/build.log"; exit 1; }
swift_bench="$(cd "$here" && swift build -c release --scratch-path "$root/.build" --show-bin-path)/RedisClientBenchmark"
cc -O2 -o "$work/hiredis-get" "$here/hiredis-get.c" -lhiredis -lcrypto

port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$work" --daemonize no \
  --loglevel warning >/dev/null 2>&1 &
server=$!
for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done

cd "$work"
: >results.jsonl
for round in 1 2 3; do
  "$swift_bench" "$port" "$gets" "$value" "$in_flight" >>results.jsonl
  ./hiredis-get "$port" keys.txt "$in_flight" >>results.jsonl
  ./hiredis-get "$port" keys.txt "$in_flight" raw >>results.jsonl
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$value" <<'PY'
import json, statistics, sys
rows = [json.loads(line) for line in open("results.jsonl")]
median = {}
for client in ("alcedo", "hiredis", "hiredis-raw"):
    mine = [r for r in rows if r["client"] == client]
    median[client] = {mode: statistics.median(r[f"{mode}_s"] / r["gets"] * 1e6 for r in mine)
                      for mode in ("sequential", "pipelined")}
print(f"GET of {int(sys.argv[1]) // 1024} KB values, {rows[0]['gets']} per pass, {rows[0]['in_flight']} in flight "
      f"when pipelined; median of 3 rounds, microseconds per GET (wall clock, redis-server included)")
print("| client | one at a time | pipelined |\n|---|---|---|")
for client, label in (("alcedo", "Alcedo (NIO; GET + SHA-256 check + metadata parse + copy)"),
                      ("hiredis", "hiredis (GET + SHA-256 check + copy)"), ("hiredis-raw", "hiredis (GET only)")):
    print(f"| {label} | {median[client]['sequential']:.1f} | {median[client]['pipelined']:.1f} |")
for mode in ("sequential", "pipelined"):
    print(f"Alcedo / hiredis, {mode}: {median['alcedo'][mode] / median['hiredis'][mode]:.2f}x "
          f"(against hiredis without the check: {median['alcedo'][mode] / median['hiredis-raw'][mode]:.2f}x)")
PY
