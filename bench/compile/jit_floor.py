#!/usr/bin/env python3
"""bench/compile/jit_floor.py: what design (a) of the JIT would cost, measured before building it
(docs/codegen.md, "A JIT for `flowc run`: the two designs, measured").

  bench/compile/jit_floor.py [--flowc PATH] [--clang clang++-14] [--runs N]
                             [--examples a.flow,b.flow] [--steady q1,q5] [--events N] [--out FILE]

Design (a) compiles the generated C++ in-process with clang's libraries, against a precompiled
runtime header, at a low optimisation level. In-process clang does the same parsing, template
instantiation and code generation as the clang++ driver, so the driver's times are what (a)
cannot go below (less a process start: milliseconds). Per example, the median of --runs of:

- pch:    an empty unit that includes the precompiled header (the fixed cost of every compile);
- syntax: `-fsyntax-only` on the whole generated job (parse and instantiate, no code);
- -O0:    the job to an object file at -O0 (what a JIT would hand to ORC, before linking).

--steady Q,...: the cost of a low optimisation level on the record path. Each Nexmark query is
built three ways from the same generated C++ (`flowc emit-cpp`, then CMake): clang -O0, clang
-O1, and the production build (`flowc build`: g++ -O2); each runs --events events at
parallelism 1 (--runs times) and the table gives the median CPU seconds and events per
CPU-second relative to the production build.

Prints Markdown tables on stdout (and writes them to --out when given); exits 1 when an example
could not be generated or compiled. Needs clang++ (scripts/setup installs clang-14) and a built
tree (flowc and the runtime's libraries).
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from compile_bench import ROOT, children_cpu, example_path  # same directory


def log(msg):
    print(f"[jit-floor] {msg}", file=sys.stderr, flush=True)


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))} failed ({r.returncode}):\n"
                           f"{(r.stderr or r.stdout)[-2000:]}")
    return r


def timed(cmd):
    """Wall seconds of one run of cmd (which must succeed)."""
    start = time.monotonic()
    run(cmd)
    return time.monotonic() - start


def compile_floor(args, work):
    includes = [f"-I{ROOT / 'runtime' / 'include'}", f"-I{ROOT / 'stdlib' / 'include'}"]
    base = [args.clang, "-std=c++20", "-pthread", "-O0", "-DNDEBUG"] + includes
    header = work / "flow_pch.h"
    header.write_text('#include "flow/runtime/exec/exec.h"\n')
    pch = work / "flow_pch.h.pch"
    log("precompiling the runtime header with clang")
    pch_build = timed(base + ["-x", "c++-header", str(header), "-o", str(pch)])
    empty = work / "empty.cpp"
    empty.write_text("int main() { return 0; }\n")
    use_pch = ["-include-pch", str(pch)]
    rows = []
    for name in args.examples.split(","):
        src = example_path(name)
        out = work / src.stem
        try:
            run([args.flowc, "emit-cpp", str(src), "-o", str(out)])
        except RuntimeError as e:
            rows.append((name, None, None, None, str(e).splitlines()[-1][:80]))
            continue
        cpp = out / f"{src.stem}.cpp"
        pch_t, syn_t, o0_t = [], [], []
        for _ in range(args.runs):
            pch_t.append(timed(base + use_pch + ["-fsyntax-only", str(empty)]))
            syn_t.append(timed(base + use_pch + ["-fsyntax-only", str(cpp)]))
            o0_t.append(timed(base + use_pch + ["-c", str(cpp), "-o", str(out / "job.o")]))
        rows.append((name, statistics.median(pch_t), statistics.median(syn_t),
                     statistics.median(o0_t), ""))
        log(f"{name}: syntax {rows[-1][2]:.2f} s, -O0 {rows[-1][3]:.2f} s")
    lines = [f"Runtime header precompiled by clang in {pch_build:.1f} s "
             f"({pch.stat().st_size / 1e6:.0f} MB); medians of {args.runs} runs.", "",
             "| example | pch (s) | syntax (s) | -O0 object (s) |", "|---|---:|---:|---:|"]
    for name, p, s, o, err in rows:
        if p is None:
            lines.append(f"| {name} | — | — | — ({err}) |")
        else:
            lines.append(f"| {name} | {p:.2f} | {s:.2f} | {o:.2f} |")
    return lines


def steady_state(args, work):
    lines = [f"Steady state: {args.events} events at parallelism 1, medians of {args.runs} runs.",
             "", "| query | build | CPU (s) | events/CPU-s vs g++ -O2 |", "|---|---|---:|---:|"]
    job_flags = ["--parallelism", "1", "--progress-interval", "0", "--set",
                 f"events={args.events}", "--set", "rate=100000000"]
    for q in args.steady.split(","):
        src = ROOT / "bench" / "nexmark" / f"{q}.flow"
        binaries = {}
        prod = work / f"{q}-gcc-O2"
        run([args.flowc, "build", str(src), "-o", str(prod)])
        binaries["g++ -O2 (flowc build)"] = prod
        gen = work / f"{q}-gen"
        run([args.flowc, "emit-cpp", str(src), "-o", str(gen)])
        for opt in ("-O0", "-O1"):
            bdir = work / f"{q}-clang{opt}"
            run(["cmake", "-S", str(gen), "-B", str(bdir), "-G", "Ninja",
                 f"-DCMAKE_CXX_COMPILER={args.clang}", "-DCMAKE_BUILD_TYPE=None",
                 f"-DCMAKE_CXX_FLAGS={opt} -DNDEBUG"])
            run(["cmake", "--build", str(bdir)])
            binaries[f"clang {opt}"] = bdir / q
        cpu = {}
        for label, exe in binaries.items():
            samples = []
            for _ in range(args.runs):
                before = children_cpu()
                run([str(exe)] + job_flags)
                samples.append(children_cpu() - before)
            cpu[label] = statistics.median(samples)
        ref = cpu["g++ -O2 (flowc build)"]
        for label, c in cpu.items():
            lines.append(f"| {q} | {label} | {c:.2f} | {ref / c:.2f} |")
        log(f"{q}: " + ", ".join(f"{k} {v:.2f} s" for k, v in cpu.items()))
    return lines


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--flowc", default=str(ROOT / "build" / "bin" / "flowc"))
    p.add_argument("--clang", default="clang++-14")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--examples", default="word_count.flow,log_levels_union.flow,"
                   "clicks_per_minute.flow,sessionize.flow,order_payment_join.flow,"
                   "bench/nexmark/q5.flow")
    p.add_argument("--steady", default="", help="Nexmark queries to run built at -O0/-O1/-O2")
    p.add_argument("--events", type=int, default=2000000)
    p.add_argument("--out")
    args = p.parse_args()
    if shutil.which(args.clang) is None:
        sys.exit(f"jit_floor: {args.clang} not found (scripts/setup installs clang-14)")
    if not Path(args.flowc).exists():
        sys.exit(f"jit_floor: no flowc at {args.flowc} (build the tree first)")
    with tempfile.TemporaryDirectory(prefix="jit-floor-") as tmp:
        work = Path(tmp)
        lines = compile_floor(args, work)
        if args.steady:
            lines += [""] + steady_state(args, work)
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.out:
        Path(args.out).write_text(text)
    if any("— (" in line for line in lines):
        sys.exit(1)


if __name__ == "__main__":
    try:
        main()
    except RuntimeError as e:
        sys.exit(f"jit_floor: {e}")
