#!/usr/bin/env python3
"""Kafka metadata as fields (`metadata:` on kafka sources and sinks, docs/connectors.md).

Reading: Confluent's Python client produces messages with and without keys, with headers (text,
binary, repeated), and with timestamps of its choosing; a Flow job built from metadata.flow prints
each record's fields; every value must be what the producer set and what the broker reported
(partition, offset).
Writing: the same job writes the records back through an exactly-once and an at-least-once kafka
sink whose `metadata:` makes fields the message key, timestamp and headers; the Python consumer
(read_committed) must see exactly those, with the payload holding only the other fields.
Uses the broker of scripts/kafka (FLOW_KAFKA_BROKERS, default 127.0.0.1:9092); CTest label kafka.
"""

import argparse
import base64
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from datetime import datetime

from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

HERE = os.path.dirname(os.path.abspath(__file__))


def ascii_upper(s):
    """Flow's upper(): ASCII letters only."""
    return "".join(c.upper() if "a" <= c <= "z" else c for c in s)


def read_topic(brokers, topic, count, timeout_s):
    """The first `count` committed messages of `topic`: {n: (key, timestamp, headers, payload)}."""
    c = Consumer({"bootstrap.servers": brokers, "group.id": "metadata-check-" + uuid.uuid4().hex[:8],
                  "auto.offset.reset": "earliest", "isolation.level": "read_committed",
                  "enable.auto.commit": False})
    c.subscribe([topic])
    out = {}
    deadline = time.time() + timeout_s
    try:
        while len(out) < count and time.time() < deadline:
            m = c.poll(1.0)
            if m is None or m.error():
                continue
            payload = json.loads(m.value())
            ts_type, ts = m.timestamp()
            out[payload["n"]] = (m.key(), ts, m.headers() or [], payload)
    finally:
        c.close()
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--flowc", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    brokers = os.environ.get("FLOW_KAFKA_BROKERS", "127.0.0.1:9092")
    os.makedirs(args.work, exist_ok=True)
    binary = os.path.join(args.work, "metadata")
    r = subprocess.run([args.flowc, "build", os.path.join(HERE, "metadata.flow"), "-o", binary], capture_output=True,
                       text=True)
    assert r.returncode == 0, f"flowc build failed: {r.stderr}"

    run = uuid.uuid4().hex[:10]
    topic = "metadata-" + run
    outs = {"exactly_once": "metadata-eo-" + run, "at_least_once": "metadata-alo-" + run}
    admin = AdminClient({"bootstrap.servers": brokers})
    new = [NewTopic(t, num_partitions=2, replication_factor=1) for t in [topic, *outs.values()]]
    for f in admin.create_topics(new).values():
        f.result(30)

    now = int(time.time() * 1000)
    want = {}
    producer = Producer({"bootstrap.servers": brokers, "enable.idempotence": True})

    def delivered(err, msg, n, expect):
        assert err is None, err
        expect["p"], expect["o"] = msg.partition(), msg.offset()
        want[n] = expect

    for n in range(40):
        key = None if n % 5 == 0 else f"user-{n}-\u00e9"
        headers = []
        if n % 3 != 0:
            headers.append(("trace-id", f"old-{n}".encode()))
            headers.append(("trace-id", f"t-{n}".encode()))  # the last one counts
        if n % 4 == 0:
            headers.append(("raw", bytes([0xff, 0x00, n])))
        expect = {"n": n, "k": key, "ts": now - 1000 * n, "trace": None if n % 3 == 0 else f"t-{n}",
                  "raw": base64.b64encode(bytes([0xff, 0x00, n])).decode() if n % 4 == 0 else None}
        producer.produce(topic, value=json.dumps({"n": n, "k": "not the key", "p": -1}).encode(), key=key,
                         headers=headers, timestamp=now - 1000 * n,
                         on_delivery=lambda err, msg, n=n, expect=expect: delivered(err, msg, n, expect))
    producer.flush(30)
    assert len(want) == 40

    job = subprocess.Popen([binary, "--set", f"brokers={brokers}", "--set", f"topic={topic}",
                            "--set", f"out_exactly_once={outs['exactly_once']}",
                            "--set", f"out_at_least_once={outs['at_least_once']}",
                            "--job-id", "metadata-" + run, "--state-dir", os.path.join(args.work, "state-" + run),
                            "--checkpoint-interval", "500ms", "--progress-interval", "0"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    got = {}
    written = {}
    deadline = time.time() + 120
    try:
        while len(got) < 40 and time.time() < deadline:
            line = job.stdout.readline()
            if not line:
                break
            rec = json.loads(line)
            got[rec["n"]] = rec
        # The exactly-once sink's records become visible with the next checkpoint's commit.
        for how, out_topic in outs.items():
            written[how] = read_topic(brokers, out_topic, 40, 90)
    finally:
        job.send_signal(signal.SIGTERM)
        try:
            job.wait(60)
        except subprocess.TimeoutExpired:
            job.kill()
    assert len(got) == 40, f"got {len(got)} records; job stderr: {job.stderr.read()[-3000:]}"
    for n in range(40):
        g, w = got[n], want[n]
        g_ts = g["ts"]
        # The JSON encoder writes timestamps as RFC 3339 text: compare the instant.
        g["ts"] = int(datetime.fromisoformat(g_ts.replace("Z", "+00:00")).timestamp() * 1000 + 0.5)
        assert g == w, f"record {n}: want {w}, got {g}"
    for how, msgs in written.items():
        assert len(msgs) == 40, f"{how} sink: {len(msgs)} of 40 records committed; job stderr: {job.stderr.read()[-3000:]}"
        for n in range(40):
            w = want[n]
            key, ts, headers, payload = msgs[n]
            want_key = ascii_upper(w["k"]).encode() if w["k"] is not None else None
            assert key == want_key, f"{how} record {n}: key {key!r}, want {want_key!r}"
            assert ts == w["ts"] + 5000, f"{how} record {n}: timestamp {ts}, want {w['ts'] + 5000}"
            want_headers = []
            if w["trace"] is not None:
                want_headers.append(("trace-id", w["trace"].encode()))
            if w["raw"] is not None:
                want_headers.append(("raw", base64.b64decode(w["raw"])))
            want_headers.append(("tag", f"n-{n}".encode()))
            assert headers == want_headers, f"{how} record {n}: headers {headers}, want {want_headers}"
            assert payload == {"n": n, "p": w["p"]}, f"{how} record {n}: payload {payload}"
    print("kafka_metadata_test: ok: 40 records, keys, headers, timestamps, partitions and offsets read; "
          "keys, timestamps and headers written exactly once and at least once")
    return 0


if __name__ == "__main__":
    sys.exit(main())
