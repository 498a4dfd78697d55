#!/usr/bin/env python3
"""Late records routed to sinks (`window ... on late into file(...)`), built with `flowc build`
and run at parallelism 1 and 2: a keyed tumbling window, a keyed session window, a global
tumbling window and a keyed sliding window, each with lateness and its own late sink. The window results (stdout) and the
contents of each late sink's files are compared with a reference computed here from the
documented rules (docs/language.md "Lateness", docs/windows-and-state.md):
- tumbling [s, e) fires once when the watermark reaches e - 1 + lateness; a record whose window
  fired is late;
- sliding: the same per window; a record counts in its windows not fired yet and is late when
  all of them fired;
- session: a record at t opens [t, t + gap) and merges with the key's open sessions it overlaps;
  a session [s, e) fires when the watermark reaches e - 1 + lateness; a record is late when
  [t, t + gap) would have fired.
Late records go to the window's late sink as they came in and are counted in
flow_late_records_routed_total, not in flow_late_records_dropped_total. The session window's late
sink is exactly-once (a transactional file sink committing at checkpoints).

What is late depends on the watermark when a record reaches the window, so stdin is fed in
phases: the test writes a phase and waits (on the metrics endpoint) until every task's
watermark reached the phase's final watermark W(i). While phase i is processed every window's
watermark is within [W(i-1), W(i)]; a candidate record whose fate (late or not, and for sessions:
which open sessions it merges with) could differ within that range is not used.
Usage: late_sink_job_test.py FLOWC WORK_DIR"""
import collections
import glob
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
TSIZE, TLATE = 500, 150  # tumbling 500ms lateness 150ms
GAP, SLATE = 120, 60  # session 120ms lateness 60ms
LSIZE, LSLIDE, LLATE = 300, 100, 50  # sliding 300ms every 100ms lateness 50ms
T0 = 1772323200000  # 2026-03-01T00:00:00Z
MIN = -(1 << 63)

SCRIPT = f"""schema Rec {{ k: string, id: int, ts: timestamp }}
stream s = from stdin() format json as Rec event time ts watermark {DELAY}ms
s | key by k
  | window tumbling {TSIZE}ms lateness {TLATE}ms on late into file(path: "tumbling_late") format json
  | aggregate count() as n, sum(id) as ids
  | select k as tk, window_start as tstart, n, ids
  | into stdout format json
s | key by k
  | window session {GAP}ms lateness {SLATE}ms on late into file(path: "session_late") format json exactly_once
  | aggregate count() as n, sum(id) as ids
  | select k as sk, window_start as sstart, window_end as send, n, ids
  | into stdout format json
s | window tumbling {TSIZE}ms lateness {TLATE}ms on late into file(path: "global_late") format json
  | aggregate count() as n, sum(id) as ids
  | select window_start as gstart, n, ids
  | into stdout format json
s | key by k
  | window sliding {LSIZE}ms every {LSLIDE}ms lateness {LLATE}ms on late into file(path: "sliding_late") format json
  | aggregate count() as n, sum(id) as ids
  | select k as lk, window_start as lstart, n, ids
  | into stdout format json
"""


def expect(name, cond, detail=""):
    if not cond:
        failures.append(f"{name}: {detail}")
        print(f"FAIL {name}: {detail}", flush=True)


def tumbling_late(t, wm):
    return fired((t // TSIZE) * TSIZE + TSIZE, TLATE, wm)


def sliding_open(t, wm):
    """Starts of the sliding windows holding t that have not fired at wm; none: t is late."""
    last = (t // LSLIDE) * LSLIDE
    return [s for s in range(last, t - LSIZE, -LSLIDE) if not fired(s + LSIZE, LLATE, wm)]


class Sessions:
    """The reference session windows: per key, open sessions [start, end, count, id sum]."""

    def __init__(self):
        self.open = collections.defaultdict(list)
        self.results = []

    def fire(self, wm):
        for k, sessions in self.open.items():
            for s in [s for s in sessions if fired(s[1], SLATE, wm)]:
                self.results.append({"sk": k, "sstart": rfc(s[0]), "send": rfc(s[1]), "n": s[2], "ids": s[3]})
                sessions.remove(s)

    def overlapping(self, k, t):
        return [s for s in self.open[k] if s[0] < t + GAP and t < s[1]]

    def stable(self, k, t, lo, hi):
        """Whether a record's fate is the same at any watermark in [lo, hi] (sessions due at lo
        have fired)."""
        if fired(t + GAP, SLATE, lo) != fired(t + GAP, SLATE, hi):
            return False
        return all(not fired(s[1], SLATE, hi) for s in self.overlapping(k, t))

    def add(self, k, t, rid, wm):
        """Returns True when the record is late."""
        if fired(t + GAP, SLATE, wm):
            return True
        merged = [t, t + GAP, 1, rid]
        for s in self.overlapping(k, t):
            merged = [min(merged[0], s[0]), max(merged[1], s[1]), merged[2] + s[2], merged[3] + s[3]]
            self.open[k].remove(s)
        self.open[k].append(merged)
        return False


def generate(rng, phases):
    """[(phase records, watermark the phase ends with)] and the reference: window results and the
    late records of each late sink."""
    out = []
    sessions = Sessions()
    tumbling = collections.defaultdict(lambda: [0, 0])
    glob_w = collections.defaultdict(lambda: [0, 0])
    sliding = collections.defaultdict(lambda: [0, 0])
    late = {"tumbling": [], "session": [], "global": [], "sliding": []}
    wm_before, top, next_id, kept_behind, partly = MIN, T0, 0, 0, 0
    for i in range(phases):
        # Mostly < DELAY (consecutive phases overlap in time); now and then a silence longer than
        # the session gap, so sessions end and fire while input still comes.
        top += rng.randrange(40, 90) if i % 6 else rng.randrange(300, 500)
        wm_after = top - DELAY - 1
        sessions.fire(wm_before)
        cands = []
        for j in range(rng.randrange(10, 20)):
            cands.append(top if j == 0 else rng.randrange(top - DELAY, top + 1))  # > wm_after
        if wm_before != MIN:
            for _ in range(rng.randrange(0, 14)):
                cands.append(wm_before - rng.choice([0, 1, rng.randrange(0, 400), rng.randrange(0, 900)]))
        rng.shuffle(cands)
        recs = []
        for t in cands:
            k = f"k{rng.randrange(4)}"
            if tumbling_late(t, wm_before) != tumbling_late(t, wm_after):
                continue  # its fate would depend on when it arrives within the phase
            if not sessions.stable(k, t, wm_before, wm_after):
                continue
            if sliding_open(t, wm_before) != sliding_open(t, wm_after):
                continue
            rec = {"k": k, "id": next_id, "ts": t}
            next_id += 1
            recs.append(rec)
            start = (t // TSIZE) * TSIZE
            if t <= wm_before and not tumbling_late(t, wm_before):
                kept_behind += 1
            for name, acc in (("tumbling", tumbling), ("global", glob_w)):
                if tumbling_late(t, wm_before):
                    late[name].append(rec)
                else:
                    a = acc[(k if name == "tumbling" else "", start)]
                    a[0] += 1
                    a[1] += rec["id"]
            if sessions.add(k, t, rec["id"], wm_before):
                late["session"].append(rec)
            # Sliding: the record counts in every window still open; late only when all fired.
            if not sliding_open(t, wm_before):
                late["sliding"].append(rec)
            elif len(sliding_open(t, wm_before)) < len(sliding_open(t, MIN)):
                partly += 1
            for ws in sliding_open(t, wm_before):
                a = sliding[(k, ws)]
                a[0] += 1
                a[1] += rec["id"]
        out.append((recs, wm_after))
        wm_before = wm_after
    sessions.fire(1 << 62)  # end of input fires every session
    want = list(sessions.results)
    want += [{"tk": k, "tstart": rfc(s), "n": n, "ids": ids} for (k, s), (n, ids) in tumbling.items()]
    want += [{"gstart": rfc(s), "n": n, "ids": ids} for (_, s), (n, ids) in glob_w.items()]
    want += [{"lk": k, "lstart": rfc(s), "n": n, "ids": ids} for (k, s), (n, ids) in sliding.items()]
    late["kept_behind"] = kept_behind
    late["partly"] = partly
    return out, want, late


def canon(rows):
    return sorted(json.dumps(r, sort_keys=True) for r in rows)


def compare(name, got, want):
    g, w = canon(got), canon(want)
    missing = list((collections.Counter(w) - collections.Counter(g)).elements())
    extra = list((collections.Counter(g) - collections.Counter(w)).elements())
    expect(name, g == w, f"{len(g)} rows, want {len(w)}; missing {missing[:5]}; extra {extra[:5]}")


def run(binary, phases, parallelism, want, late):
    tag = f"-p {parallelism}"
    cwd = os.path.join(WORK, f"p{parallelism}")
    os.makedirs(cwd)
    # --state-dir: the exactly-once late sink commits at checkpoints (the last one at the end).
    job = PhasedRun([binary, "--parallelism", str(parallelism), "--metrics-port", "0", "--progress-interval", "0",
                     "--state-dir", os.path.join(cwd, "state")], os.path.join(cwd, "err.log"), cwd=cwd)
    port = job.port()
    expect(f"{tag}: metrics endpoint", port is not None, job.err()[-2000:])
    text = job.feed(port, phases, json.dumps, expect, tag) if port is not None else None
    if text is not None:
        routed = collections.Counter()
        for labels, v in metric_values(text, "flow_late_records_routed_total"):
            op = re.search(r'operator="(sink\d)\.', labels)
            kind = {"sink1": "tumbling", "sink2": "session", "sink3": "global", "sink4": "sliding"}.get(op.group(1) if op else "", labels)
            routed[kind] += int(v)
        want_routed = collections.Counter({k: len(v) for k, v in late.items()})
        expect(f"{tag}: flow_late_records_routed_total", routed == want_routed, f"got {dict(routed)} want {dict(want_routed)}")
        dropped = sum(v for _, v in metric_values(text, "flow_late_records_dropped_total"))
        expect(f"{tag}: nothing counted as dropped", dropped == 0, dropped)
    code, out = job.finish()
    expect(f"{tag}: exit 0", code == 0, job.err()[-2000:])
    got = [json.loads(l) for l in out.splitlines() if l.strip()]
    compare(f"{tag}: window results", got, want)
    for name, recs in late.items():
        lines = []
        for path in sorted(glob.glob(os.path.join(cwd, f"{name}_late", "*"))):
            with open(path) as f:
                lines += [json.loads(l) for l in f if l.strip()]
        # The sink writes event time as RFC 3339; the reference encodes it independently.
        compare(f"{tag}: {name} late sink", lines, [{"k": r["k"], "id": r["id"], "ts": rfc(r["ts"])} for r in recs])


shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
script = os.path.join(WORK, "late_sink.flow")
with open(script, "w") as f:
    f.write(SCRIPT)
binary = os.path.join(WORK, "late_sink")
b = subprocess.run([FLOWC, "build", script, "-o", binary], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                   timeout=1200)
expect("flowc build", b.returncode == 0, b.stderr.decode())
if b.returncode == 0:
    phases, want, late = generate(random.Random(6), 60)
    kept_behind = late.pop("kept_behind")
    partly = late.pop("partly")
    n = sum(len(r) for r, _ in phases)
    print(f"late_sink_job_test: {n} records, late: " + ", ".join(f"{k} {len(v)}" for k, v in late.items()) +
          f", {len(want)} window results", flush=True)
    # Every late sink must get records, and lateness must keep some records behind the watermark.
    for k, v in late.items():
        expect(f"input: late records for the {k} window", len(v) >= 10, len(v))
    expect("input: lateness keeps records behind the watermark", kept_behind >= 10, kept_behind)
    expect("input: records in partly fired sliding windows", partly >= 5, partly)
    for par in (1, 2):
        run(binary, phases, par, want, late)

for f in failures:
    print("FAIL", f)
print(f"late_sink_job_test: {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
