#!/usr/bin/env python3
"""Draws a formats-*.json of formats_bench.py as one chart: requests/s per case (the median of
the tries) for each server side by side, each bar labelled with its CPU ms per request.
Usage: chart_formats.py RESULTS/formats-....json OUT.png|OUT.svg"""
import json
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

LABELS = {"alcedo": "Alcedo", "thumbor-close": "thumbor 7.8", "vips": "libvips stand-in"}
CASES = {"jpeg": "JPEG", "png": "PNG", "webp": "WebP", "avif": "AVIF", "gif": "GIF",
         "gif-gif": "anim. GIF\n→ GIF", "gif-webp": "anim. GIF\n→ WebP", "webp-webp": "anim. WebP\n→ WebP"}

data = json.load(open(sys.argv[1]))
summary = {(row["case"], row["server"]): row for row in data["summary"]}
cases = [case for case in CASES if any(key[0] == case for key in summary)]
servers = [server for server in LABELS if any(key[1] == server for key in summary)]
figure, axes = plt.subplots(figsize=(12, 5.5))
width = 0.8 / max(1, len(servers))
for index, server in enumerate(servers):
    xs = [position + (index - (len(servers) - 1) / 2) * width for position in range(len(cases))]
    rows = [summary.get((case, server)) for case in cases]
    heights = [row["rps"] if row else 0 for row in rows]
    bars = axes.bar(xs, heights, width, label=LABELS[server])
    for bar, row in zip(bars, rows):
        if row:
            axes.annotate(f"{row['cpu']:.0f}", (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                          ha="center", va="bottom", fontsize=7, xytext=(0, 2), textcoords="offset points")
axes.set_xticks(range(len(cases)), [CASES[case] for case in cases])
axes.set_ylabel("requests/s (median of the tries)")
meta = data["meta"]
axes.set_title(f"A new variant per request, {meta['connections']} connections, {meta['tries']} x {meta['duration']} s "
               f"({meta['date']}); labels: CPU ms per request")
axes.grid(axis="y", alpha=0.3)
axes.legend()
figure.tight_layout()
figure.savefig(sys.argv[2], dpi=100)
