#!/usr/bin/env python3
"""Late records in an interval join, a sliding window join with lateness and a tumbling window
aggregate with lateness, built with `flowc build` and run at parallelism 1 and 4, compared with a
reference written here. Usage: late_records_test.py FLOWC WORK_DIR

Whether a record is late depends on the watermark when it reaches the operator, so the input is
fed through stdin in phases: the test writes a phase, then waits (on the job's metrics endpoint)
until every task's watermark has reached the value the phase ends with before writing the next.
While phase i is processed the watermark of every operator is therefore between W(i-1) and
W(i). On-time records of phase i lie within the watermark delay of its largest time (never late);
the late ones lie at or behind W(i-1), and a candidate whose fate would differ between W(i-1)
and W(i) for any operator is not used, so what is dropped does not depend on batching or thread
timing. The reference applies the documented rules (docs/language.md, docs/windows-and-state.md):
- interval join: a record with t <= watermark is dropped;
- window join / window aggregate: a window [s, e) fires once when the watermark reaches
  e - 1 + lateness; a record joins the windows not fired yet and is dropped (and counted) when all
  of its windows have fired.
The late counts per operator (flow_late_records_dropped_total) must match the reference too."""
import collections
import json
import os
import random
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from phased_stdin import PhasedRun, fired, metric_values, rfc  # noqa: E402

FLOWC = os.path.abspath(sys.argv[1])
WORK = os.path.abspath(sys.argv[2])
failures = []

DELAY = 100  # watermark 100ms: W = max - 101
BOUND = 150  # interval join
JSIZE, JSLIDE, JLATE = 300, 100, 100  # window join: sliding 300ms every 100ms lateness 100ms
ASIZE, ALATE = 500, 150  # aggregate: tumbling 500ms lateness 150ms
T0 = 1772323200000  # 2026-03-01T00:00:00Z
MIN = -(1 << 63)

SCRIPT = f"""schema Rec {{ side: string, k: string, id: int, ts: timestamp }}
stream s = from stdin() format json as Rec event time ts watermark {DELAY}ms
stream a = s | where side == "L"
stream b = s | where side == "R"
a | join b on a.k == b.k within {BOUND}ms
  | select a.id as ilid, b.id as irid
  | into stdout format json
a | join b on a.k == b.k window sliding {JSIZE}ms every {JSLIDE}ms lateness {JLATE}ms
  | select a.id as wlid, b.id as wrid, window_start as wstart
  | into stdout format json
s | key by k
  | window tumbling {ASIZE}ms lateness {ALATE}ms
  | aggregate count() as n, sum(id) as ids
  | select k as ak, window_start as astart, n, ids
  | into stdout format json
"""


def expect(name, cond, detail=""):
    if not cond:
        failures.append(f"{name}: {detail}")
        print(f"FAIL {name}: {detail}", flush=True)



def join_windows(t):
    """Window ends of the sliding windows holding t, oldest first."""
    first = (t // JSLIDE) * JSLIDE
    return [s + JSIZE for s in range(first, t - JSIZE, -JSLIDE)][::-1]


def fate(t, wm):
    """What each operator does with a record at time t arriving at watermark wm."""
    agg_end = (t // ASIZE) * ASIZE + ASIZE
    return (t <= wm,  # interval join: dropped
            tuple(fired(e, JLATE, wm) for e in join_windows(t)),  # window join: fired windows
            fired(agg_end, ALATE, wm))  # aggregate: dropped


def generate(rng, phases):
    """[(phase records, watermark the phase ends with)] and the records with the watermark each one
    met (the phase's starting watermark, which decides its fate)."""
    out, met = [], []
    wm_before, top, next_id = MIN, T0, 0
    for i in range(phases):
        top += rng.randrange(40, 90)  # < DELAY: consecutive phases overlap in time
        wm_after = top - DELAY - 1
        recs = []
        for j in range(rng.randrange(15, 30)):
            t = top if j == 0 else rng.randrange(top - DELAY, top + 1)  # > wm_after: on time
            recs.append([rng.choice("LR"), f"k{rng.randrange(5)}", 0, t])
        if wm_before != MIN:
            for _ in range(rng.randrange(0, 16)):
                t = wm_before - rng.choice([0, 1, rng.randrange(0, 700), rng.randrange(0, 700)])
                if fate(t, wm_before) != fate(t, wm_after):
                    continue  # its fate would depend on when it arrives within the phase
                recs.append([rng.choice("LR"), f"k{rng.randrange(5)}", 0, t])
        rng.shuffle(recs)
        for r in recs:
            r[2] = next_id
            next_id += 1
            met.append((r, wm_before))
        out.append((recs, wm_after))
        wm_before = wm_after
    return out, met


def reference(met):
    want = []
    late = {"interval": 0, "window": 0, "aggregate": 0}
    left = [(r, wm) for r, wm in met if r[0] == "L"]
    right = [(r, wm) for r, wm in met if r[0] == "R"]
    # Interval join: records behind the watermark are dropped; the rest pair within the bound.
    for r, wm in met:
        if r[3] <= wm:
            late["interval"] += 1
    for l, lwm in left:
        if l[3] <= lwm:
            continue
        for r, rwm in right:
            if r[3] > rwm and l[1] == r[1] and abs(l[3] - r[3]) <= BOUND:
                want.append({"ilid": l[2], "irid": r[2]})
    # Window join: a record is in each window not fired when it arrived.
    def accepted(rec, wm):
        return {e for e in join_windows(rec[3]) if not fired(e, JLATE, wm)}
    for r, wm in met:
        if not accepted(r, wm):
            late["window"] += 1
    for l, lwm in left:
        lw = accepted(l, lwm)
        for r, rwm in right:
            if l[1] != r[1]:
                continue
            for e in sorted(lw & accepted(r, rwm)):
                want.append({"wlid": l[2], "wrid": r[2], "wstart": rfc(e - JSIZE)})
    # Aggregate: one result per key and window, from the records that came before it fired.
    agg = collections.defaultdict(lambda: [0, 0])
    for r, wm in met:
        start = (r[3] // ASIZE) * ASIZE
        if fired(start + ASIZE, ALATE, wm):
            late["aggregate"] += 1
            continue
        a = agg[(r[1], start)]
        a[0] += 1
        a[1] += r[2]
    for (k, start), (n, ids) in agg.items():
        want.append({"ak": k, "astart": rfc(start), "n": n, "ids": ids})
    return want, late


def run(binary, phases, parallelism, want, late):
    tag = f"-p {parallelism}"
    job = PhasedRun([binary, "--parallelism", str(parallelism), "--metrics-port", "0", "--progress-interval", "0"],
                    os.path.join(WORK, f"err-{parallelism}.log"))
    port = job.port()
    expect(f"{tag}: metrics endpoint", port is not None, job.err()[-2000:])
    if port is not None:
        encode = lambda r: json.dumps({"side": r[0], "k": r[1], "id": r[2], "ts": r[3]})
        text = job.feed(port, phases, encode, expect, tag)
        if text is not None:
            got_late = collections.Counter()
            for labels, v in metric_values(text, "flow_late_records_dropped_total"):
                # Operators are named after their pipeline: sink1 (interval join), sink2, sink3.
                op = re.search(r'operator="(sink\d)\.', labels)
                kind = {"sink1": "interval", "sink2": "window", "sink3": "aggregate"}.get(op.group(1) if op else "", labels)
                got_late[kind] += int(v)
            expect(f"{tag}: late counts", got_late == collections.Counter(late),
                   f"got {dict(got_late)} want {late}; labels {metric_values(text, 'flow_late_records_dropped_total')}")
    code, out = job.finish()
    expect(f"{tag}: exit 0", code == 0, job.err()[-2000:])
    # The closing log line says how many records were dropped as late, over every operator.
    said = re.findall(r"job finished .*late_records_dropped=(\d+)", job.err())
    expect(f"{tag}: late records in the closing log line", said == [str(sum(late.values()))],
           f"got {said}, want {sum(late.values())}")
    got = [json.loads(l) for l in out.splitlines() if l.strip()]
    canon = lambda rs: sorted(json.dumps(r, sort_keys=True) for r in rs)
    g, w = canon(got), canon(want)
    missing = list((collections.Counter(w) - collections.Counter(g)).elements())
    extra = list((collections.Counter(g) - collections.Counter(w)).elements())
    expect(f"{tag}: output", g == w, f"{len(g)} rows, want {len(w)}; missing {missing[:10]}; extra {extra[:10]}")


shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
script = os.path.join(WORK, "late.flow")
with open(script, "w") as f:
    f.write(SCRIPT)
binary = os.path.join(WORK, "late")
b = subprocess.run([FLOWC, "build", script, "-o", binary], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                   timeout=1200)
expect("flowc build", b.returncode == 0, b.stderr.decode())
if b.returncode == 0:
    rng = random.Random(4)
    phases, met = generate(rng, 60)
    want, late = reference(met)
    n_late = sum(1 for r, wm in met if r[3] <= wm)
    print(f"late_records_test: {len(met)} records, {n_late} behind the watermark, reference late {late}, "
          f"{len(want)} rows", flush=True)
    # The input must exercise every case: dropped everywhere, kept by the lateness of the window
    # operators, sliding windows of which some fired.
    expect("input: late records", late["interval"] >= 30, late)
    expect("input: window join drops some, keeps others behind the watermark",
           0 < late["window"] < late["interval"], late)
    expect("input: aggregate drops some, keeps others behind the watermark",
           0 < late["aggregate"] < late["interval"], late)
    partial = sum(1 for r, wm in met if 0 < sum(fate(r[3], wm)[1]) < len(join_windows(r[3])))
    expect("input: records in partly fired sliding windows", partial > 0, partial)
    fates = collections.Counter((all(fate(r[3], wm)[1]), fate(r[3], wm)[2]) for r, wm in met if r[3] <= wm)
    expect("input: dropped by the window join only, and by the aggregate only",
           fates[(True, False)] > 0 and fates[(False, True)] > 0, fates)
    for par in (1, 4):
        run(binary, phases, par, want, late)

for f in failures:
    print("FAIL", f)
print(f"late_records_test: {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
