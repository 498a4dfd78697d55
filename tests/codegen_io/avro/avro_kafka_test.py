#!/usr/bin/env python3
"""`format avro` end to end, with real parts on every side: Confluent's Python client produces
Avro records through a real schema registry (Apicurio Registry, scripts/registry) over a SASL_SSL
listener of the real broker (scripts/kafka --secure); a Flow job built by flowc from
examples/kafka_avro.flow reads them, filters and projects, and writes Avro exactly once; the same client reads the output
back with read_committed and its Avro deserializer, and the values must be what the producer's
records say, computed here (docs/connectors.md, "Avro").

What must hold:
  - records of two writer schemas (v2: fields reordered, a field added, an extra field and a map
    the job skips, timestamps in microseconds) are read by the script's schema;
  - every output record once, with the expected values (ids sorted; no duplicates);
  - a record that is not Confluent-framed Avro, and one whose writer schema does not fit the
    script's (a string amount), go to the dead-letter topic naming why; nothing else does;
  - the sink registered its schema under "<out topic>-value", with the script's field names;
  - a wrong registry URL stops the job before it runs, with a message naming the registry.

Run by CTest (label kafka) through scripts/pyenv. Starts its own secure broker
(FLOW_AVRO_KAFKA_PORT, default 19660; SASL_SSL on port + 2) and registry (FLOW_AVRO_REGISTRY_PORT,
default 18181) unless they run, and stops what it started.
"""

import argparse
import base64
import io
import json
import os
import signal
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid

import fastavro
from confluent_kafka import Producer

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
CLIENT = os.path.join(ROOT, "tests", "tools", "avro_client.py")
sys.path.insert(0, os.path.join(ROOT, "tests", "tools"))
from client_common import create_topics as create_topics_with, read_committed  # noqa: E402
PORT = int(os.environ.get("FLOW_AVRO_KAFKA_PORT", "19660"))
SECURE_PORT = PORT + 2
REGISTRY_PORT = int(os.environ.get("FLOW_AVRO_REGISTRY_PORT", "18181"))
REGISTRY = f"http://127.0.0.1:{REGISTRY_PORT}/apis/ccompat/v7"
USER = "flow"
PASSWORD = "flow-avro-test"  # a test broker's; handed to clients through the environment only
BROKER_DIR = f"/tmp/flow-kafka-{PORT}"
BROKERS = f"127.0.0.1:{SECURE_PORT}"
CA = f"{BROKER_DIR}/tls/ca.pem"
PASSWORD_ENV = "FLOW_AVRO_TEST_SASL_PASSWORD"


def log(*a):
    print("avro_kafka_test:", *a, flush=True)


def broker_script(cmd):
    env = dict(os.environ, FLOW_KAFKA_PORT=str(PORT), FLOW_KAFKA_CONTROLLER_PORT=str(PORT + 1),
               FLOW_KAFKA_SECURE_PORT=str(SECURE_PORT), FLOW_KAFKA_DIR=BROKER_DIR, FLOW_KAFKA_SECURE="1",
               FLOW_KAFKA_SASL_USER=USER, FLOW_KAFKA_SASL_PASSWORD=PASSWORD)
    return subprocess.run([os.path.join(ROOT, "scripts", "kafka"), cmd], env=env).returncode


def registry_script(cmd):
    env = dict(os.environ, FLOW_REGISTRY_PORT=str(REGISTRY_PORT))
    env.pop("FLOW_REGISTRY_DIR", None)
    return subprocess.run([os.path.join(ROOT, "scripts", "registry"), cmd], env=env).returncode


def client_config():
    # librdkafka bundled with confluent-kafka speaks SCRAM to Kafka 4 brokers.
    return {"bootstrap.servers": BROKERS, "security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-256",
            "sasl.username": USER, "sasl.password": PASSWORD, "ssl.ca.location": CA}


def security_args():
    return ["--security-protocol", "SASL_SSL", "--sasl-mechanism", "SCRAM-SHA-256", "--sasl-username", USER,
            "--sasl-password-env", PASSWORD_ENV, "--ca", CA]


def run_client(args, timeout=120):
    env = dict(os.environ, **{PASSWORD_ENV: PASSWORD})
    r = subprocess.run([sys.executable, CLIENT] + args + security_args(), env=env, capture_output=True, text=True,
                       timeout=timeout)
    if r.returncode != 0:
        raise AssertionError(f"avro_client {args[0]} failed ({r.returncode}): {r.stderr.strip()}")
    return r.stdout


def create_topics(names, partitions):
    create_topics_with(client_config(), names, partitions)


def read_all(topic, timeout):
    return read_committed(client_config(), topic, timeout)


def write_jsonl(path, rows):
    with open(path, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")


def http(method, path, body=None):
    req = urllib.request.Request(REGISTRY + path, method=method, data=None if body is None else json.dumps(body).encode(),
                                 headers={"Content-Type": "application/vnd.schemaregistry.v1+json"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.loads(resp.read())


def expected_output(v1_rows, v2_rows):
    out = []
    for r in v1_rows:
        if r["amount"] >= 10.0:
            out.append({"id": r["id"], "customer": r["customer"], "doubled": r["amount"] * 2.0, "note": r["note"],
                        "priority": r["priority"], "payload": r["payload"], "tags": r["tags"], "ts": r["ts"],
                        "channel": None})
    for r in v2_rows:
        if r["amount"] >= 10.0:
            out.append({"id": r["id"], "customer": r["customer"], "doubled": r["amount"] * 2.0, "note": r["note"],
                        "priority": r["priority"], "payload": r["payload"], "tags": r["tags"],
                        "ts": r["ts"] // 1000, "channel": r["channel"]})
    return sorted(out, key=lambda r: r["id"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--flowc", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    work = tempfile.mkdtemp(prefix="avro-", dir=args.work)

    started_broker = broker_script("status") != 0
    started_registry = registry_script("status") != 0
    job = None
    try:
        if started_broker and broker_script("start") != 0:
            raise AssertionError(f"cannot start the secure broker on {PORT}")
        if started_registry and registry_script("start") != 0:
            raise AssertionError(f"cannot start the registry on {REGISTRY_PORT}")

        binary = os.path.join(work, "orders")
        r = subprocess.run([args.flowc, "build", os.path.join(ROOT, "examples", "kafka_avro.flow"), "-o", binary],
                           capture_output=True, text=True)
        assert r.returncode == 0, f"flowc build failed: {r.stderr}"

        run = uuid.uuid4().hex[:10]
        in_topic, out_topic, dead_topic = f"avro-in-{run}", f"avro-out-{run}", f"avro-dead-{run}"
        create_topics([in_topic, out_topic], 2)
        create_topics([dead_topic], 1)
        props = os.path.join(work, "kafka.properties")
        with open(props, "w") as f:
            # The password comes from the environment when the job reads the file.
            f.write(f"security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\nsasl.username={USER}\n"
                    f"sasl.password=${{{PASSWORD_ENV}}}\nssl.ca.location={CA}\n")

        def job_cmd(registry=REGISTRY):
            return [binary, "--set", f"brokers={BROKERS}", "--set", f"registry={registry}", "--set",
                    f"in_topic={in_topic}", "--set", f"out_topic={out_topic}", "--set", f"dead_topic={dead_topic}",
                    "--set", f"group=g-{run}", "--kafka-properties", props, "--parallelism", "2", "--state-dir",
                    os.path.join(work, "state"), "--job-id", f"avro-{run}", "--progress-interval", "0"]

        env = dict(os.environ, **{PASSWORD_ENV: PASSWORD})

        # A wrong registry URL: the job stops before it runs, naming the registry.
        bad = subprocess.run(job_cmd(f"http://127.0.0.1:{REGISTRY_PORT}/no-such-api"), env=env, capture_output=True,
                             text=True, timeout=120)
        assert bad.returncode == 2, f"want exit code 2 for a wrong registry URL, got {bad.returncode}: {bad.stderr}"
        assert f"127.0.0.1:{REGISTRY_PORT}/no-such-api" in bad.stderr, bad.stderr

        now = int(time.time() * 1000)
        v1 = [{"id": i, "customer": f"c{i % 7}", "amount": float(i % 25) + 0.5,
               "note": None if i % 3 == 0 else f"note {i} \u00e9", "priority": i % 2 == 0,
               "payload": base64.b64encode(bytes([i % 256, 0, 255])).decode(), "tags": [f"t{j}" for j in range(i % 4)],
               "ts": now + i} for i in range(60)]
        v2 = [{"internal_code": i * 11, "ts": (now + i) * 1000 + 999, "customer": f"d{i % 5}", "id": i,
               "amount": float(i % 30), "note": f"v2 {i}", "priority": i % 3 == 0,
               "payload": base64.b64encode(b"\x00\x01" * (i % 3)).decode(), "tags": ["x"] * (i % 2),
               "attributes": {"k": str(i)}, "channel": None if i % 4 == 0 else f"ch{i % 4}"} for i in range(60, 120)]
        write_jsonl(os.path.join(work, "v1.jsonl"), v1[:30])
        run_client(["produce", "--brokers", BROKERS, "--topic", in_topic, "--registry", REGISTRY, "--schema",
                    os.path.join(HERE, "order_v1.avsc"), "--records", os.path.join(work, "v1.jsonl"), "--key-field", "id"])

        job = subprocess.Popen(job_cmd(), env=env, stdout=open(os.path.join(work, "job.out"), "w"),
                               stderr=subprocess.STDOUT)
        time.sleep(3)
        # More input while the job runs: the rest of v1, a record that is not Avro, v2, then a
        # writer schema that does not fit (registered with the subject's compatibility check off).
        write_jsonl(os.path.join(work, "v1b.jsonl"), v1[30:])
        run_client(["produce", "--brokers", BROKERS, "--topic", in_topic, "--registry", REGISTRY, "--schema",
                    os.path.join(HERE, "order_v1.avsc"), "--records", os.path.join(work, "v1b.jsonl")])
        p = Producer(client_config())
        p.produce(in_topic, value=b'{"id": 999, "amount": 1}')
        p.flush(30)
        write_jsonl(os.path.join(work, "v2.jsonl"), v2)
        run_client(["produce", "--brokers", BROKERS, "--topic", in_topic, "--registry", REGISTRY, "--schema",
                    os.path.join(HERE, "order_v2.avsc"), "--records", os.path.join(work, "v2.jsonl")])
        # The subject's compatibility rule refuses that schema under "<topic>-value"; producers that
        # name subjects by record (RecordNameStrategy) can still put it in the topic.
        with open(os.path.join(HERE, "order_bad.avsc")) as f:
            bad_schema = f.read()
        bad_id = http("POST", f"/subjects/bad-{run}/versions", {"schema": bad_schema})["id"]
        body = io.BytesIO()
        fastavro.schemaless_writer(body, fastavro.parse_schema(json.loads(bad_schema)),
                                   {"id": 1000, "customer": "z", "amount": "12.5"})
        p.produce(in_topic, value=b"\x00" + struct.pack(">i", bad_id) + body.getvalue())
        p.flush(30)

        want = expected_output(v1, v2)
        got_text = run_client(["consume", "--brokers", BROKERS, "--topic", out_topic, "--registry", REGISTRY,
                               "--count", str(len(want)), "--timeout", "120", "--isolation", "read_committed"], 180)
        got = sorted((json.loads(line) for line in got_text.splitlines() if line.strip()), key=lambda r: r["id"])
        assert job.poll() is None, f"the job ended early ({job.returncode}); see {work}/job.out"
        assert len(got) == len(want), f"want {len(want)} records, got {len(got)}"
        for g, w in zip(got, want):
            assert g == w, f"record {w['id']}: want {w}, got {g}"
        # Exactly once: nothing more arrives, and no id twice.
        later = read_all(out_topic, 5)
        assert len(later) == len(want), f"{len(later)} committed records in {out_topic}, want {len(want)}"

        dead = [json.loads(v) for v in read_all(dead_topic, 3)]
        assert len(dead) == 2, f"want 2 dead letters, got {dead}"
        errors = sorted(d["error"] for d in dead)
        assert "not in the Confluent Avro wire format (first byte 0x7b, want 0x00)" in errors[0], errors
        assert "does not fit the script's schema: field `amount`: the writer's string cannot be read as double" in \
            errors[1], errors

        subject = http("GET", f"/subjects/{out_topic}-value/versions/latest")
        fields = [f["name"] for f in json.loads(subject["schema"])["fields"]]
        assert fields == ["id", "customer", "doubled", "note", "priority", "payload", "tags", "ts", "channel"], fields

        job.send_signal(signal.SIGTERM)
        assert job.wait(60) == 0, f"the job exited with {job.returncode} after SIGTERM; see {work}/job.out"
        job = None
        log(f"ok: {len(want)} records, 2 dead letters, schemas v1 and v2")
        return 0
    finally:
        if job is not None:
            job.kill()
            job.wait()
            print(open(os.path.join(work, "job.out")).read()[-4000:], file=sys.stderr)
        if started_registry:
            registry_script("stop")
        if started_broker:
            broker_script("stop")


if __name__ == "__main__":
    sys.exit(main())
