#!/usr/bin/env python3
"""bench/checkpoints/run.py: what checkpoints cost. A Nexmark q5-like keyed job (bids keyed by
auction: a running count and a 10 s tumbling count per auction) is built with flowc and run with
checkpoints off and every 1 s, once per state backend; each cell is the median of --runs runs.

  bench/checkpoints/run.py [--events N] [--runs 5] [--parallelism 2] [--backends heap,rocksdb]
                           [--flowc PATH] [--work DIR]

Reported per cell: wall seconds, events per second (events / wall), process CPU seconds
(user + sys of the job process) and CPU nanoseconds per event, checkpoints completed. A backend
other than "heap" is passed as --state-backend NAME; a backend the job binary does not know is
reported as not available. Exit code 1 when a run fails.
"""

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent

SCRIPT = """
param events: int = 1000000

stream bids = from nexmark(kind: bid, events: events, rate: 100000)
  event time dateTime watermark 0s

stream running = bids
  | key by auction
  | aggregate count() as n
  | select auction, n

stream windowed = bids
  | key by auction
  | window tumbling 10s
  | aggregate count() as num
  | select auction, num, window_start

running | into blackhole()
windowed | into blackhole()
"""


def run_once(binary, args, env):
    """Runs the job; returns (wall s, cpu s, completed checkpoints, stderr)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    p = subprocess.run([str(binary)] + args, capture_output=True, text=True, env=env)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if p.returncode != 0:
        raise RuntimeError(f"exit {p.returncode}: {p.stderr[-2000:]}")
    completed = len(re.findall(r"result=completed", p.stderr))
    return wall, cpu, completed, p.stderr


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--events", type=int, default=5_000_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--parallelism", type=int, default=2)
    ap.add_argument("--backends", default="heap,rocksdb")
    ap.add_argument("--flowc", default=os.environ.get("FLOWC", str(ROOT / "build" / "bin" / "flowc")))
    ap.add_argument("--work", default=str(ROOT / "bench" / "work" / "checkpoints"))
    a = ap.parse_args()

    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    (work / "job.flow").write_text(SCRIPT)
    binary = work / "job"
    b = subprocess.run([a.flowc, "build", str(work / "job.flow"), "-o", str(binary)], capture_output=True, text=True)
    if b.returncode != 0:
        print(b.stderr, file=sys.stderr)
        return 1
    help_text = subprocess.run([str(binary), "--help"], capture_output=True, text=True).stdout
    env = dict(os.environ)
    env.pop("FLOW_FAULT", None)

    print(f"| backend | checkpoints | wall s | events/s | CPU s | CPU ns/event | completed |")
    print(f"|---|---|---|---|---|---|---|")
    failed = False
    for backend in [x for x in a.backends.split(",") if x]:
        if backend != "heap" and "--state-backend" not in help_text:
            print(f"| {backend} | - | not available in this build | | | | |")
            continue
        for interval in ["off", "1s"]:
            walls, cpus, done = [], [], []
            for r in range(a.runs):
                state = work / f"state-{backend}-{interval}-{r}"
                shutil.rmtree(state, ignore_errors=True)
                args = ["--parallelism", str(a.parallelism), "--progress-interval", "0",
                        "--set", f"events={a.events}"]
                if interval != "off":
                    args += ["--state-dir", str(state), "--checkpoint-interval", interval]
                if backend != "heap":
                    args += ["--state-backend", backend]
                try:
                    wall, cpu, completed, _ = run_once(binary, args, env)
                except RuntimeError as e:
                    print(f"run failed ({backend}, {interval}): {e}", file=sys.stderr)
                    failed = True
                    break
                walls.append(wall)
                cpus.append(cpu)
                done.append(completed)
                shutil.rmtree(state, ignore_errors=True)
            if not walls:
                continue
            w, c = statistics.median(walls), statistics.median(cpus)
            print(f"| {backend} | {interval} | {w:.2f} | {a.events / w:,.0f} | {c:.2f} | "
                  f"{c * 1e9 / a.events:.0f} | {int(statistics.median(done))} |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
