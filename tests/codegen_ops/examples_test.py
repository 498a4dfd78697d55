#!/usr/bin/env python3
"""Builds every example that needs no Kafka with `flowc build`, runs it on examples/data at
parallelism 1 and 4, and compares the output with a reference computed here from the same data.
Also builds the bench/nexmark queries, unless --no-bench-queries (CTest passes it when
bench_nexmark_quick builds and runs them anyway).
Usage: examples_test.py FLOWC REPO_DIR WORK_DIR [--no-bench-queries]"""
import collections
import datetime
import json
import math
import os
import shutil
import subprocess
import sys
import time

FLOWC = os.path.abspath(sys.argv[1])
REPO = os.path.abspath(sys.argv[2])
WORK = os.path.abspath(sys.argv[3])
BENCH_QUERIES = "--no-bench-queries" not in sys.argv[4:]
EXAMPLES = os.path.join(REPO, "examples")
DATA = os.path.join(EXAMPLES, "data")
CACHE = os.path.join(WORK, "cache")
failures = []


def expect(name, cond, detail=""):
    if not cond:
        failures.append(f"{name}: {detail}")
        print(f"FAIL {name}: {detail}", flush=True)


def build(script, name):
    binary = os.path.join(WORK, name)
    env = dict(os.environ, XDG_CACHE_HOME=CACHE)
    p = subprocess.run([FLOWC, "build", script, "-o", binary], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=env, timeout=1200)
    expect(f"{name}: flowc build", p.returncode == 0, p.stderr.decode())
    return binary if p.returncode == 0 else None


def run(binary, *args, stdin=b"", cwd=None):
    """Runs the job at parallelism 1 and 4; returns the two stdouts (exit 0 expected)."""
    outs = []
    for par in ("1", "4"):
        p = subprocess.run([binary, "--parallelism", par, *args], input=stdin, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, cwd=cwd or REPO, timeout=600)
        expect(f"{os.path.basename(binary)} -p {par}: exit 0", p.returncode == 0, p.stderr.decode()[-2000:])
        outs.append(p.stdout.decode())
    return outs


def rows(text):
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def load(name):
    with open(os.path.join(DATA, name)) as f:
        return [json.loads(line) for line in f if line.strip()]


def ms(ts):
    """A timestamp as JSON input gives it (RFC 3339 or epoch ms) -> epoch ms."""
    if isinstance(ts, int):
        return ts
    return int(datetime.datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp() * 1000)


def rfc(t):
    return datetime.datetime.fromtimestamp(t / 1000, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + \
        f"{t % 1000:03d}Z"


def canon(rs):
    return sorted(json.dumps(r, sort_keys=True) for r in rs)


def close(a, b):
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def same_rows(name, got, want, float_keys=()):
    """Compares multisets of rows; floats in float_keys compared with a relative tolerance."""
    def key(r):
        return json.dumps({k: v for k, v in r.items() if k not in float_keys}, sort_keys=True)
    g = sorted(got, key=key)
    w = sorted(want, key=key)
    ok = len(g) == len(w) and all(key(a) == key(b) and all(close(a[k], b[k]) for k in float_keys)
                                   for a, b in zip(g, w))
    expect(name, ok, f"\n got {g}\nwant {w}")


os.makedirs(WORK, exist_ok=True)

# ---- order_payment_join: interval join within 30s ----
binary = build(os.path.join(EXAMPLES, "order_payment_join.flow"), "order_payment_join")
if binary:
    orders, payments = load("orders.jsonl"), load("payments.jsonl")
    want = []
    for o in orders:
        for p in payments:
            if o["order_id"] == p["order_id"] and abs(ms(o["ts"]) - ms(p["ts"])) <= 30000:
                want.append({"order_id": o["order_id"], "customer": o["customer"], "total": o["total"],
                             "amount": p["amount"], "time_to_pay": ms(p["ts"]) - ms(o["ts"]),
                             "difference": o["total"] - p["amount"]})
    expect("order_payment_join: some pairs", len(want) > 0)
    for out in run(binary):
        same_rows("order_payment_join", rows(out), want, ("difference", "total", "amount"))

# ---- sessionize: session windows (gap 30s) with first/last/count_distinct ----
binary = build(os.path.join(EXAMPLES, "sessionize.flow"), "sessionize")
if binary:
    clicks = load("clicks.jsonl")
    by_user = collections.defaultdict(list)
    for i, c in enumerate(clicks):
        by_user[c["user"]].append((ms(c["ts"]), i, c))
    want = []
    for user, cs in by_user.items():
        cs.sort(key=lambda x: (x[0], x[1]))
        groups, cur = [], [cs[0]]
        for x in cs[1:]:
            if x[0] - cur[-1][0] < 30000:
                cur.append(x)
            else:
                groups.append(cur)
                cur = [x]
        groups.append(cur)
        for g in groups:
            want.append({"user": user, "session_start": rfc(g[0][0]), "session_end": rfc(g[-1][0] + 30000),
                         "clicks": len(g), "pages": len({x[2]["url"] for x in g}),
                         "entry_page": g[0][2]["url"], "exit_page": g[-1][2]["url"],
                         "bytes": sum(x[2]["bytes"] for x in g)})
    for out in run(binary, "--set", "input=" + os.path.join(DATA, "clicks.jsonl")):
        same_rows("sessionize", rows(out), want)

# ---- ad_click_through: window join of two window aggregates ----
binary = build(os.path.join(EXAMPLES, "ad_click_through.flow"), "ad_click_through")
if binary:
    def per_minute(events):
        n = collections.Counter()
        for e in events:
            n[(e["ad"], ms(e["ts"]) // 60000 * 60000)] += 1
        return n
    shown, clicked = per_minute(load("impressions.jsonl")), per_minute(load("ad_clicks.jsonl"))
    want = [{"ad": ad, "window_start": rfc(w), "impressions": n, "clicks": clicked[(ad, w)],
             "ctr": clicked[(ad, w)] / n} for (ad, w), n in shown.items() if (ad, w) in clicked]
    expect("ad_click_through: some rows", len(want) > 0)
    for out in run(binary):
        same_rows("ad_click_through", rows(out), want, ("ctr",))

# ---- clicks_per_minute: tumbling window per user ----
binary = build(os.path.join(EXAMPLES, "clicks_per_minute.flow"), "clicks_per_minute")
if binary:
    acc = {}
    for c in load("clicks.jsonl"):
        if c["url"] == "" or c["bytes"] < 0:
            continue
        w = ms(c["ts"]) // 60000 * 60000
        a = acc.setdefault((c["user"], w), [0, 0, None])
        a[0] += 1
        a[1] += c["bytes"]
        a[2] = c["bytes"] if a[2] is None else max(a[2], c["bytes"])
    want = [{"user": u, "window_start": rfc(w), "window_end": rfc(w + 60000), "clicks": a[0], "total": a[1],
             "biggest": a[2]} for (u, w), a in acc.items()]
    for out in run(binary):
        same_rows("clicks_per_minute", rows(out), want)

# ---- daily_sales: tumbling 1d windows aligned to a time zone (Python's zoneinfo as reference) ----
binary = build(os.path.join(EXAMPLES, "daily_sales.flow"), "daily_sales")
if binary:
    from zoneinfo import ZoneInfo
    for tz in ("Europe/Berlin", "America/New_York"):
        zone = ZoneInfo(tz)
        acc = {}
        for s in load("sales.jsonl"):
            local = datetime.datetime.fromtimestamp(ms(s["ts"]) / 1000, zone)
            a = acc.setdefault((s["shop"], local.date()), [0, 0.0])
            a[0] += 1
            a[1] += s["amount"]

        def midnight(day, zone=zone):  # the zones of the data change their clocks at 02:00, not 00:00
            return int(datetime.datetime.combine(day, datetime.time(), zone).timestamp() * 1000)
        want = [{"shop": shop, "day": day.isoformat(), "day_start": rfc(midnight(day)),
                 "day_end": rfc(midnight(day + datetime.timedelta(days=1))), "sales": a[0], "revenue": a[1]}
                for (shop, day), a in acc.items()]
        lengths = {midnight(day + datetime.timedelta(days=1)) - midnight(day) for (_, day) in acc}
        expect(f"daily_sales {tz}: the data has a 23-hour day", 23 * 3600000 in lengths or tz != "Europe/Berlin",
               str(lengths))
        for out in run(binary, "--set", f"tz={tz}"):
            same_rows(f"daily_sales {tz}", rows(out), want, float_keys=("revenue",))

# ---- word_count: running count per word from stdin, csv ----
binary = build(os.path.join(EXAMPLES, "word_count.flow"), "word_count")
if binary:
    with open(os.path.join(DATA, "words.txt"), "rb") as f:
        text = f.read()
    seen = collections.Counter()
    want = []
    for line in text.decode().splitlines():
        for word in line.lower().split(" "):
            if word:
                seen[word] += 1
                want.append(f"{word},{seen[word]}")
    for out in run(binary, stdin=text):
        expect("word_count", sorted(out.splitlines()) == sorted(want), f"\n got {sorted(out.splitlines())}\nwant {sorted(want)}")

# ---- log_levels_union: processing-time windows; totals do not depend on the clock ----
binary = build(os.path.join(EXAMPLES, "log_levels_union.flow"), "log_levels_union")
if binary:
    logs = load("app1.jsonl") + load("app2.jsonl")
    totals, msgs = collections.Counter(), collections.defaultdict(set)
    for l in logs:
        level = l["level"] or "INFO"
        if level in ("WARN", "ERROR", "FATAL"):
            totals[(l["service"], level)] += l and 1
            msgs[(l["service"], level)].add(l["msg"])
    for out in run(binary):
        got = collections.Counter()
        for r in rows(out):
            got[(r["service"], r["level"])] += r["lines"]
            expect("log_levels_union: latest is one of the key's messages", r["latest"] in msgs[(r["service"], r["level"])], r)
        expect("log_levels_union: totals", got == totals, f"got {got} want {totals}")

# ---- fraud_alert: extern fn; stdout rows checked with the same toy model, file sink rows ----
binary = build(os.path.join(EXAMPLES, "fraud_alert.flow"), "fraud_alert")
if binary:
    def risk(amount, country):
        if not amount > 0.0:
            return 0.0
        size = 1.0 / (1.0 + math.exp(-3.0 * (math.log10(amount) - 3.0)))
        surcharge = 0.25 if country in ("NG", "BR") else 0.0 if country in ("DE", "FR", "US") else 0.1
        return min(max(size + surcharge, 0.0), 1.0)
    payments = load("payments.jsonl")
    want = []
    for p in payments:
        s = risk(p["amount"], p["country"])
        if s >= 0.7:
            want.append({"payment_id": p["payment_id"], "card": p["card"], "amount": p["amount"],
                         "country": p["country"], "score": s, "action": "block" if s >= 0.9 else "review"})
    cards = collections.defaultdict(list)
    for p in payments:
        if p["amount"] > 1000.0:
            cards[(p["card"], ms(p["ts"]) // 60000 * 60000)].append(p["amount"])
    want_file = [{"card": c, "payments": len(a), "total": sum(a), "window_start": rfc(w)}
                 for (c, w), a in cards.items() if len(a) >= 2]
    for par in ("1", "4"):
        cwd = os.path.join(WORK, f"fraud_cwd_{par}")
        shutil.rmtree(cwd, ignore_errors=True)
        os.makedirs(cwd)
        p = subprocess.run([binary, "--parallelism", par, "--set", "input=" + os.path.join(DATA, "payments.jsonl")],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, timeout=600)
        expect(f"fraud_alert -p {par}: exit 0", p.returncode == 0, p.stderr.decode())
        same_rows("fraud_alert stdout", rows(p.stdout.decode()), want, ("score", "amount"))
        got_file = []
        for root, _, files in os.walk(os.path.join(cwd, "out", "fraud-cards")):
            for f in files:
                with open(os.path.join(root, f)) as fh:
                    got_file += rows(fh.read())
        same_rows("fraud_alert file sink", got_file, want_file, ("total",))

# ---- late_clicks: a late click goes to late/ instead of its window ----
# stdin in two parts: the example data, then, once the job had time to pass the watermark beyond
# 09:01:05 (the data goes to 09:07), a click for 09:00:30 that is late for [09:00, 09:01) + 5s.
# Whether a record inside the data is late depends on when watermarks reach the window, so the
# reference is a balance: per (user, minute), the counted clicks plus the routed ones are all
# the input's clicks; and the last click is routed, never counted.
binary = build(os.path.join(EXAMPLES, "late_clicks.flow"), "late_clicks")
if binary:
    with open(os.path.join(DATA, "clicks.jsonl"), "rb") as f:
        data = f.read()
    last = {"user": "ana", "url": "/late", "bytes": 1, "tags": [], "ref": None, "ts": "2026-03-01T09:00:30Z"}
    clicks = load("clicks.jsonl") + [last]
    for par in ("1", "4"):
        cwd = os.path.join(WORK, "late_clicks_p" + par)
        shutil.rmtree(cwd, ignore_errors=True)
        os.makedirs(cwd)
        p = subprocess.Popen([binary, "--parallelism", par], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, cwd=cwd)
        p.stdin.write(data)
        p.stdin.flush()
        time.sleep(2)
        out, err = p.communicate(input=(json.dumps(last) + "\n").encode(), timeout=600)
        expect(f"late_clicks -p {par}: exit 0", p.returncode == 0, err.decode()[-2000:])
        routed = []
        for root, _, files in os.walk(os.path.join(cwd, "late")):
            for name in files:
                with open(os.path.join(root, name)) as fh:
                    routed += rows(fh.read())
        routed_keys = [(r["user"], r["url"], ms(r["ts"])) for r in routed]
        expect(f"late_clicks -p {par}: the last click is routed once",
               routed_keys.count(("ana", "/late", ms(last["ts"]))) == 1, routed)
        want = collections.Counter((c["user"], ms(c["ts"]) // 60000 * 60000) for c in clicks)
        got = collections.Counter()
        for r in rows(out.decode()):
            got[(r["user"], ms(r["window_start"]))] += r["clicks"]
        for user, url, t in routed_keys:
            got[(user, t // 60000 * 60000)] += 1
        expect(f"late_clicks -p {par}: counted + routed = input per user and minute", got == want,
               f"got {sorted(got.items())} want {sorted(want.items())}")
        expect(f"late_clicks -p {par}: routed records are input clicks",
               all(k in {(c["user"], c["url"], ms(c["ts"])) for c in clicks} for k in routed_keys), routed)

# ---- nexmark examples: generated data; run on a small event count ----
for name in ("nexmark_q1_currency", "nexmark_q5_hot_items", "nexmark_q8_new_users"):
    binary = build(os.path.join(EXAMPLES, name + ".flow"), name)
    if not binary:
        continue
    outs = run(binary, "--set", "events=20000")
    if name == "nexmark_q5_hot_items":
        # auction,num,starttime,endtime: at most one maximum count per window end, never below
        # another row of the same window.
        for out in outs:
            best = {}
            for line in out.splitlines():
                auction, num, start, end = line.split(",")
                best.setdefault(end, set()).add(int(num))
            expect("q5: one maximum per window", all(len(v) == 1 for v in best.values()), best)
            expect("q5: rows", len(best) > 0, out[:200])
    if name == "nexmark_q8_new_users":
        for out in outs:
            rs = rows(out)
            expect("q8: rows", len(rs) > 0, out[:200])
            expect("q8: window starts on 10s", all(ms(r["starttime"]) % 10000 == 0 for r in rs), rs[:3])
        expect("q8: same result at parallelism 1 and 4", canon(rows(outs[0])) == canon(rows(outs[1])))

# ---- bench/nexmark queries build ----
for q in ("q3", "q5", "q7", "q8", "q11") if BENCH_QUERIES else ():
    build(os.path.join(REPO, "bench", "nexmark", q + ".flow"), "bench_" + q)

if failures:
    print(f"examples_test: {len(failures)} failure(s)")
    sys.exit(1)
print("examples_test: ok")
