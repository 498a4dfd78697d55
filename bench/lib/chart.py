"""Draws bench/run's bar chart: net events/s/core per query and system (log scale).

Reads {"queries": [...], "data": {system: {query: rate}}} on stdin; writes the PNG named by argv[1].
Runs in bench/.venv (matplotlib)."""

import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    spec = json.load(sys.stdin)
    queries = spec["queries"]
    systems = [s for s in ("flow", "flink", "limit") if s in spec["data"]]
    width = 0.8 / max(len(systems), 1)
    fig, ax = plt.subplots(figsize=(10, 5))
    for i, s in enumerate(systems):
        xs = [j + i * width for j in range(len(queries))]
        ys = [spec["data"][s].get(q, 0) for q in queries]
        ax.bar(xs, ys, width, label=s)
    ax.set_xticks([j + width * (len(systems) - 1) / 2 for j in range(len(queries))])
    ax.set_xticklabels(queries)
    ax.set_yscale("log")
    ax.set_ylabel("events / s / core (net of start-up)")
    ax.set_title("Nexmark, checkpoints off")
    ax.legend()
    fig.tight_layout()
    fig.savefig(sys.argv[1], dpi=100)


if __name__ == "__main__":
    main()
