#!/usr/bin/env python3
"""`flowc explain`: text, DOT and SVG output. Usage: explain_test.py FLOWC EXAMPLES_DIR DOT"""
import glob
import json
import os
import subprocess
import sys
import tempfile

FLOWC = os.path.abspath(sys.argv[1])
EXAMPLES = os.path.abspath(sys.argv[2])
DOT = sys.argv[3] if len(sys.argv) > 3 else ""
failures = []


def run(*args, env=None, cwd=None):
    p = subprocess.run([FLOWC, "explain", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=120, env=env, cwd=cwd)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def dot(text, fmt):
    p = subprocess.run([DOT, "-T" + fmt], input=text.encode(), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def expect(name, cond, detail=""):
    if not cond:
        failures.append(f"{name}: {detail}")


def shown(label):
    """The text Graphviz displays for a label: \\l, \\n, \\r break lines, \\x is x."""
    out, i = [], 0
    while i < len(label):
        if label[i] == "\\" and i + 1 < len(label):
            out.append("\n" if label[i + 1] in "lnr" else label[i + 1])
            i += 2
        else:
            out.append(label[i])
            i += 1
    return "".join(out)


def titles(text):
    """The node title lines of the text listing (`#3 chain ...`), without indentation."""
    return [line.strip() for line in text.splitlines() if line.strip().startswith("#")]


TMP = tempfile.TemporaryDirectory()  # the scripts below; removed at exit


def script(name, text):
    """`text` as the file `name` in TMP; its path."""
    path = os.path.join(TMP.name, name)
    with open(path, "w") as f:
        f.write(text)
    return path


if not DOT or not os.access(DOT, os.X_OK):
    print("explain_test: Graphviz `dot` is required (scripts/setup installs graphviz)")
    sys.exit(1)

# Every example explains (text and DOT), and Graphviz renders its DOT as SVG: no exceptions, also
# for the examples with Kafka, datagen, CSV sources and dead letters.
examples = sorted(glob.glob(os.path.join(EXAMPLES, "*.flow")))
expect("examples exist", len(examples) >= 13, examples)
for path in examples:
    name = os.path.basename(path)
    rc, out, err = run(path)
    expect(f"{name}: text", rc == 0 and "source" in out and "sink" in out, err or out)
    rc, out, err = run(path, "--format", "dot")
    expect(f"{name}: dot", rc == 0 and out.startswith("digraph plan {"), err)
    if rc == 0:
        drc, svg, derr = dot(out, "svg")
        expect(f"{name}: dot -Tsvg", drc == 0 and "<svg" in svg, derr)
    rc, out, err = run(path, "--format", "svg")
    expect(f"{name}: --format svg", rc == 0 and "<svg" in out, err)

# The Kafka example: Kafka source and sink, keyed tumbling window between them.
rc, out, err = run(os.path.join(EXAMPLES, "kafka_exactly_once.flow"))
kinds = [t.split()[1] for t in titles(out)]
expect("kafka example: nodes", rc == 0 and kinds == ["source", "chain", "key-by", "window-aggregate", "chain", "sink"],
       err or out)
expect("kafka example: kafka source and sink", "source kafka(topic: " in out and "sink kafka(topic: " in out, out)
# What the source and sink promise: event time, the dead-letter sink, the delivery guarantee.
expect("kafka example: event time", "    event time ts watermark 5s idle 30s\n" in out, out)
expect("kafka example: dead letters",
       "    on error dead_letter kafka(topic: rejected_topic, brokers: brokers) format json (at least once)\n" in out, out)
expect("kafka example: exactly-once sink",
       "delivery: exactly once (two-phase commit: output is visible once a checkpoint completes)" in out, out)
rc, out, err = run(os.path.join(EXAMPLES, "word_count.flow"))
expect("word count: at-least-once sink, no event time", rc == 0 and "delivery: at least once" in out and
       "event time" not in out and "on error" not in out, err or out)

# Joins: one node with two inputs, each hash-partitioned by its own side's key; a join read by a
# sink directly gets a flatten step.
rc, out, err = run(os.path.join(EXAMPLES, "order_payment_join.flow"))
expect("join: node", rc == 0 and "join interval orders with payments on 1 key" in out, err or out)
expect("join: inputs hashed by their keys",
       "left, hash by orders.order_id" in out and "right, hash by payments.order_id" in out, out)
rc, out, err = run(os.path.join(EXAMPLES, "ad_click_through.flow"), "--format", "dot")
# The join reads two windows: a second key-by, one more topic.
expect("join dot: edges labelled", rc == 0 and
       'label="left, hash by shown.ad\\lwith --instance: through '
       '__flow_repartition_<job id>.sink1.join"' in out and
       'label="right, hash by clicked.ad\\lwith --instance: through '
       '__flow_repartition_<job id>.sink1.join"' in out, err or out)
rc, out, err = run(os.path.join(EXAMPLES, "sessionize.flow"))
expect("session window node", rc == 0 and "window-aggregate session keyed" in out, err or out)

# As instances (--instance, docs/deploy.md): a keyed window reads its input through the topic
# `__flow_repartition_<job id>.<stream>.window`, which splits the plan into two stages; a stateless
# plan is one stage; a join reads both sides through one topic, a key-by behind another one's
# window one more topic; sources other than Kafka are refused, as the runtime does.
rc, out, err = run(os.path.join(EXAMPLES, "kafka_exactly_once.flow"))
tail = out[out.find("as instances"):]
expect("instances: two stages", rc == 0 and tail.startswith(
    "as instances (--instance, docs/deploy.md): 2 stages, 1 repartition topic"), err or out)
expect("instances: stage 1 writes the topic",
       "  stage 1: #0 source, #1 chain (reads the sources' partitions)\n"
       "    writes __flow_repartition_<job id>.sink1.window, hash by url (#2), read by stage 2 "
       "(#3 sink1.window)\n" in tail, tail)
expect("instances: stage 2 reads it", "  stage 2: #3 window-aggregate, #4 chain, #5 sink\n" in tail,
       tail)
rc, out, err = run(os.path.join(EXAMPLES, "kafka_exactly_once.flow"), "--format", "dot")
expect("instances: dot edge names the topic", rc == 0 and
       "hash by url\\lwith --instance: through __flow_repartition_<job id>.sink1.window" in out,
       err or out)
rc, out, err = run(os.path.join(EXAMPLES, "kafka_avro.flow"))
expect("instances: a stateless plan is one stage", rc == 0 and
       "as instances (--instance, docs/deploy.md): one stage, no repartition topic" in out, err or out)
# Only Kafka sources share their input between instances.
rc, out, err = run(os.path.join(EXAMPLES, "clicks_per_minute.flow"))
expect("instances: a file source is refused", rc == 0 and
       "  refused: #0 source `file`: every instance would read the whole input" in out, err or out)
rc, out, err = run(os.path.join(EXAMPLES, "order_payment_join.flow"))
expect("instances: a join of file sources is refused for its sources only", rc == 0 and
       "  refused: #1 source `file`" in out and "#2 join:" not in out, err or out)
rc, out, err = run(os.path.join(EXAMPLES, "nexmark_q5_hot_items.flow"))
expect("instances: behind a window only the generator source is refused", rc == 0 and
       "  refused: #0 source `nexmark`" in out and "window-aggregate:" not in out, err or out)
# Two key-bys in a row: the second one is one more topic, written by the stage of the first
# window and read by a third stage.
twice = script("twice.flow",
    "schema Rec { key: string, value: int, et: timestamp }\n"
    "stream counts = from kafka(topic: \"in\", brokers: \"b:9092\") format json as Rec\n"
    "  event time et watermark 1s\n"
    "  | key by key | window tumbling 10s | aggregate count() as n\n"
    "counts | key by n | window tumbling 10s | aggregate count() as keys\n"
    "  | into kafka(topic: \"out\", brokers: \"b:9092\") format json exactly_once\n")
rc, out, err = run(twice)
tail = out[out.find("as instances"):]
expect("instances: a second key-by is a third stage", rc == 0 and tail.startswith(
    "as instances (--instance, docs/deploy.md): 3 stages, 2 repartition topics") and
    "  stage 2: #2 window-aggregate\n"
    "    writes __flow_repartition_<job id>.sink1.window, hash by n (#3), read by stage 3 "
    "(#4 sink1.window)\n" in tail and "refused" not in tail, err or out)
# A join of two windows: each window's stage writes its side into the join's topic.
rc, out, err = run(os.path.join(os.path.dirname(EXAMPLES), "bench", "kafka",
                                "window_join_exactly_once.flow"))
tail = out[out.find("as instances"):]
join_topic = ("    writes __flow_repartition_<job id>.sink1.join, hash by sums.key (left), "
              "evens.key (right), read by stage 4 (#7 sink1.join)\n")
expect("instances: both windows of a join write its topic", rc == 0 and tail.startswith(
    "as instances (--instance, docs/deploy.md): 4 stages, 3 repartition topics") and
    "  stage 2: #2 window-aggregate\n" + join_topic + "  stage 3: #6 window-aggregate\n" +
    join_topic + "  stage 4: #7 join" in tail, err or out)

small = script("small.flow",
    "schema Click { user: string, url: string, bytes: int, ts: timestamp }\n"  # 1
    "stream clicks = from file(path: \"c.jsonl\") format json as Click\n"  # 2
    "  event time ts watermark 2s\n"  # 3
    "stream per_minute = clicks\n"  # 4
    "  | where bytes > 0\n"  # 5
    "  | select user, bytes * 2 as doubled\n"  # 6
    "  | key by user\n"  # 7
    "  | window tumbling 1m\n"  # 8
    "  | aggregate sum(doubled) as total\n"  # 9
    "per_minute | into stdout format json\n")  # 10

# Default passes: where and select are one chain node with two steps, in order.
rc, out, err = run(small)
expect("small: exit", rc == 0, err)
kinds = [t.split()[1] for t in titles(out)]
expect("small: nodes in order", kinds == ["source", "chain", "key-by", "window-aggregate", "sink"],
       out)
step1 = out.find("step 1: where bytes > 0 (line 5)")
step2 = out.find("step 2: select user, bytes * 2 as doubled (line 6)")
expect("small: fused chain steps in order", 0 <= step1 < step2, out)
expect("small: keyed window input is hashed", "hash by user" in out, out)
expect("small: source line", "stream: clicks, line 2" in out, out)
expect("small: projection", "decodes {bytes, ts, user}" in out, out)
expect("small: chain output type", "output: {user: string, doubled: int}" in out, out)

# A global aggregate under --instance: every record goes to the topic's one partition.
total = script(
    "total.flow",
    "schema Click { user: string, bytes: int, ts: timestamp }\n"
    "stream clicks = from kafka(topic: \"c\", brokers: \"b:9092\") format json as Click\n"
    "  event time ts watermark 2s\n"
    "stream total = clicks | window tumbling 1m | aggregate sum(bytes) as total\n"
    "total | into stdout format json\n")
rc, out, err = run(total)
expect("instances: a global aggregate", rc == 0 and
       "    writes __flow_repartition_<job id>.total.window, all to one partition (a global "
       "aggregate), read by stage 2 (#1 total.window)\n" in out, err or out)

# A join of two Kafka streams under --instance: both sides write one topic, which the join
# reads in stage 2.
join = script(
    "join.flow",
    "schema Order { id: string, amount: int, ts: timestamp }\n"
    "schema Payment { order_id: string, paid: int, ts: timestamp }\n"
    "stream orders = from kafka(topic: \"o\", brokers: \"b:9092\") format json as Order\n"
    "  event time ts watermark 2s\n"
    "stream payments = from kafka(topic: \"p\", brokers: \"b:9092\") format json\n"
    "  as Payment event time ts watermark 2s\n"
    "stream matched = orders | join payments on orders.id == payments.order_id within 10m\n"
    "  | select orders.id, amount, paid\n"
    "matched | into stdout format json\n")
rc, out, err = run(join)
tail = out[out.find("as instances"):]
expect("instances: a join reads one topic", rc == 0 and tail.startswith(
    "as instances (--instance, docs/deploy.md): 2 stages, 1 repartition topic") and
    "  stage 1: #0 source, #1 source (reads the sources' partitions)\n"
    "    writes __flow_repartition_<job id>.matched.join, hash by orders.id (left), "
    "payments.order_id (right), read by stage 2 (#2 matched.join)\n" in tail and
    "  stage 2: #2 join, #3 chain, #4 sink\n" in tail, err or out)

# Without the chain pass each step is its own node.
rc, out, err = run(small, "--no-pass", "chain")
kinds = [t.split()[1] for t in titles(out)]
expect("no chain: nodes", rc == 0 and kinds ==
       ["source", "chain", "chain", "key-by", "window-aggregate", "sink"], out + err)
expect("no chain: one step each", out.count("step 1:") == 2 and "step 2:" not in out, out)
expect("no chain: where before select",
       0 <= out.find("step 1: where") < out.find("step 1: select"), out)
header = out.splitlines()[0] if out else ""
expect("no chain: header lists the passes left",
       "(passes: " in header and "project" in header and "chain" not in header, out)

# Hostile names: quotes, backslashes, braces and angle brackets, a DOT escape (\l, \N) and
# non-ASCII text stay one valid label each, and Graphviz reads them back as written.
path_literal = '"in \\"x\\" \\\\N\\\\l {a|b} <c> \\u{e9}.jsonl"'
out_literal = '"out\\\\\\"\\n/"'
hostile = script(
    "hostile.flow",
    "schema Line { text: string }\n"
    f"from file(path: {path_literal}) format raw as Line\n"
    f"  | into file(path: {out_literal}) format json\n")
rc, out, err = run(hostile, "--format", "dot")
expect("hostile: dot", rc == 0, err)
drc, svg, derr = dot(out, "svg")
expect("hostile: dot -Tsvg", drc == 0 and "<svg" in svg, derr)
drc, js, derr = dot(out, "json")
labels = [shown(o.get("label", "")) for o in json.loads(js).get("objects", [])] if drc == 0 else []
expect("hostile: label keeps the source path", any(f"file(path: {path_literal})" in l for l in labels),
       labels)
expect("hostile: label keeps the sink path", any(f"file(path: {out_literal})" in l for l in labels),
       labels)
expect("hostile: two nodes", len(labels) == 2, labels)

# Wire names: record types show a field's name in the data where it differs, in the
# schema's spelling; a field selected without `as` keeps it, a computed one has none; the
# quotes and backslashes stay a valid DOT label.
wired = script(
    "wired.flow",
    'schema Geo { "city name" as city: string }\n'
    'schema E { "the-geo" as geo: Geo, "a\\"b\\\\" as ab: int, n: int }\n'
    'from file(path: "e.jsonl") format json as E\n'
    '  | select geo.city, ab, n * 2 as n2 | into stdout\n')
rc, out, err = run(wired, "--no-pass", "chain")
expect("wire names: output type",
       rc == 0 and 'output: {"city name" as city: string, "a\\"b\\\\" as ab: int, n2: int}' in out,
       err or out)
rc, out, err = run(wired, "--format", "dot")
drc, _, derr = dot(out, "json") if rc == 0 else (1, "", err)
expect("wire names: dot", drc == 0, derr)

# SVG: rendered by dot when installed; a clear usage error when it is not on PATH.
rc, out, err = run(small, "--format", "svg")
expect("svg", rc == 0 and "<svg" in out, err)
empty = os.path.join(TMP.name, "empty-path")
os.mkdir(empty)
rc, out, err = run(small, "--format", "svg", env={"PATH": empty})
expect("svg without dot", rc == 2 and "Graphviz `dot`" in err and out == "", err)

# Usage errors.
rc, _, err = run(small, "--format", "png")
expect("unknown format", rc == 2 and "unknown format `png`" in err, err)
rc, _, err = run(small, "--no-pass", "fold")
expect("unknown pass", rc == 2 and "unknown pass `fold`" in err, err)
rc, _, err = run()
expect("no file", rc == 2 and "needs a file" in err, err)
rc, _, err = run(os.path.join(TMP.name, "missing.flow"))
expect("missing file", rc == 1 and "missing.flow" in err, err)

for f in failures:
    print("FAIL", f)
print(f"explain_test: {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
