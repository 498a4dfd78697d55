#!/usr/bin/env python3
"""Windows aligned to a time zone, built with `flowc build` and run at parallelism 1 and 4:
`tumbling 1d zone tz` (a param) and `sliding 2h every 1h zone "Asia/Kolkata"` over four days of
out-of-order sales around Berlin's and New York's autumn clock changes. The reference computes
each window's bounds with Python's zoneinfo (the same IANA database, read by another library):
a window of wall-clock times [a, b) holds the instants from the first one the zone's clock shows
a (or, for a time it skips, the change) to the first one it shows b.
A param that names no zone stops the job before it starts: exit 2 and a message naming both.
Usage: zone_windows_test.py FLOWC WORK_DIR"""
import collections
import datetime
import json
import os
import random
import shutil
import subprocess
import sys
from zoneinfo import ZoneInfo

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from phased_stdin import rfc  # noqa: E402

FLOWC = os.path.abspath(sys.argv[1])
WORK = os.path.abspath(sys.argv[2])
HOUR = 3_600_000
DAY = 24 * HOUR
BERLIN_AUTUMN = 1792890000000  # 2026-10-25T01:00:00Z, Berlin's clocks go back
SCRIPT = """param tz: string = "Europe/Berlin"
param input: string = ""
schema Sale { shop: string, amount: int, ts: timestamp }
stream sales = from file(path: input) format json as Sale event time ts watermark 2h
sales | key by shop | window tumbling 1d zone tz
  | aggregate count() as n, sum(amount) as total
  | select shop, window_start as day, window_end as day_end, n, total
  | into stdout format json
sales | window sliding 2h every 1h zone "Asia/Kolkata"
  | aggregate count() as hn
  | select window_start as hs, window_end as he, hn
  | into stdout format json
"""
failures = []


def expect(name, cond, detail=""):
    if not cond:
        failures.append(f"{name}: {detail}")


def first_instant(zone, wall):
    """The first instant (epoch ms) at which `zone`'s clock shows the naive datetime `wall`; for a
    time the clock skips, the instant of the change."""
    z = ZoneInfo(zone)
    fold0 = wall.replace(tzinfo=z)
    utc = fold0.astimezone(datetime.timezone.utc)
    if utc.astimezone(z).replace(tzinfo=None) != wall:  # skipped: find the change by minutes
        t = int(utc.timestamp()) * 1000 - 3 * HOUR
        while datetime.datetime.fromtimestamp(t / 1000, z).replace(tzinfo=None) < wall:
            t += 60_000
        return t
    return int(utc.timestamp() * 1000)


def canonical(record):
    return json.dumps(record, sort_keys=True)


def local(zone, t):
    return datetime.datetime.fromtimestamp(t / 1000, ZoneInfo(zone)).replace(tzinfo=None)


def windows_of(zone, t, size_h, slide_h):
    """The [start, end) instants of every window (wall-clock size and slide in hours, aligned to
    1970-01-01 on the zone's clock) that holds instant t."""
    epoch = datetime.datetime(1970, 1, 1)
    wall = local(zone, t)
    hours = int((wall - epoch).total_seconds() // 3600)
    found = []
    for k in range(hours // slide_h - size_h // slide_h - 2, hours // slide_h + 3):
        a = epoch + datetime.timedelta(hours=k * slide_h)
        s, e = first_instant(zone, a), first_instant(zone, a + datetime.timedelta(hours=size_h))
        if s <= t < e:
            found.append((s, e))
    return found


def main():
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    script, binary = os.path.join(WORK, "job.flow"), os.path.join(WORK, "job")
    with open(script, "w") as f:
        f.write(SCRIPT)
    b = subprocess.run([FLOWC, "build", script, "-o", binary], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=900)
    if b.returncode != 0:
        print(b.stderr)
        sys.exit(1)

    rng = random.Random(7)
    sales = []
    for base in (BERLIN_AUTUMN, BERLIN_AUTUMN + 7 * DAY):  # Berlin's change, then New York's
        t = base - 2 * DAY
        for i in range(700):
            t += rng.randrange(0, 12 * 60_000)
            sales.append({"shop": f"s{rng.randrange(3)}", "amount": rng.randrange(1, 100), "ts": t})
    # Arrival order: each sale moves earlier by less than the watermark delay.
    order = sorted(range(len(sales)), key=lambda i: sales[i]["ts"] + rng.randrange(0, 2 * HOUR - 1))
    path = os.path.join(WORK, "sales.jsonl")
    with open(path, "w") as f:
        for i in order:
            f.write(json.dumps(sales[i]) + "\n")

    for zone in ("Europe/Berlin", "America/New_York"):
        days = collections.defaultdict(lambda: [0, 0])
        hours = collections.Counter()
        for s in sales:
            (ds, de), = windows_of(zone, s["ts"], 24, 24)
            days[(s["shop"], ds, de)][0] += 1
            days[(s["shop"], ds, de)][1] += s["amount"]
            for hw in windows_of("Asia/Kolkata", s["ts"], 2, 1):
                hours[hw] += 1
        want = sorted([canonical({"shop": k[0], "day": rfc(k[1]), "day_end": rfc(k[2]), "n": v[0],
                                  "total": v[1]}) for k, v in days.items()] +
                      [canonical({"hs": rfc(k[0]), "he": rfc(k[1]), "hn": v}) for k, v in hours.items()])
        lengths = {de - ds for (_, ds, de) in days}
        expect(f"{zone}: the reference has a 25-hour day", 25 * HOUR in lengths, str(lengths))
        for p in ("1", "4"):
            r = subprocess.run([binary, "--parallelism", p, "--set", f"tz={zone}", "--set", f"input={path}"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)
            expect(f"{zone} p{p}: exit 0", r.returncode == 0, r.stderr[-2000:])
            got = sorted(canonical(json.loads(line)) for line in r.stdout.splitlines() if line)
            expect(f"{zone} p{p}: output", got == want,
                   f"{len(got)} lines vs {len(want)}; first differences: " +
                   str([(g, w) for g, w in zip(got, want) if g != w][:3]))

    r = subprocess.run([binary, "--set", "tz=Europe/Berln", "--set", f"input={path}"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=60)
    expect("bad zone: exit 2", r.returncode == 2, f"exit {r.returncode}: {r.stderr[-2000:]}")
    expect("bad zone: message", "parameter `tz`: unknown time zone" in r.stderr and "Europe/Berln" in r.stderr,
           r.stderr[-2000:])
    expect("bad zone: no output", r.stdout == "", r.stdout[:500])

    if failures:
        print("FAILED:\n" + "\n".join(failures))
        sys.exit(1)
    print("ok: zone-aligned windows match zoneinfo at parallelism 1 and 4; a bad zone param exits 2")


if __name__ == "__main__":
    main()
