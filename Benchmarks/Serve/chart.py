#!/usr/bin/env python3
"""Draws soak.json (from soak.py) as one PNG: RSS over time, a line per server and connection
count, the load's end marked. Usage: chart.py RESULTS/soak.json OUT.png"""
import json
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

LABELS = {"alcedo": "Alcedo", "thumbor": "thumbor", "vips": "libvips stand-in"}

data = json.load(open(sys.argv[1]))
figure, axes = plt.subplots(figsize=(10, 5))
for run in data["runs"]:
    times = [t / 60 for t, _ in run["samples"]]
    rss = [value / 1e6 for _, value in run["samples"]]
    extra = " ".join(run.get("alcedo_args", [])) if run["server"] == "alcedo" else ""
    name = LABELS.get(run["server"], run["server"]) + (f" {extra}" if extra else "")
    axes.plot(times, rss, label=f"{name}, {run['connections']} conn.")
    axes.axvline(run["load_seconds"] / 60, color="grey", linewidth=0.5, linestyle=":")
axes.set_xlabel("minutes")
axes.set_ylabel("RSS of the serving processes (MB)")
axes.set_title(f"Mixed load, a new variant per request ({data['duration'] / 60:.0f} min), RSS every {data['sample_every']:.0f} s")
axes.grid(alpha=0.3)
axes.legend()
figure.tight_layout()
figure.savefig(sys.argv[2], dpi=110)
