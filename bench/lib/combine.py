#!/usr/bin/env python3
"""Combines the .json results of several bench/run invocations into one report (.md + .png).

  bench/lib/combine.py OUT_STEM a.json b.json ...   writes OUT_STEM.md and OUT_STEM.png

Used when the systems or modes of one table were measured by separate runs (e.g. Flink's
checkpoint modes in one run, Flow's in another, each with the limit program timed alongside).
A cell (query, system, mode) is taken from the first file that has it; the report lists which
file each system/mode came from, so cross-run ratios are visible as such."""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import report  # noqa: E402
from systems import QUERIES  # noqa: E402


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    stem = Path(argv[1])
    files = [Path(a) for a in argv[2:]]
    timing, check, sources, failures, notes = {}, {}, {}, [], []
    systems, modes, meta = [], [], None
    for f in files:
        data = json.loads(f.read_text())
        meta = meta or data["meta"]
        for s in data["meta"]["systems"]:
            if s not in systems:
                systems.append(s)
        for m in data["meta"]["modes"]:
            if m not in modes:
                modes.append(m)
        for q, cells in data["check"].items():
            for s, v in cells.items():
                if v is not None and check.setdefault(q, {}).get(s) is None:
                    check[q][s] = tuple(v) if isinstance(v, list) else v
        for cell in data["timing"]:
            key = (cell["query"], cell["system"], cell["mode"])
            if key not in timing:
                timing[key] = cell
                sources.setdefault((cell["system"], cell["mode"]), set()).add(f.name)
        failures += [f"{f.name}: {x}" for x in data["failures"]]
        loads = data["meta"].get("loadavg", [])
        notes.append(f"{f.name}: systems {', '.join(data['meta']['systems'])}, modes "
                     f"{', '.join(data['meta']['modes'])}, commit {data['meta'].get('commit', '?')}, "
                     f"load average at the end {' '.join(loads)}")
    for (s, m), names in sorted(sources.items()):
        notes.append(f"{s} {m}: from {', '.join(sorted(names))}")
    queries = [q for q in QUERIES if any(k[0] == q for k in timing) or q in check]
    order = [s for s in ("limit", "flink", "flow") if s in systems]
    meta = dict(meta, systems=order, modes=modes)
    text = report.markdown(meta, queries, check, timing, modes, {}, failures, notes)
    text = text.replace("# Nexmark:", "# Nexmark (combined runs):", 1)
    stem.with_suffix(".md").write_text(text)
    png = report.chart(stem.with_suffix(".png"), queries, timing,
                       lambda m: print(m, file=sys.stderr))
    print(stem.with_suffix(".md"), png or "(no chart)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
