#!/usr/bin/env python3
"""bench/parallelism.py: the Nexmark queries at parallelism 1 and 2 (or --parallelism A,B) side by
side, in the limit programs (bench/limit), Flow and Flink, on the same events, with runs of both
parallelisms alternated: wall-time speedup and CPU per event of the second against the first.

  bench/parallelism.py --flowc build/bin/flowc --build-dir build
  bench/parallelism.py --systems limit,flow --queries q0,q5 --runs 5

Correctness first: each system's rows and checksum at each parallelism (--check-events events)
must equal the limit's at parallelism 1, or that query's timing is skipped and the exit code is 1.
Flow and Flink start a process (Flink a JVM and a MiniCluster) whose cost does not depend on the
events: their wall and CPU are net of a --baseline-events run at the same parallelism (median of
--runs), as in bench/run. The limit's stateful queries are single-threaded by design (bench/run
does the same), so only q0-q2 have a limit speedup. Writes bench/results/<date>-parallelism.md.
"""

import argparse
import datetime
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench" / "lib"))

from systems import QUERIES, Flink, Flow, Limit, RunError, parse_query_events  # noqa: E402


def log(msg):
    print(f"[parallelism] {msg}", file=sys.stderr, flush=True)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--systems", default="limit,flow,flink")
    p.add_argument("--queries", default=",".join(QUERIES))
    p.add_argument("--parallelism", default="1,2", help="the two parallelisms, A,B")
    p.add_argument("--events", type=int, default=5_000_000)
    p.add_argument("--query-events", default="q7=2000000", help="per-query --events, Q=N,...")
    p.add_argument("--check-events", type=int, default=20_000)
    p.add_argument("--baseline-events", type=int, default=1000)
    p.add_argument("--rate", type=int, default=1000)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--flowc", default=str(ROOT / "build" / "bin" / "flowc"))
    p.add_argument("--build-dir", default=str(ROOT / "build"), help="where nexmark_limit is built")
    p.add_argument("--limit-bin", default=None, help="a built nexmark_limit (no build step)")
    p.add_argument("--workdir", default=str(ROOT / "build" / "bench-parallelism-work"))
    p.add_argument("--out", default=None, help="report path (default bench/results/<date>-...)")
    a = p.parse_args()
    a.pair = [int(x) for x in a.parallelism.split(",")]
    if len(a.pair) != 2 or min(a.pair) < 1:
        p.error("--parallelism takes two positive numbers, e.g. 1,2")
    a.queries = [q for q in a.queries.split(",") if q]
    unknown = [q for q in a.queries if q not in QUERIES]
    if unknown:
        p.error(f"unknown queries {unknown}; known: {', '.join(QUERIES)}")
    try:
        overrides = parse_query_events(a.query_events)
    except ValueError as e:
        p.error(str(e))
    a.events_by_query = {q: overrides.get(q, a.events) for q in a.queries}
    return a


def main():
    a = parse_args()
    workdir = Path(a.workdir).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    systems = {}
    names = [s for s in a.systems.split(",") if s]
    if "limit" not in names:
        names.insert(0, "limit")  # the reference of the correctness check
    for name in names:
        if name == "limit":
            systems[name] = Limit(ROOT, Path(a.build_dir).resolve())
            if a.limit_bin:
                systems[name].binary = Path(a.limit_bin).resolve()
            else:
                systems[name].build(log)
        elif name == "flow":
            systems[name] = Flow(ROOT, Path(a.flowc).resolve(), workdir)
            systems[name].build(log, a.queries, compile_times=False, reuse=True)
        elif name == "flink":
            systems[name] = Flink(ROOT)
            systems[name].build(log)
        else:
            sys.exit(f"unknown system {name}")

    failures = []
    usable = {}
    for q in a.queries:
        ref = systems["limit"].run(q, a.check_events, a.rate, 1, "off", workdir)
        ok = True
        for name, s in systems.items():
            if name == "flow" and not s.available(q):
                failures.append(f"{q} flow: {s.why_not(q)}")
                ok = False
                continue
            for par in a.pair:
                kw = {"check": True} if name == "flow" else {}
                r = s.run(q, a.check_events, a.rate, par, "off", workdir, **kw)
                if (r.rows, r.checksum) != (ref.rows, ref.checksum):
                    failures.append(f"{q} {name} p{par}: {r.rows} rows {r.checksum:x}, the limit "
                                    f"{ref.rows} rows {ref.checksum:x}")
                    ok = False
        usable[q] = ok
        log(f"{q}: {'results agree' if ok else 'MISMATCH, not timed'} ({ref.rows} rows)")

    timing = {}  # (q, system, parallelism) -> [(wall, cpu)]
    baseline = {}
    for q in a.queries:
        if not usable[q]:
            continue
        for name, s in systems.items():
            if name == "limit":
                continue
            for par in a.pair:
                runs = [s.run(q, a.baseline_events, a.rate, par, "off", workdir)
                        for _ in range(a.runs)]
                baseline[(q, name, par)] = (statistics.median(r.wall_s for r in runs),
                                            statistics.median(r.cpu_s for r in runs))
        for i in range(a.runs):
            for name, s in systems.items():
                for par in a.pair:
                    r = s.run(q, a.events_by_query[q], a.rate, par, "off", workdir)
                    timing.setdefault((q, name, par), []).append((r.wall_s, r.cpu_s))
            log(f"{q}: run {i + 1}/{a.runs}")

    p1, p2 = a.pair
    lines = [f"# Parallelism {p1} and {p2} side by side "
             f"({datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC)", "",
             f"Medians of {a.runs} alternated runs, event-time rate {a.rate}/s, events per query: "
             + ", ".join(f"{q} {a.events_by_query[q]:,}" for q in a.queries)
             + f". Flow and Flink net of a {a.baseline_events}-event run at the same parallelism. "
             "The limit's stateful queries are single-threaded (speedup 1 by design).", "",
             f"| query | system | wall p{p1} s | wall p{p2} s | speedup p{p2}/p{p1} | "
             f"CPU p{p1} s | CPU p{p2} s | CPU per event p{p2}/p{p1} |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    for q in a.queries:
        if not usable[q]:
            lines.append(f"| {q} | | results disagree: not timed | | | | | |")
            continue
        for name in systems:
            cells = []
            for par in a.pair:
                w = statistics.median(x[0] for x in timing[(q, name, par)])
                c = statistics.median(x[1] for x in timing[(q, name, par)])
                if (q, name, par) in baseline:
                    bw, bc = baseline[(q, name, par)]
                    w, c = w - bw, c - bc
                cells.append((w, c))
            (w1, c1), (w2, c2) = cells
            speed = f"{w1 / w2:.2f}" if w2 > 0 else "n/m"
            ratio = f"{c2 / c1:.2f}" if c1 > 0 else "n/m"
            lines.append(f"| {q} | {name} | {w1:.2f} | {w2:.2f} | {speed} | {c1:.2f} | {c2:.2f} "
                         f"| {ratio} |")
    if failures:
        lines += ["", "Failures:", ""] + [f"- {f}" for f in failures]
    text = "\n".join(lines) + "\n"
    out = Path(a.out) if a.out else (ROOT / "bench" / "results" /
                                     f"{datetime.datetime.utcnow():%Y-%m-%d-%H%M}-parallelism.md")
    out.write_text(text)
    print(text)
    log(f"report: {out}")
    return 1 if failures else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except RunError as e:
        sys.exit(f"parallelism: {e}")
