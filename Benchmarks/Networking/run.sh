#!/usr/bin/env bash
# Networking benchmark, all on 127.0.0.1 in one run:
#  1. 200 JPEGs of ~200 KB served by a NIO file server; Alcedo's ImageDownloader, Python
#     requests (Session per thread) and curl (one process, connection reuse) download them all,
#     one at a time and 6 at a time; prints median wall times and ratios.
#  2. Idle CPU: 8 requests held by a server that stalls mid-body, measured for 5 s (getrusage
#     in the process, cross-checked with /proc/<pid>/stat), with the default loader and with
#     URLSession.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
runs="${RUNS:-5}"
python3 -c "import requests, PIL, numpy" 2>/dev/null || python3 -m pip install -q requests pillow numpy
work="$(mktemp -d)"
server_pid=""
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

(cd "$here" && swift build -c release >/dev/null)
bench="$(cd "$here" && swift build -c release --show-bin-path)/NetworkBenchmarks"
python3 "$here/make-inputs.py" "$work/files" 200

"$bench" serve "$work/files" > "$work/server.out" &
server_pid=$!
for _ in $(seq 100); do grep -q PORT "$work/server.out" 2>/dev/null && break; sleep 0.05; done
port="$(awk '/PORT/ {print $2}' "$work/server.out")"
base="http://127.0.0.1:$port"
echo "200 files, $(du -sk "$work/files" | cut -f1) KB in all, server on port $port, $runs runs each"

: > "$work/results.jsonl"
for concurrency in 1 6; do
  # Warm-up pass (connections, page cache), not counted.
  "$bench" fetch "$base" "$work/names.txt" "$concurrency" 1 > /dev/null
  "$bench" fetch "$base" "$work/names.txt" "$concurrency" "$runs" >> "$work/results.jsonl"
  python3 "$here/peers.py" "$base" "$work/names.txt" "$concurrency" "$runs" >> "$work/results.jsonl"
done
python3 "$here/report.py" "$work/results.jsonl"

echo
echo "Idle CPU while 8 requests wait on a stalled server for 5 s:"
for loader in alcedo-http urlsession; do
  "$bench" idle "$base/stall" 8 5 "$loader" > "$work/idle.json" &
  pid=$!
  sleep 1.5  # requests in flight (the tool waits 1 s before its own window)
  ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
  t0=$(ticks); s0=$(date +%s.%N)
  sleep 3
  t1=$(ticks); s1=$(date +%s.%N)
  wait "$pid"
  hz=$(getconf CLK_TCK)
  proc=$(python3 -c "print(f'{($t1-$t0)/$hz/($s1-$s0)*100:.2f}')")
  python3 -c "import json,sys; r=json.load(open('$work/idle.json')); print(f\"  {r['loader']:>16}: {r['cpu_percent_of_one_core']:.2f}% of one core (getrusage, {r['cpu_s']:.3f} s CPU in {r['wall_s']:.2f} s); /proc/$pid/stat over 3 s: $proc%\")"
done
