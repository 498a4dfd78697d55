"""Summaries, the Markdown table and the PNG chart of a bench/run."""

import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent


def summarize(events, runs, baseline_cpu, baseline_events):
    cpu = statistics.median(r.cpu_s for r in runs)
    wall = statistics.median(r.wall_s for r in runs)
    cell = {
        "events": events,
        "runs": len(runs),
        "cpu_s": cpu,
        "wall_s": wall,
        "cpu_all": [round(r.cpu_s, 4) for r in runs],
        "rate": events / cpu if cpu > 0 else float("inf"),
        "wall_rate": events / wall if wall > 0 else float("inf"),
        "baseline_cpu_s": baseline_cpu,
    }
    if baseline_cpu is not None and cpu > baseline_cpu:
        cell["net_rate"] = (events - baseline_events) / (cpu - baseline_cpu)
    else:
        cell["net_rate"] = cell["rate"]
    spread = (max(r.cpu_s for r in runs) - min(r.cpu_s for r in runs)) / cpu if cpu > 0 else 0
    cell["spread"] = spread
    if runs and "job_cpu_s" in runs[0].extra:
        cell["job_cpu_s"] = statistics.median(r.extra["job_cpu_s"] for r in runs)
    return cell


def machine_info():
    info = {"nproc": os.cpu_count(), "cpu": platform.processor() or "?", "memory_gb": "?"}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                info["memory_gb"] = round(int(line.split()[1]) / 1024 / 1024, 1)
        info["loadavg"] = Path("/proc/loadavg").read_text().split()[:3]
    except OSError:
        pass
    try:
        info["commit"] = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                                        capture_output=True, text=True).stdout.strip()
    except OSError:
        pass
    return info


def fmt_rate(x):
    if x is None:
        return "—"
    if x >= 1e6:
        return f"{x / 1e6:.2f}M"
    if x >= 1e3:
        return f"{x / 1e3:.0f}K"
    return f"{x:.0f}"


def net_measurable(cell):
    """False when the timed run's CPU does not exceed its start-up baseline's (the query's work
    is below the start-up noise): summarize() then falls back to the gross rate, which must not
    be shown or compared as a net rate."""
    base = cell.get("baseline_cpu_s")
    return base is None or cell["cpu_s"] > base


def markdown(meta, queries, check, timing, modes, compile_times, failures, notes):
    L = []
    L.append(f"# Nexmark: Flow vs Flink vs hand-written C++ ({meta.get('commit', '?')})\n")
    L.append(f"Machine: {meta['nproc']} CPUs ({meta['cpu']}), {meta['memory_gb']} GB; load average "
             f"at the end {' '.join(meta.get('loadavg', []))}. Events per timed run: "
             f"{meta['events']:,}"
             + "".join(f" ({q}: {n:,})" for q, n in sorted(meta.get("query_events", {}).items()))
             + f"; event-time rate {meta['rate']}/s; parallelism "
             f"{meta['parallelism']}; median of {meta['runs']} run(s); start-up baseline: "
             + (f"{meta['baseline_events']:,} events" if meta['baseline_events'] > 0 else
                "the correctness run") + ".\n")
    L.append("## Correctness (rows / checksum vs the limit program, "
             f"{meta['check_events']:,} events)\n")
    systems = meta["systems"]
    L.append("| query | " + " | ".join(systems) + " |")
    L.append("|---|" + "---|" * len(systems))
    for q in queries:
        cells = []
        ref = check.get(q, {}).get("limit")
        for s in systems:
            v = check.get(q, {}).get(s)
            if v is None:
                cells.append("not run")
            elif v[0] == "error":
                cells.append("ERROR")
            elif s == "limit":
                cells.append(f"{v[0]} / {v[1]:016x}")
            else:
                cells.append("ok" if v == ref else f"MISMATCH {v[0]} / {v[1]:016x}")
        L.append(f"| {q} | " + " | ".join(cells) + " |")
    L.append("")
    for mode in modes:
        rows = [(q, {s: timing.get((q, s, mode)) for s in systems}) for q in queries]
        if not any(c for _, cs in rows for c in cs.values()):
            continue
        L.append(f"## Events per second per core, checkpoints {mode}\n")
        L.append("Net = events / (CPU − CPU of the start-up baseline run); gross = events / CPU of "
                 "the whole process. Ratios use the net rates of the same query; n/m: the timed "
                 "run used no more CPU than the baseline run, so there is no net rate.\n")
        L.append("| query | " + " | ".join(f"{s} net (gross)" for s in systems)
                 + " | Flow/Flink | Flow/limit | Flink/limit |")
        L.append("|---|" + "---|" * (len(systems) + 3))
        for q, cs in rows:
            cells = []
            for s in systems:
                c = cs.get(s)
                cells.append("—" if c is None else
                             f"{fmt_rate(c['net_rate']) if net_measurable(c) else 'n/m'} "
                             f"({fmt_rate(c['rate'])})")

            def ratio(a, b):
                ca, cb = cs.get(a), cs.get(b)
                if not ca or not cb or not net_measurable(ca) or not net_measurable(cb):
                    return "—"
                return f"{ca['net_rate'] / cb['net_rate']:.2f}"
            L.append(f"| {q} | " + " | ".join(cells) + f" | {ratio('flow', 'flink')} | "
                     f"{ratio('flow', 'limit')} | {ratio('flink', 'limit')} |")
        L.append("")
        L.append("CPU seconds (median) and wall seconds (median) per cell:\n")
        L.append("| query | system | cpu s | wall s | spread of cpu (max−min)/median | baseline cpu s |")
        L.append("|---|---|---|---|---|---|")
        for q, cs in rows:
            for s, c in cs.items():
                if c:
                    base = "—" if c["baseline_cpu_s"] is None else f"{c['baseline_cpu_s']:.2f}"
                    L.append(f"| {q} | {s} | {c['cpu_s']:.3f} | {c['wall_s']:.2f} | "
                             f"{c['spread'] * 100:.0f}% | {base} |")
        L.append("")
    L += overhead_table(queries, timing, modes, systems)
    if compile_times:
        L.append("## Flow compile time (`flowc build`)\n")
        L.append("| query | cold (empty cache) s | warm s |")
        L.append("|---|---|---|")
        for q, (cold, warm) in compile_times.items():
            L.append(f"| {q} | {cold:.1f} | {warm:.1f} |")
        L.append("")
    if failures or notes:
        L.append("## Failures and notes\n")
        L += [f"- **{f}**" for f in failures] + [f"- {n}" for n in notes]
        L.append("")
    return "\n".join(L) + "\n"


def overhead_table(queries, timing, modes, systems):
    """Checkpoint overhead: extra CPU per event of each checkpoint mode over `off`, from the net
    rates of the same query and system (off net rate / mode net rate − 1)."""
    ckpt_modes = [m for m in modes if m != "off"]
    pairs = [(s, m) for s in systems if s != "limit" for m in ckpt_modes]
    rows = []
    for q in queries:
        cells = []
        for s, m in pairs:
            off, on = timing.get((q, s, "off")), timing.get((q, s, m))
            if (off and on and on["net_rate"] > 0 and net_measurable(off)
                    and net_measurable(on)):
                cells.append(f"{(off['net_rate'] / on['net_rate'] - 1) * 100:+.0f}%")
            else:
                cells.append("—")
        if any(c != "—" for c in cells):
            rows.append(f"| {q} | " + " | ".join(cells) + " |")
    if not rows:
        return []
    L = ["## Checkpoint overhead (extra CPU per event vs checkpoints off, net rates)\n",
         "| query | " + " | ".join(f"{s} {m}" for s, m in pairs) + " |",
         "|---|" + "---|" * len(pairs)]
    return L + rows + [""]


def chart(path, queries, timing, log):
    """Draws the net rates (off mode) with matplotlib from bench/.venv (created on first use)."""
    venv = ROOT / "bench" / ".venv"
    python = venv / "bin" / "python"
    try:
        if not python.exists():
            log("chart: creating bench/.venv with matplotlib")
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        probe = subprocess.run([str(python), "-c", "import matplotlib"], capture_output=True)
        if probe.returncode != 0:
            subprocess.run([str(python), "-m", "pip", "install", "-q", "matplotlib"], check=True)
    except (subprocess.CalledProcessError, OSError) as e:
        log(f"chart: skipped ({e})")
        return None
    data = {}
    for (q, s, mode), c in timing.items():
        if mode == "off" and net_measurable(c):
            data.setdefault(s, {})[q] = c["net_rate"]
    import json
    r = subprocess.run([str(python), str(Path(__file__).parent / "chart.py"), str(path)],
                       input=json.dumps({"queries": queries, "data": data}), text=True,
                       capture_output=True)
    if r.returncode != 0:
        log(f"chart: failed: {r.stderr.strip()[-300:]}")
        return None
    return path
