#!/usr/bin/env python3
"""`format protobuf` end to end, with real parts on every side: Confluent's Python client produces
Protobuf messages through a real schema registry (Apicurio Registry, scripts/registry) to the
real broker; a Flow job built by flowc from examples/kafka_protobuf.flow reads them, filters and
projects, and writes Protobuf exactly once; the same client reads the output back with
read_committed and its Protobuf deserializer, using the .proto the job registered (compiled by
protoc), and the values must be what the producer's records say, computed here
(docs/connectors.md, "Protobuf").

What must hold:
  - messages of two writer schemas are read by the script's schema: v1 as Confluent's serializer
    registers it (a base64 FileDescriptorProto), v2 registered as .proto text with Order as the
    second message of its file (message indexes {1}), every field renumbered, an id in sint64,
    a float amount, a uint32 qty, an extra field and a map the job skips;
  - every output record once, with the expected values (ids sorted; no duplicates);
  - a message that is not Confluent-framed, and one whose writer schema does not fit the script's
    (a string amount), go to the dead-letter topic naming why; nothing else does;
  - the sink registered a PROTOBUF schema under "<out topic>-value" that protoc compiles, with the
    script's field names in order;
  - a wrong registry URL stops the job before it runs, with a message naming the registry;
  - without a registry (plain_orders.flow: `proto:` and `message:`), plain messages of
    order_v2.proto are read, and the output is written as result.proto's message: other field
    numbers, sint64 and sfixed64 encodings, `optional` presence; Python's protobuf parses it with
    the expected values, every record once.

Run by CTest (label kafka) through scripts/pyenv. Uses the broker of scripts/kafka
(FLOW_KAFKA_BROKERS, default 127.0.0.1:9092) and starts its own registry
(FLOW_PROTOBUF_REGISTRY_PORT, default 18183) unless it runs, and stops what it started.
"""

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import uuid

from confluent_kafka import Producer
from google.protobuf import timestamp_pb2

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
CLIENT = os.path.join(ROOT, "tests", "tools", "protobuf_client.py")
sys.path.insert(0, os.path.join(ROOT, "tests", "tools"))
from client_common import create_topics as create_topics_with, read_committed  # noqa: E402
BROKERS = os.environ.get("FLOW_KAFKA_BROKERS", "127.0.0.1:9092")
REGISTRY_PORT = int(os.environ.get("FLOW_PROTOBUF_REGISTRY_PORT", "18183"))
REGISTRY = f"http://127.0.0.1:{REGISTRY_PORT}/apis/ccompat/v7"
STATUS = ["NEW", "PAID", "SHIPPED"]


def log(*a):
    print("protobuf_kafka_test:", *a, flush=True)


def registry_script(cmd):
    env = dict(os.environ, FLOW_REGISTRY_PORT=str(REGISTRY_PORT))
    env.pop("FLOW_REGISTRY_DIR", None)
    return subprocess.run([os.path.join(ROOT, "scripts", "registry"), cmd], env=env).returncode


def run_client(args, timeout=120):
    r = subprocess.run([sys.executable, CLIENT] + args, capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        raise AssertionError(f"protobuf_client {args[0]} failed ({r.returncode}): {r.stderr.strip()}")
    return r.stdout


def produce(topic, proto, message, rows, work, name, register_as="descriptor", subject=None):
    path = os.path.join(work, name + ".jsonl")
    with open(path, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    run_client(["produce", "--brokers", BROKERS, "--topic", topic, "--registry", REGISTRY, "--proto",
                os.path.join(HERE, proto), "--message", message, "--records", path, "--key-field", "id",
                "--register-as", register_as] + (["--subject", subject] if subject else []))


def create_topics(names, partitions):
    create_topics_with({"bootstrap.servers": BROKERS}, names, partitions)


def read_all(topic, timeout):
    return read_committed({"bootstrap.servers": BROKERS}, topic, timeout)


def expect_output(job, log_path, consume_args, want, out_topic, what):
    """The job is still running, `consume_args` print exactly `want` (by id), and the topic holds
    nothing more once committed: every record once."""
    got_text = run_client(["consume", "--brokers", BROKERS, "--topic", out_topic] + consume_args +
                          ["--count", str(len(want)), "--timeout", "120"], 180)
    got = sorted((json.loads(line) for line in got_text.splitlines() if line.strip()), key=lambda r: r["id"])
    assert job.poll() is None, f"the {what} job ended early ({job.returncode}); see {log_path}"
    assert len(got) == len(want), f"{what}: want {len(want)} records, got {len(got)}"
    for g, w in zip(got, want):
        assert g == w, f"{what} record {w['id']}: want {w}, got {g}"
    later = read_all(out_topic, 5)
    assert len(later) == len(want), f"{len(later)} committed records in {out_topic}, want {len(want)}"


def timestamp_json(ms):
    t = timestamp_pb2.Timestamp()
    t.FromMilliseconds(ms)
    return t.ToJsonString()


def v1_rows(now):
    rows = []
    for i in range(60):
        r = {"id": i, "customer": f"c{i % 7}", "amount": float(i % 25) + 0.5, "priority": i % 2 == 0,
             "status": STATUS[i % 3], "tags": [f"t{j}" for j in range(i % 4)],
             "lines": [{"sku": f"s{i}-{k}", "qty": k - 1} for k in range(i % 3)], "ts": timestamp_json(now + i)}
        if i % 3 != 0:
            r["note"] = f"note {i} \u00e9"
        rows.append(r)
    return rows


def v2_rows(now):
    rows = []
    for i in range(60, 120):
        r = {"internal_code": i * 11, "ts": timestamp_json(now + i), "customer": f"d{i % 5}", "id": i,
             "amount": float(i % 30), "note": f"v2 {i}", "priority": i % 3 == 0, "status": STATUS[(i + 1) % 3],
             "tags": ["x"] * (i % 2), "lines": [{"sku": f"w{i}", "qty": 4000000000}] if i % 2 else [],
             "attributes": {"k": str(i)}}
        if i % 4 != 0:
            r["channel"] = f"ch{i % 4}"
        rows.append(r)
    return rows


def expected_output(rows):
    """The job's output as protobuf_client prints it: fields without presence always (with their
    defaults), `optional` ones only when set; a v2 qty above 2^31 stays exact (int64 both ways)."""
    out = []
    for r in rows:
        if r["amount"] < 10.0:
            continue
        o = {"id": r["id"], "customer": r["customer"], "doubled": r["amount"] * 2.0, "priority": r["priority"],
             "status": r["status"], "tags": r["tags"], "lines": [{"sku": ln["sku"], "qty": ln["qty"]} for ln in r["lines"]],
             "ts": r["ts"]}
        if "note" in r:
            o["note"] = r["note"]
        if "channel" in r:
            o["channel"] = r["channel"]
        out.append(o)
    return sorted(out, key=lambda r: r["id"])


def plain_mode(flowc, work, run):
    """Plain Protobuf with .proto files and no registry (plain_orders.flow)."""
    binary = os.path.join(work, "plain")
    r = subprocess.run([flowc, "build", os.path.join(HERE, "plain_orders.flow"), "-o", binary], capture_output=True,
                       text=True)
    assert r.returncode == 0, f"flowc build failed: {r.stderr}"
    in_topic, out_topic = f"pb-plain-in-{run}", f"pb-plain-out-{run}"
    create_topics([in_topic, out_topic], 2)
    now = int(time.time() * 1000)
    rows = v2_rows(now)
    path = os.path.join(work, "plain.jsonl")
    with open(path, "w") as f:
        for row in rows[:30]:
            f.write(json.dumps(row) + "\n")
    produce_plain = ["produce", "--plain", "--brokers", BROKERS, "--topic", in_topic, "--proto",
                     os.path.join(HERE, "order_v2.proto"), "--message", "shop.v2.Order", "--records", path]
    run_client(produce_plain)
    log_path = os.path.join(work, "plain.out")
    job = subprocess.Popen([binary, "--set", f"brokers={BROKERS}", "--set", f"in_topic={in_topic}", "--set",
                            f"out_topic={out_topic}", "--set", f"group=g-plain-{run}", "--parallelism", "2",
                            "--state-dir", os.path.join(work, "plain-state"), "--job-id", f"pb-plain-{run}",
                            "--progress-interval", "0"], stdout=open(log_path, "w"), stderr=subprocess.STDOUT)
    try:
        time.sleep(3)
        with open(path, "w") as f:
            for row in rows[30:]:
                f.write(json.dumps(row) + "\n")
        run_client(produce_plain)
        p = Producer({"bootstrap.servers": BROKERS})
        p.produce(in_topic, value=b"\xff\xff\xff")  # not a message: skipped (`on error skip`)
        p.flush(30)
        want = []
        for r in rows:
            if r["amount"] < 10.0:
                continue
            o = {"customer": r["customer"], "id": r["id"], "doubled": r["amount"] * 2.0, "note": r["note"],
                 "status": r["status"], "lines": [{"sku": ln["sku"], "qty": ln["qty"]} for ln in r["lines"]],
                 "ts": now + r["id"], "unused": 0}
            if r["priority"]:
                o["priority_rank"] = 1
            want.append(o)
        want.sort(key=lambda o: o["id"])
        expect_output(job, log_path, ["--plain", "--proto", os.path.join(HERE, "result.proto"), "--message",
                                      "shop.out.Result"], want, out_topic, "plain")
        job.send_signal(signal.SIGTERM)
        assert job.wait(60) == 0, f"the plain job exited with {job.returncode} after SIGTERM; see {log_path}"
        job = None
        return len(want)
    finally:
        if job is not None:
            job.kill()
            job.wait()
            print(open(log_path).read()[-4000:], file=sys.stderr)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--flowc", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    work = tempfile.mkdtemp(prefix="protobuf-", dir=args.work)

    started_registry = registry_script("status") != 0
    job = None
    try:
        if started_registry and registry_script("start") != 0:
            raise AssertionError(f"cannot start the registry on {REGISTRY_PORT}")

        binary = os.path.join(work, "orders")
        r = subprocess.run([args.flowc, "build", os.path.join(ROOT, "examples", "kafka_protobuf.flow"), "-o", binary],
                           capture_output=True, text=True)
        assert r.returncode == 0, f"flowc build failed: {r.stderr}"

        run = uuid.uuid4().hex[:10]
        in_topic, out_topic, dead_topic = f"pb-in-{run}", f"pb-out-{run}", f"pb-dead-{run}"
        create_topics([in_topic, out_topic], 2)
        create_topics([dead_topic], 1)

        def job_cmd(registry=REGISTRY):
            return [binary, "--set", f"brokers={BROKERS}", "--set", f"registry={registry}", "--set",
                    f"in_topic={in_topic}", "--set", f"out_topic={out_topic}", "--set", f"dead_topic={dead_topic}",
                    "--set", f"group=g-{run}", "--parallelism", "2", "--state-dir", os.path.join(work, "state"),
                    "--job-id", f"pb-{run}", "--progress-interval", "0"]

        # A wrong registry URL: the job stops before it runs, naming the registry.
        bad = subprocess.run(job_cmd(f"http://127.0.0.1:{REGISTRY_PORT}/no-such-api"), capture_output=True, text=True,
                             timeout=120)
        assert bad.returncode == 2, f"want exit code 2 for a wrong registry URL, got {bad.returncode}: {bad.stderr}"
        assert f"127.0.0.1:{REGISTRY_PORT}/no-such-api" in bad.stderr, bad.stderr

        now = int(time.time() * 1000)
        v1, v2 = v1_rows(now), v2_rows(now)
        produce(in_topic, "order_v1.proto", "shop.Order", v1[:30], work, "v1a")

        job = subprocess.Popen(job_cmd(), stdout=open(os.path.join(work, "job.out"), "w"), stderr=subprocess.STDOUT)
        time.sleep(3)
        # More input while the job runs: the rest of v1, a message that is not Protobuf, v2 (as a
        # non-Python producer registers it: .proto text), then a writer schema that does not fit.
        produce(in_topic, "order_v1.proto", "shop.Order", v1[30:], work, "v1b")
        p = Producer({"bootstrap.servers": BROKERS})
        p.produce(in_topic, value=b'{"id": 999, "amount": 1}')
        p.flush(30)
        # Apicurio 2.6 cannot compare a base64 descriptor with another version of a subject (HTTP
        # 500, whatever the compatibility rule), so the later schemas go under subjects of their
        # own, as producers using RecordNameStrategy register them.
        produce(in_topic, "order_v2.proto", "shop.v2.Order", v2, work, "v2", register_as="text",
                subject=f"shop.v2.Order-{run}")
        produce(in_topic, "order_bad.proto", "shop.bad.Order", [{"id": 1000, "customer": "z", "amount": "12.5"}],
                work, "bad", subject=f"shop.bad.Order-{run}")

        # The schema the sink registered: .proto text that protoc compiles, the record first.
        registered = json.loads(run_client(["schema", "--registry", REGISTRY, "--subject", f"{out_topic}-value"]))
        assert registered["schemaType"] == "PROTOBUF", registered
        out_proto = os.path.join(work, "out.proto")
        with open(out_proto, "w") as f:
            f.write(registered["schema"])
        message = re.search(r"^message (\w+) \{", registered["schema"], re.M).group(1)
        fields = re.findall(r"^  (?:optional |repeated )?[\w.]+ (\w+) = \d+;", registered["schema"].split("}")[0], re.M)
        assert fields == ["id", "customer", "doubled", "note", "priority", "status", "tags", "lines", "ts", "channel"], \
            fields

        want = expected_output(v1 + v2)
        expect_output(job, os.path.join(work, "job.out"),
                      ["--registry", REGISTRY, "--proto", out_proto, "--message", message], want, out_topic,
                      "registry")

        dead = [json.loads(v) for v in read_all(dead_topic, 3)]
        assert len(dead) == 2, f"want 2 dead letters, got {dead}"
        errors = sorted(d["error"] for d in dead)
        assert "not in the Confluent Protobuf wire format (first byte 0x7b, want 0x00)" in errors[0], errors
        assert "(message `shop.bad.Order`) does not fit the script's schema: field `amount`: the writer's string " \
            "cannot be read as float" in errors[1], errors

        job.send_signal(signal.SIGTERM)
        assert job.wait(60) == 0, f"the job exited with {job.returncode} after SIGTERM; see {work}/job.out"
        job = None
        log(f"ok: {len(want)} records, 2 dead letters, schemas v1 (descriptor) and v2 (text, message index 1)")
        plain = plain_mode(args.flowc, work, run)
        log(f"ok: plain messages with .proto files, {plain} records")
        return 0
    finally:
        if job is not None:
            job.kill()
            job.wait()
            print(open(os.path.join(work, "job.out")).read()[-4000:], file=sys.stderr)
        if started_registry:
            registry_script("stop")


if __name__ == "__main__":
    sys.exit(main())
