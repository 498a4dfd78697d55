#!/usr/bin/env python3
"""Kafka metadata as fields (`metadata:` on a kafka source, docs/connectors.md): Confluent's Python
client produces messages with and without keys, with headers (text, binary, repeated), and with
timestamps of its choosing; a Flow job built from metadata.flow prints each record's fields; every
value must be what the producer set and what the broker reported (partition, offset).
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

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

HERE = os.path.dirname(os.path.abspath(__file__))


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

    topic = "metadata-" + uuid.uuid4().hex[:10]
    admin = AdminClient({"bootstrap.servers": brokers})
    for f in admin.create_topics([NewTopic(topic, num_partitions=2, replication_factor=1)]).values():
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

    job = subprocess.Popen([binary, "--set", f"brokers={brokers}", "--set", f"topic={topic}", "--progress-interval", "0"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    got = {}
    deadline = time.time() + 120
    try:
        while len(got) < 40 and time.time() < deadline:
            line = job.stdout.readline()
            if not line:
                break
            rec = json.loads(line)
            got[rec["n"]] = rec
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
    print("kafka_metadata_test: ok: 40 records, keys, headers, timestamps, partitions and offsets")
    return 0


if __name__ == "__main__":
    sys.exit(main())
