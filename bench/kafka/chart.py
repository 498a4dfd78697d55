"""Draws bench/kafka/run.py's chart: records/s (wall) per system, and latency p50/p99.

Reads {"throughput": {label: rate}, "latency": {label: [p50_ms, p99_ms]}} on stdin; writes the
PNG named by argv[1]. Runs in bench/.venv (matplotlib), like bench/lib/chart.py."""

import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    spec = json.load(sys.stdin)
    panels = 2 if spec.get("latency") else 1
    fig, axes = plt.subplots(1, panels, figsize=(6 * panels, 4.5), squeeze=False)
    labels = list(spec["throughput"])
    ax = axes[0][0]
    ax.barh(labels, [spec["throughput"][k] / 1000 for k in labels])
    ax.invert_yaxis()
    ax.set_xlabel("thousand records / s (wall, median)")
    ax.set_title("Kafka -> Kafka throughput")
    if panels == 2:
        ax = axes[0][1]
        lat = spec["latency"]
        names = list(lat)
        ys = range(len(names))
        ax.barh([y - 0.2 for y in ys], [lat[k][0] for k in names], 0.4, label="p50")
        ax.barh([y + 0.2 for y in ys], [lat[k][1] for k in names], 0.4, label="p99")
        ax.set_yticks(list(ys))
        ax.set_yticklabels(names)
        ax.invert_yaxis()
        ax.set_xscale("log")
        ax.set_xlabel("end-to-end latency, ms (log)")
        ax.legend()
    fig.tight_layout()
    fig.savefig(sys.argv[1], dpi=100)


if __name__ == "__main__":
    main()
