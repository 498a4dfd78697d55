#!/usr/bin/env python3
"""bench/compile/compile_bench.py: how long `flowc build` takes on each example.

  bench/compile/compile_bench.py [--flowc PATH] [--runs N] [--examples a.flow,b.flow] [--out FILE]
                                 [--jobs N] [--warm-only]
  bench/compile/compile_bench.py --quick      one example, one cold and one warm build

Cold: every build gets a fresh, empty header cache (XDG_CACHE_HOME points at a new directory),
so it includes precompiling the runtime headers. Warm: the cache the last cold build filled is
reused by every timed warm build. Each cell is the median wall time of --runs builds
(default 3); "warm CPU" is the median CPU time (user + system) of flowc and the compilers it ran,
which the load of other processes changes less than the wall time. --jobs N is passed to
`flowc build` (translation units compiled in parallel; 1 = one unit); --warm-only runs one
untimed cold build per example to fill the cache, then the timed warm builds. An example given
with a "/" (e.g. bench/nexmark/q5.flow) is relative to the repository, else to examples/. Examples that flowc cannot build yet ("... is not supported by flowc build yet") are
listed as "not supported yet"; other build failures are listed with their first error line. The
exit code is 0 unless --strict is given and some example failed for another reason.

Prints a Markdown table on stdout (and writes it to --out when given).
"""

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
QUICK_EXAMPLE = "clicks_per_minute.flow"


def log(msg):
    print(f"[compile-bench] {msg}", file=sys.stderr, flush=True)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--flowc", default=os.environ.get("FLOWC") or str(ROOT / "build" / "bin" / "flowc"),
                   help="flowc binary (default: $FLOWC, else build/bin/flowc)")
    p.add_argument("--runs", type=int, default=3, help="timed builds per cell (median); at least 1")
    p.add_argument("--examples", default=None,
                   help="comma list of files in examples/ (default: every examples/*.flow)")
    p.add_argument("--quick", action="store_true", help=f"only {QUICK_EXAMPLE}, one build each")
    p.add_argument("--out", default=None, help="also write the Markdown table to this file")
    p.add_argument("--workdir", default=None, help="scratch directory (default: a temporary one)")
    p.add_argument("--jobs", type=int, default=None, help="passed to flowc build --jobs")
    p.add_argument("--warm-only", action="store_true", help="time warm builds only (one untimed cold build)")
    p.add_argument("--strict", action="store_true",
                   help="exit 1 when an example fails for a reason other than 'not supported yet'")
    args = p.parse_args(argv)
    if args.quick:
        args.runs = 1
        if args.examples is None:
            args.examples = QUICK_EXAMPLE
    if args.runs < 1:
        p.error("--runs must be at least 1")
    return args


def first_error(text):
    for line in text.splitlines():
        if "error" in line:
            return line.strip()
    return next(l.strip() for l in text.splitlines() if l.strip())


JOBS = None  # --jobs, set by run()


def example_path(name):
    """An example named with a "/" is relative to the repository, else to examples/."""
    return ROOT / name if "/" in name else ROOT / "examples" / name


def children_cpu():
    u = resource.getrusage(resource.RUSAGE_CHILDREN)
    return u.ru_utime + u.ru_stime


def build_once(flowc, example, binary, cache_home, cpu=None):
    """One `flowc build`; returns (seconds, None) or (None, (status, message)). Appends the CPU
    seconds it used to `cpu` when given."""
    env = dict(os.environ)
    env["XDG_CACHE_HOME"] = str(cache_home)
    cmd = [str(flowc), "build", str(example), "-o", str(binary)]
    if JOBS is not None:
        cmd += ["--jobs", str(JOBS)]
    cpu_before = children_cpu()
    start = time.monotonic()
    r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace")
    elapsed = time.monotonic() - start
    if cpu is not None:
        cpu.append(children_cpu() - cpu_before)
    if r.returncode == 0:
        return elapsed, None
    r.stderr = r.stderr.replace(str(ROOT) + "/", "")
    if "not supported by flowc build yet" in r.stderr:
        return None, ("not supported yet", first_error(r.stderr))
    message = first_error(r.stderr) if r.stderr.strip() else f"flowc exited with {r.returncode}"
    return None, ("build failed", message)


def measure(flowc, example, runs, work, warm_only=False):
    """(cold median or None, warm median, warm CPU median, None) or (None, None, None, (status, message))."""
    binary = work / (example.stem + ".bin")
    cold = []
    warm_cache = work / "warm-cache"
    cold_runs = 1 if warm_only else runs
    for i in range(cold_runs):
        cache = work / f"cold-{example.stem}-{i}"
        shutil.rmtree(cache, ignore_errors=True)
        cache.mkdir(parents=True)
        t, failure = build_once(flowc, example, binary, cache)
        if failure:
            shutil.rmtree(cache, ignore_errors=True)
            return None, None, None, failure
        cold.append(t)
        # The last cold build's cache becomes the warm one; the others go (~200 MB each).
        if i == cold_runs - 1:
            shutil.rmtree(warm_cache, ignore_errors=True)
            cache.rename(warm_cache)
        else:
            shutil.rmtree(cache, ignore_errors=True)
    warm = []
    warm_cpu = []
    for _ in range(runs):
        t, failure = build_once(flowc, example, binary, warm_cache, warm_cpu)
        if failure:
            return None, None, None, failure
        warm.append(t)
    return (None if warm_only else statistics.median(cold)), statistics.median(warm), statistics.median(warm_cpu), None


def markdown(rows, runs, flowc):
    out = ["| example | cold (s) | warm (s) | warm CPU (s) |", "|---|---:|---:|---:|"]
    for name, cold, warm, cpu, failure in rows:
        if failure:
            status, message = failure
            detail = message.replace("|", "\\|")
            out.append(f"| `{name}` | {status} | {detail} | |")
        else:
            cold_text = "-" if cold is None else f"{cold:.1f}"
            out.append(f"| `{name}` | {cold_text} | {warm:.1f} | {cpu:.1f} |")
    out.append("")
    jobs = "" if JOBS is None else f", --jobs {JOBS}"
    load = os.getloadavg()
    out.append(f"Median of {runs} `flowc build` run(s) per cell ({flowc}{jobs}); cold = empty "
               "header cache, warm = the cache a cold build filled; warm CPU = user + system time "
               f"of flowc and its compiler processes. Load average at the end: {load[0]:.1f} "
               f"(1 min), {load[1]:.1f} (5 min) on {os.cpu_count()} CPUs.")
    return "\n".join(out) + "\n"


def run(args):
    flowc = Path(args.flowc)
    if not flowc.exists():
        log(f"no flowc at {flowc}; build it or pass --flowc")
        return 2, ""
    global JOBS
    JOBS = args.jobs
    if args.examples:
        examples = [example_path(e.strip()) for e in args.examples.split(",") if e.strip()]
    else:
        examples = sorted((ROOT / "examples").glob("*.flow"))
    for e in examples:
        if not e.exists():
            log(f"no such example: {e}")
            return 2, ""
    own_work = args.workdir is None
    work = Path(tempfile.mkdtemp(prefix="flow-compile-bench-")) if own_work else Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    failed = False
    try:
        for e in examples:
            cold_runs = 1 if args.warm_only else args.runs
            log(f"{e.name}: {cold_runs} cold + {args.runs} warm build(s)")
            cold, warm, cpu, failure = measure(flowc, e, args.runs, work, args.warm_only)
            if failure:
                log(f"{e.name}: {failure[0]}: {failure[1]}")
                failed = failed or failure[0] != "not supported yet"
            else:
                log(f"{e.name}: cold {cold if cold is None else round(cold, 1)} s, warm {warm:.1f} s, warm CPU {cpu:.1f} s")
            rows.append((e.name, cold, warm, cpu, failure))
    finally:
        if own_work:
            shutil.rmtree(work, ignore_errors=True)
    table = markdown(rows, args.runs, flowc)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(table)
        log(f"wrote {args.out}")
    return (1 if failed and args.strict else 0), table


def main(argv=None):
    args = parse_args(argv)
    code, table = run(args)
    sys.stdout.write(table)
    return code


if __name__ == "__main__":
    sys.exit(main())
