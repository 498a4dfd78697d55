#!/usr/bin/env python3
"""A stateful job upgraded twice through stop-with-savepoint and restore (docs/operations.md).

upgrade_v1.flow joins orders with their payments (interval join) and counts the pairs per customer
and minute (window), into Kafka exactly once. Version 2 adds an aggregate (`sum(amount) as spent`),
version 3 changes the orders' filter. The input arrives in three phases, one per version; each
version stops with a savepoint (SIGTERM, --savepoint-on-stop) once it has read its phase, and the
next one restores it. Windows and join buffers are open across each upgrade: an order of one phase
meets its payment in the next, a window counts pairs of two phases.

The reference is computed here from the records: a window's count must hold every pair (no state
lost, nothing twice), `spent` the pairs formed since version 2 (an added aggregate starts empty),
and the filter of each phase's version must apply to that phase's orders. Ticks (one per partition
at the end of each phase, 10 minutes ahead as the watermark delay is) move event time so that each
phase fires exactly the windows that end before it ends.

A restore into a script whose window key changed is refused (exit 2) naming the operator, and
goes through with --allow-dropped-state; `flowc compare-state` says the same beforehand.
Uses the broker of scripts/kafka (FLOW_KAFKA_BROKERS); Confluent's Python client on the other side.
"""

import argparse
import glob
import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from datetime import datetime

from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

HERE = os.path.dirname(os.path.abspath(__file__))
PARTITIONS = 2
MINUTE = 60_000
DELAY = 10 * MINUTE  # the scripts' watermark delay
FILTERS = {1: lambda total: total > 0, 2: lambda total: total > 0, 3: lambda total: total > 5}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def source_records(port):
    """Records each source has emitted, from the job's /metrics: {operator: count}."""
    try:
        text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2).read().decode()
    except OSError:
        return {}
    out = {}
    for line in text.splitlines():
        if not line.startswith("flow_records_out_total{"):
            continue
        labels, value = line.rsplit(" ", 1)
        for op in ("orders.source", "payments.source"):
            if f'operator="{op}"' in labels:
                out[op] = out.get(op, 0) + int(float(value))
    return out


class Phases:
    """The input of the three phases, and the reference computed from it."""

    def __init__(self, rng, base):
        self.orders = []    # (phase, partition, record)
        self.payments = []
        self.ends = {}      # phase -> event time its ticks carry the watermark to
        n = 0
        # Phase p covers event times [start, end): windows ending by `end` fire in phase p.
        bounds = {1: (0, 150_000), 2: (150_000, 270_000), 3: (270_000, 400_000)}
        for phase, (lo, hi) in bounds.items():
            self.ends[phase] = base + hi
            t = base + lo
            while t < base + hi - 1000:
                n += 1
                order = {"order_id": f"o-{n}", "customer": f"c{rng.randrange(4)}", "total": rng.randrange(1, 20),
                         "ts": t}
                self.orders.append((phase, n % PARTITIONS, order))
                # Most orders are paid within 40 s (some in the next phase: the join's state must
                # survive the upgrade); some 70 s later (beyond `within 1m`: no pair); some never.
                roll = rng.random()
                if roll < 0.8:
                    pay_ts = t + rng.randrange(0, 40_000)
                elif roll < 0.9:
                    pay_ts = t + 70_000
                else:
                    pay_ts = None
                if pay_ts is not None:
                    pay_phase = next(p for p, (l, h) in bounds.items() if base + l <= pay_ts < base + h) \
                        if pay_ts < base + bounds[3][1] else 3
                    self.payments.append((pay_phase, n % PARTITIONS,
                                          {"order_id": f"o-{n}", "amount": rng.randrange(1, 100), "ts": pay_ts}))
                t += rng.randrange(500, 4000)
        # The last phase's ticks fire every window, those of payments past its end included.
        self.ends[3] = base + 10 * MINUTE

    def phase_input(self, phase):
        orders = sorted([r for p, _, r in self.orders if p == phase], key=lambda r: r["ts"])
        payments = sorted([r for p, _, r in self.payments if p == phase], key=lambda r: r["ts"])
        return orders, payments

    def reference(self):
        """{(customer, window_start): (n, spent or None)} and the phase each window fires in."""
        orders = {r["order_id"]: (p, r) for p, _, r in self.orders}
        windows = {}
        for pay_phase, _, pay in self.payments:
            order_phase, order = orders[pay["order_id"]]
            if not FILTERS[order_phase](order["total"]):
                continue
            if abs(pay["ts"] - order["ts"]) > MINUTE:
                continue
            ts = max(pay["ts"], order["ts"])  # an interval join's pair: the later time
            formed = max(order_phase, pay_phase)  # the version that read the later of the two
            key = (order["customer"], ts - ts % MINUTE)
            n, spent = windows.get(key, (0, 0))
            windows[key] = (n + 1, spent + (pay["amount"] if formed >= 2 else 0))
        out = {}
        for (customer, start), (n, spent) in windows.items():
            end = start + MINUTE
            fired = next(p for p in (1, 2, 3) if end <= self.ends[p])
            out[(customer, start)] = (n, spent if fired >= 2 else None)
        return out


def produce(brokers, topic, records, tick_ts):
    p = Producer({"bootstrap.servers": brokers, "enable.idempotence": True})
    for i, r in enumerate(records):
        p.produce(topic, json.dumps(r).encode(), partition=i % PARTITIONS, timestamp=r["ts"])
    # One tick per partition: it moves the watermark (it joins nothing and is filtered out).
    for part in range(PARTITIONS):
        tick = {"order_id": "tick", "customer": "tick", "total": 0, "amount": 0, "ts": tick_ts}
        p.produce(topic, json.dumps(tick).encode(), partition=part, timestamp=tick_ts)
    assert p.flush(30) == 0, "records left unsent"
    return len(records) + PARTITIONS


def read_output(brokers, topic, timeout_s=30):
    c = Consumer({"bootstrap.servers": brokers, "group.id": "upgrade-check-" + uuid.uuid4().hex[:8],
                  "auto.offset.reset": "earliest", "isolation.level": "read_committed",
                  "enable.auto.commit": False, "enable.partition.eof": True})
    c.subscribe([topic])
    out, eof = [], set()
    deadline = time.time() + timeout_s
    try:
        while time.time() < deadline and len(eof) < 1:
            m = c.poll(1.0)
            if m is None:
                continue
            if m.error():
                if m.error().code() == -191:  # _PARTITION_EOF
                    eof.add(m.partition())
                continue
            out.append(json.loads(m.value()))
    finally:
        c.close()
    return out


def rfc3339_ms(text):
    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)


class Runner:
    def __init__(self, flowc, work, brokers, run):
        self.flowc, self.work, self.brokers, self.run = flowc, work, brokers, run
        self.state = os.path.join(work, "state-" + run)
        self.topics = {"orders_topic": "upgrade-orders-" + run, "payments_topic": "upgrade-payments-" + run,
                       "output_topic": "upgrade-out-" + run}

    def build(self, version, script=None):
        binary = os.path.join(self.work, f"upgrade_v{version}")
        script = script or os.path.join(HERE, f"upgrade_v{version}.flow")
        r = subprocess.run([self.flowc, "build", script, "-o", binary], capture_output=True, text=True)
        assert r.returncode == 0, f"flowc build {script} failed:\n{r.stderr}"
        return binary

    def args(self, restore=None, extra=()):
        a = ["--parallelism", "2", "--job-id", "upgrade-" + self.run, "--state-dir", self.state,
             "--checkpoint-interval", "500ms", "--savepoint-on-stop", "--set", "brokers=" + self.brokers]
        for k, v in self.topics.items():
            a += ["--set", f"{k}={v}"]
        if restore:
            a += ["--restore", restore]
        return a + list(extra)

    def run_phase(self, binary, version, expect, restore=None):
        """Runs `binary` until its sources emitted `expect` records, then stops it with a savepoint."""
        port = free_port()
        log_path = os.path.join(self.work, f"v{version}-{self.run}.log")
        with open(log_path, "w") as log:
            proc = subprocess.Popen([binary] + self.args(restore, ["--metrics-port", str(port)]),
                                    stdout=log, stderr=subprocess.STDOUT)
            deadline = time.time() + 120
            seen = {}
            while time.time() < deadline and proc.poll() is None:
                seen = source_records(port)
                if all(seen.get(op, 0) >= n for op, n in expect.items()):
                    break
                time.sleep(0.3)
            assert proc.poll() is None, f"version {version} exited early ({proc.returncode}); see {log_path}"
            assert all(seen.get(op, 0) >= n for op, n in expect.items()), \
                f"version {version} read {seen}, expected {expect}; see {log_path}"
            time.sleep(2)  # periodic watermarks fire the windows the phase's ticks closed
            proc.send_signal(signal.SIGTERM)
            code = proc.wait(60)
        text = open(log_path).read()
        assert code == 0, f"version {version} stopped with exit code {code}; see {log_path}:\n{text[-3000:]}"
        savepoints = sorted(glob.glob(os.path.join(self.state, "sp-*")), key=os.path.getmtime)
        assert savepoints, f"version {version} left no savepoint; see {log_path}"
        return savepoints[-1], text


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--flowc", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    brokers = os.environ.get("FLOW_KAFKA_BROKERS", "127.0.0.1:9092")
    os.makedirs(args.work, exist_ok=True)
    run = uuid.uuid4().hex[:10]
    r = Runner(args.flowc, args.work, brokers, run)
    admin = AdminClient({"bootstrap.servers": brokers})
    new = [NewTopic(r.topics["orders_topic"], num_partitions=PARTITIONS, replication_factor=1),
           NewTopic(r.topics["payments_topic"], num_partitions=PARTITIONS, replication_factor=1),
           NewTopic(r.topics["output_topic"], num_partitions=1, replication_factor=1)]
    for f in admin.create_topics(new).values():
        f.result(30)

    # Before deploying: what carries over.
    cmp12 = subprocess.run([args.flowc, "compare-state", os.path.join(HERE, "upgrade_v1.flow"),
                            os.path.join(HERE, "upgrade_v2.flow")], capture_output=True, text=True)
    assert cmp12.returncode == 0, cmp12.stdout + cmp12.stderr
    assert "per_customer.window  migrated  aggregate `spent` added: starts empty" in cmp12.stdout, cmp12.stdout
    assert "paid.join            kept" in cmp12.stdout, cmp12.stdout

    binaries = {v: r.build(v) for v in (1, 2, 3)}
    seed = int(os.environ.get("FLOW_TEST_SEED", str(random.randrange(1 << 30))))
    print(f"upgrade: seed {seed}, run {run}")
    now = int(time.time() * 1000)
    base = now - now % MINUTE - 30 * MINUTE  # near now: the broker's retention keeps it
    phases = Phases(random.Random(seed), base)

    restore = None
    for version in (1, 2, 3):
        orders, payments = phases.phase_input(version)
        tick = phases.ends[version] + DELAY
        expect = {"orders.source": produce(brokers, r.topics["orders_topic"], orders, tick),
                  "payments.source": produce(brokers, r.topics["payments_topic"], payments, tick)}
        restore, log = r.run_phase(binaries[version], version, expect, restore)
        if version == 2:
            assert "aggregate `spent` added: starts empty" in log, "version 2 did not say what it migrated"
        print(f"upgrade: version {version} read {expect}, savepoint {os.path.basename(restore)}")

    got = {}
    for rec in read_output(brokers, r.topics["output_topic"]):
        key = (rec["customer"], rfc3339_ms(rec["window_start"]))
        assert key not in got, f"window {key} emitted twice: {got[key]} and {rec}"
        got[key] = (rec["n"], rec.get("spent"))
    want = phases.reference()
    missing = {k: v for k, v in want.items() if k not in got}
    wrong = {k: (got[k], v) for k, v in want.items() if k in got and got[k] != v}
    extra = {k: v for k, v in got.items() if k not in want}
    assert not missing and not wrong and not extra, \
        f"missing {missing}\nwrong (got, want) {wrong}\nextra {extra}"
    spanning = [k for k in want if k[1] + MINUTE > phases.ends[1] and k[1] < phases.ends[1]]
    assert spanning, "no window spans the first upgrade: the test shows nothing"
    print(f"upgrade: {len(want)} windows as the reference, {len(spanning)} across the first upgrade")

    # A changed key cannot carry the window's state: refused naming the operator, then dropped.
    changed = os.path.join(args.work, f"upgrade_key-{run}.flow")
    with open(os.path.join(HERE, "upgrade_v3.flow")) as f:
        text = f.read()
    with open(changed, "w") as f:
        f.write(text.replace("select orders.customer, payments.amount",
                             "select orders.customer, orders.order_id, payments.amount")
                .replace("key by customer", "key by customer, order_id"))
    cmp = subprocess.run([args.flowc, "compare-state", os.path.join(HERE, "upgrade_v3.flow"), changed],
                         capture_output=True, text=True)
    assert cmp.returncode == 1 and "per_customer.window  changed" in cmp.stdout, cmp.stdout + cmp.stderr
    binary = r.build(4, changed)
    refused = subprocess.run([binary] + r.args(restore), capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2, f"exit {refused.returncode}: {refused.stderr[-2000:]}"
    assert "'per_customer.window': its state cannot be carried over: key changed" in refused.stderr, \
        refused.stderr[-2000:]
    assert "'paid.join'" not in refused.stderr, "the join's records did not change: " + refused.stderr[-2000:]
    port = free_port()
    proc = subprocess.Popen([binary] + r.args(restore, ["--allow-dropped-state", "--metrics-port", str(port)]),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.time() + 60
        while time.time() < deadline and proc.poll() is None and not source_records(port):
            time.sleep(0.3)
        assert proc.poll() is None, f"exit {proc.returncode} with --allow-dropped-state: {proc.stdout.read()[-2000:]}"
    finally:
        proc.send_signal(signal.SIGTERM)
        log = proc.communicate(timeout=60)[0]
    assert "dropped 1 ('per_customer.window'" in log, "the dropped state was not reported: " + log[-2000:]
    print("upgrade: ok")


if __name__ == "__main__":
    try:
        main()
    except AssertionError as e:
        print(f"FAIL: {e}", file=sys.stderr)
        sys.exit(1)
