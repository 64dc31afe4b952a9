"""Prints the bulk download results as a table with ratios to Alcedo.
Usage: report.py RESULTS.jsonl"""
import json
import sys

rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
print(f"{'concurrency':>11} {'client':>9} {'median ms':>10} {'MB/s':>8} {'client/alcedo':>14}")
for concurrency in sorted({row["concurrency"] for row in rows}):
    group = [row for row in rows if row["concurrency"] == concurrency]
    alcedo = next(row["median_ms"] for row in group if row["client"] == "alcedo")
    for row in group:
        mbps = row["bytes"] / 1e6 / (row["median_ms"] / 1000)
        print(f"{concurrency:>11} {row['client']:>9} {row['median_ms']:>10.1f} {mbps:>8.1f} {row['median_ms'] / alcedo:>14.2f}")
print("client/alcedo > 1: Alcedo is faster by that factor.")
