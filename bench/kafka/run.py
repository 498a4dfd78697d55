#!/usr/bin/env python3
"""bench/kafka/run.py: Kafka -> Kafka through a real broker (issue #8, item 4).

Systems, all reading the same preloaded input topic and writing a fresh output topic per run:
  raw     kafka_raw_copier: one librdkafka consumer + producer in plain C++ (the limit;
          at-least-once at best: it stores no offsets)
  alo     bench/kafka/copy_at_least_once.flow (checkpoints every 1 s, sink flushed per checkpoint)
  eo      bench/kafka/copy_exactly_once.flow (checkpoints every 1 s, one Kafka transaction each)
  window  bench/kafka/window_count.flow: key by, tumbling 10 s event-time window, count + sum
(--checkpoint-interval-ms changes the Flow jobs' 1 s.)

Starts its OWN broker (scripts/kafka with FLOW_KAFKA_PORT=--port, default 19492) and stops it at
the end; never touches the broker on 9092.

Correctness is checked on every run, before its time counts: the copiers' output read with
read_committed must hold exactly the input's records (count, distinct ids, and the sum of the
payloads' FNV-1a-64 equal to what the producer sent); the window job's rows must equal a
reference computed here from the record formula. A failed check is reported and exits 1.

Throughput = input records / (arrival of the last output record at a read_committed consumer -
start of the process), so job start-up counts; CPU = user + sys of the process (wait4), records
per CPU second. Latency (raw, alo, eo): a separate run where the producer sends --rate records/s
for --latency-seconds, stamping each record with its send time; a read_committed consumer takes
arrival - stamp; p50/p99 over records sent after the first --warmup-ms.

  bench/kafka/run.py                       # full: 2M records, 5 runs, latency at 50k rec/s
  bench/kafka/run.py --smoke               # tiny N, one run, correctness only (CTest)
  bench/kafka/run.py --systems raw,eo --records 1000000 --runs 3
  bench/kafka/run.py --systems raw,eo --baseline eo=OLD_BINARY --interleave   # before/after

--baseline SYSTEM=BINARY adds the system "SYSTEM-base": the same job, run from a binary built
earlier (e.g. from an older commit), so a change is measured against its baseline under the same
broker and machine load; --interleave runs the systems round-robin (run 1 of each, then run 2
of each, ...) so load that drifts during the benchmark hits every system alike.
Exit codes: 0 all checks passed, 1 a check or a run failed, 2 bad usage or set-up failure.
bench/kafka/scale_out.py (the copier as several instances of one job) imports this module.
"""

import argparse
import datetime
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
HERE = Path(__file__).resolve().parent
SYSTEMS = ["raw", "alo", "eo", "window"]
SCRIPTS = {"alo": "copy_at_least_once.flow", "eo": "copy_exactly_once.flow",
           "window": "window_count.flow",
           "window-eo": "window_exactly_once.flow",  # scale_out.py --job window only
           "window2-eo": "window2_exactly_once.flow",  # scale_out.py --job window2 only
           "windowjoin-eo": "window_join_exactly_once.flow",  # scale_out.py --job windowjoin only
           "running-eo": "running_exactly_once.flow",  # scale_out.py --job running only
           "join-eo": "join_exactly_once.flow"}  # scale_out.py --job join only
LABELS = {"raw": "raw librdkafka copier (limit)", "alo": "Flow copier, at_least_once",
          "eo": "Flow copier, exactly_once", "window": "Flow windowed count (10 s tumbling)"}
# Event time of record 0 (kafka_bench_client produce --et-base): a whole hour a day before the
# run. Near now on purpose: the Flow sinks stamp output records with their event time, and the
# broker's time retention (7 days) deletes older ones at its next check (every 5 min, the first
# 30 s after the broker starts), read or not: a fixed date that aged lost output rows at random.
# A day back keeps the output's stamps in the past (brokers may refuse stamps over an hour ahead).
ET_BASE = (int(time.time()) // 3600 - 24) * 3600 * 1000
WINDOW_MS = 10000


def map_difference(got, want):
    """How the dict `got` differs from `want`: counts and examples of each kind."""
    missing = [k for k in want if k not in got]
    extra = [k for k in got if k not in want]
    wrong = [k for k in want if k in got and got[k] != want[k]]
    return (f"{len(got)} rows vs {len(want)} expected: {len(missing)} missing "
            f"(e.g. {missing[:2]}), {len(extra)} unexpected (e.g. {extra[:2]}), "
            f"{len(wrong)} wrong (e.g. {[(k, got[k], want[k]) for k in wrong[:2]]})")


def kind(system):
    """The job a system runs: "eo-base" (a --baseline binary) runs what "eo" runs."""
    return system[:-len("-base")] if system.endswith("-base") else system


def label(system):
    return LABELS[kind(system)] + (", baseline binary" if system.endswith("-base") else "")


def log(msg):
    print(f"[kafka-bench] {msg}", file=sys.stderr, flush=True)


class SetupError(Exception):
    pass


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--smoke", action="store_true",
                   help="tiny run: 20,000 records, 1 run, no latency, no report file")
    p.add_argument("--systems", default=",".join(SYSTEMS), help=f"comma list of {SYSTEMS}")
    p.add_argument("--records", type=int, default=2_000_000, help="input records per throughput run")
    p.add_argument("--record-bytes", type=int, default=100, help="approximate payload size")
    p.add_argument("--keys", type=int, default=100, help="distinct keys (window job)")
    p.add_argument("--partitions", type=int, default=4, help="partitions of input and output topics")
    p.add_argument("--runs", type=int, default=5, help="throughput runs per system (median)")
    p.add_argument("--parallelism", type=int, default=1, help="--parallelism of the Flow jobs")
    p.add_argument("--rate", type=int, default=50_000, help="records/s of the latency runs")
    p.add_argument("--latency-seconds", type=int, default=10)
    p.add_argument("--latency-runs", type=int, default=3)
    p.add_argument("--warmup-ms", type=int, default=1000,
                   help="latency ignores records sent in the first W ms")
    p.add_argument("--no-latency", action="store_true")
    p.add_argument("--port", type=int, default=19492, help="port of the benchmark's own broker")
    p.add_argument("--keep-broker", action="store_true", help="leave the broker running at the end")
    p.add_argument("--build-dir", default=str(ROOT / "build-bench"))
    p.add_argument("--flowc", default=None, help="default: <build-dir>/bin/flowc")
    p.add_argument("--client", default=None, help="kafka_bench_client (default: build it)")
    p.add_argument("--copier", default=None, help="kafka_raw_copier (default: build it)")
    p.add_argument("--workdir", default=str(ROOT / "bench" / "work" / "kafka"))
    p.add_argument("--out", default=str(ROOT / "bench" / "results"),
                   help="directory for <date>-kafka.md/.json")
    p.add_argument("--timeout", type=int, default=600, help="seconds one run may take")
    p.add_argument("--baseline", action="append", default=[], metavar="SYSTEM=BINARY",
                   help="also run SYSTEM from this prebuilt job binary, as SYSTEM-base")
    p.add_argument("--checkpoint-interval-ms", type=int, default=1000,
                   help="checkpoint interval of the Flow jobs (default 1000)")
    p.add_argument("--interleave", action="store_true",
                   help="run the systems round-robin instead of one after the other")
    args = p.parse_args(argv)
    if args.smoke:
        args.records = min(args.records, 20_000)
        args.runs = 1
        args.no_latency = True
        args.timeout = min(args.timeout, 120)
    if args.port == 9092:
        p.error("--port 9092 is the shared broker; the benchmark needs its own")
    for s in args.systems.split(","):
        if s not in SYSTEMS:
            p.error(f"unknown system {s} (known: {', '.join(SYSTEMS)})")
    args.baselines = {}
    for b in args.baseline:
        system, _, binary = b.partition("=")
        if system not in SCRIPTS or not binary:
            p.error(f"--baseline {b}: expected SYSTEM=BINARY with SYSTEM one of {', '.join(SCRIPTS)}")
        if not os.access(binary, os.X_OK):
            p.error(f"--baseline {b}: {binary} is not an executable file")
        args.baselines[system + "-base"] = os.path.abspath(binary)
    if args.checkpoint_interval_ms < 1:
        p.error("--checkpoint-interval-ms must be >= 1")
    if args.records < 1 or args.runs < 1 or args.partitions < 1 or args.keys < 1:
        p.error("--records, --runs, --partitions and --keys must be >= 1")
    return args


class Bench:
    def __init__(self, args):
        self.args = args
        self.brokers = f"127.0.0.1:{args.port}"
        self.work = Path(args.workdir)
        self.work.mkdir(parents=True, exist_ok=True)
        self.started_broker = False
        self.seq = 0
        self.start_race = False
        self.tag = f"{os.getpid()}-{int(time.time())}"

    # --- binaries ----------------------------------------------------------------------------
    def build(self, systems):
        a = self.args
        build_dir = Path(a.build_dir)
        targets = []
        if not a.client:
            targets.append("kafka_bench_client")
        if not a.copier and "raw" in systems:
            targets.append("kafka_raw_copier")
        if not a.flowc and any(s != "raw" for s in systems):
            targets.append("flowc")
        if targets:
            log(f"building {' '.join(targets)} in {build_dir}")
            r = subprocess.run(["cmake", "--build", str(build_dir), "--target", *targets, "-j2"],
                               capture_output=True, text=True)
            if r.returncode != 0:
                raise SetupError(f"build failed:\n{r.stdout[-3000:]}{r.stderr[-2000:]}")
        self.client = a.client or str(build_dir / "bin" / "kafka_bench_client")
        self.copier = a.copier or str(build_dir / "bin" / "kafka_raw_copier")
        flowc = self.flowc = a.flowc or str(build_dir / "bin" / "flowc")
        self.jobs = {}
        # A job is rebuilt when older than its script, flowc or a runtime library of flowc's
        # build (jobs link those libraries; one built against other headers would crash).
        libs = list((Path(flowc).resolve().parent.parent / "lib").glob("libflow_rt_*.a"))
        newest_dep = max([Path(flowc).stat().st_mtime] + [lib.stat().st_mtime for lib in libs])
        src_root = Path(flowc).resolve().parent.parent / "CMakeCache.txt"
        headers = ROOT / "runtime" / "include"
        if libs and src_root.exists() and str(ROOT) in src_root.read_text(errors="replace"):
            newest_lib = max(lib.stat().st_mtime for lib in libs)
            newer = [h for h in headers.rglob("*.h") if h.stat().st_mtime > newest_lib]
            if newer:
                log(f"warning: {len(newer)} runtime headers (e.g. {newer[0].relative_to(ROOT)}) "
                    f"are newer than the runtime libraries of {flowc}; jobs built now may not "
                    f"match them (rebuild the flowc target first)")
        for s, binary in a.baselines.items():
            self.jobs[s] = binary
        for s in systems:
            if s == "raw" or s in a.baselines:
                continue
            src = HERE / SCRIPTS[s]
            binary = self.work / src.stem
            stale = (not binary.exists() or binary.stat().st_mtime < src.stat().st_mtime
                     or binary.stat().st_mtime < newest_dep)
            if stale:
                log(f"flowc build {src.name}")
                r = subprocess.run([flowc, "build", str(src), "-o", str(binary)],
                                   capture_output=True, text=True)
                if r.returncode != 0:
                    raise SetupError(f"flowc build {src} failed:\n{r.stderr[-3000:]}")
            self.jobs[s] = str(binary)

    # --- broker ------------------------------------------------------------------------------
    def kafka(self, cmd):
        env = dict(os.environ, FLOW_KAFKA_PORT=str(self.args.port))
        return subprocess.run([str(ROOT / "scripts" / "kafka"), cmd], env=env,
                              capture_output=True, text=True)

    def start_broker(self):
        r = self.kafka("start")
        if r.returncode != 0:
            raise SetupError(f"scripts/kafka start on port {self.args.port} failed:\n{r.stderr}")
        self.started_broker = "already running" not in r.stdout
        log(r.stdout.strip())

    def stop_broker(self):
        if self.started_broker and not self.args.keep_broker:
            r = self.kafka("stop")
            log(r.stdout.strip() or r.stderr.strip())

    # --- client ------------------------------------------------------------------------------
    def client_cmd(self, cmd, **flags):
        if cmd == "produce":
            flags.setdefault("et_base", ET_BASE)
        argv = [self.client, cmd, "--brokers", self.brokers]
        for k, v in flags.items():
            argv += ["--" + k.replace("_", "-"), str(v)]
        return argv

    def client_json(self, cmd, **flags):
        r = subprocess.run(self.client_cmd(cmd, **flags), capture_output=True, text=True)
        if r.returncode != 0:
            raise SetupError(f"kafka_bench_client {cmd} failed (exit {r.returncode}): {r.stderr.strip()}")
        return json.loads(r.stdout)

    def new_topics(self, *names):
        self.seq += 1
        topics = [f"bench-{n}-{self.tag}-{self.seq}" for n in names]
        self.client_json("create", topics=",".join(topics), partitions=self.args.partitions)
        return topics

    def delete_topics(self, *topics):
        try:
            self.client_json("delete", topics=",".join(topics))
        except SetupError as e:
            log(f"note: {e}")

    # --- one system run ----------------------------------------------------------------------
    def system_argv(self, system, src, dst, records):
        if system == "raw":
            return [self.copier, "--brokers", self.brokers, "--from", src, "--to", dst,
                    "--records", str(records)]
        self.seq += 1
        run_id = f"{system}-{self.tag}-{self.seq}"
        return self.flow_job_argv(self.jobs[system], src, dst, run_id, self.args.parallelism)

    def flow_job_argv(self, binary, src, dst, run_id, parallelism, state_name=None):
        """The command line of one Flow job process (bench/kafka/scale_out.py runs several
        processes of one job: same run_id, each with its own state_name)."""
        state = self.work / "state" / (state_name or run_id)
        return [binary, "--set", f"brokers={self.brokers}", "--set", f"input={src}",
                "--set", f"output={dst}", "--set", f"group=flow-bench-{run_id}",
                "--parallelism", str(parallelism), "--checkpoint-interval", f"{self.args.checkpoint_interval_ms}ms",
                "--state-dir", str(state), "--job-id", run_id, "--progress-interval", "0"]

    def run_system(self, system, src, dst, consume_flags, records_for_raw, producer_flags=None,
                   settle_s=0.0):
        """Starts the measuring consumer, then the system (then the producer, if any) and waits
        for the consumer. A system that dies (exit code not 0) ends the wait at once; one that
        exits with 0 gets 30 s more for its output to arrive. Returns (consumer report, process
        CPU seconds, start time, system stderr tail); a consumer that printed nothing gives a
        report with count -1."""
        consumer = subprocess.Popen(self.client_cmd("consume", topic=dst, **consume_flags),
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        err_file = tempfile.TemporaryFile(mode="w+")
        t0 = time.time()
        proc = subprocess.Popen(self.system_argv(system, src, dst, records_for_raw),
                                stdout=subprocess.DEVNULL, stderr=err_file)
        producer = None
        produce_at = t0 + settle_s if producer_flags is not None else None
        usage, exited_at = None, None
        deadline = t0 + self.args.timeout
        while consumer.poll() is None:
            now = time.time()
            if produce_at is not None and now >= produce_at:
                producer = subprocess.Popen(self.client_cmd("produce", topic=src, **producer_flags),
                                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                            text=True)
                produce_at = None
            if usage is None:
                pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
                if pid == proc.pid:
                    usage, exited_at = ru, now
                    proc.returncode = os.waitstatus_to_exitcode(status)
            if (proc.returncode not in (None, 0) or now > deadline
                    or (exited_at is not None and now > exited_at + 30)):
                consumer.kill()
                break
            time.sleep(0.05)
        out, cerr = consumer.communicate()
        if usage is None:
            usage = self.stop_and_reap(proc)
        produced = None
        if producer is not None:
            pout, perr = producer.communicate()
            if producer.returncode != 0:
                raise SetupError(f"kafka_bench_client produce failed: {perr.strip()}")
            produced = json.loads(pout)
        err_file.seek(0)
        err_tail = err_file.read()[-2000:]
        err_file.close()
        if out.strip():
            report = json.loads(out)
        else:
            log(f"the consumer of {dst} printed nothing: {cerr.strip()[-300:]}")
            report = {"count": -1, "checksum": "", "distinct_ids": -1, "repeated_ids": 0,
                      "other_ids": 0, "expect_us": 0}
        report["consumer_exit"] = consumer.returncode
        report["system_exit"] = proc.returncode
        # A topic created a moment ago can be unknown to the broker's metadata cache for a while;
        # Flow's connectors wait up to 3 s for it. Should a start still fail that way, it is a
        # start-up race of the harness, not a wrong result, so the caller runs that case again.
        self.start_race = (proc.returncode not in (0, None) and report["count"] <= 0
                           and "Unknown topic or partition" in err_tail)
        report["produced"] = produced
        cpu = usage.ru_utime + usage.ru_stime
        return report, cpu, t0, err_tail

    @staticmethod
    def stop_and_reap(proc):
        """SIGTERM (a Flow job stops cleanly; the raw copier has usually exited), SIGKILL after
        30 s; returns the process's rusage from wait4 and sets proc.returncode."""
        deadline = time.time() + 30
        signalled = killed = False
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid == proc.pid:
                proc.returncode = os.waitstatus_to_exitcode(status)
                return usage
            if not signalled:
                proc.send_signal(signal.SIGTERM)
                signalled = True
            elif time.time() > deadline and not killed:
                proc.kill()
                killed = True
            time.sleep(0.05)

    # --- throughput --------------------------------------------------------------------------
    def window_reference(self, records=None):
        """(key, window start ms) -> (count, sum) of the input (--records, or `records`
        records), from the record formula."""
        ref = {}
        for i in range(self.args.records if records is None else records):
            et = ET_BASE + i
            k = (f"k{i % self.args.keys}", et - et % WINDOW_MS)
            c, s = ref.get(k, (0, 0))
            ref[k] = (c + 1, s + (i * 7919) % 1000)
        return ref

    @staticmethod
    def parse_ms(text):
        dt = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
        return round(dt.timestamp() * 1000)

    def check_window(self, dump_path, ref):
        return self.check_window_rows(Path(dump_path).read_text().splitlines(), ref)

    def check_window_rows(self, lines, ref):
        """Problems of the window job's output rows (JSON lines) against `ref`."""
        got = {}
        problems = []
        for n, line in enumerate(lines):
            try:
                row = json.loads(line)
                key = (row["key"], self.parse_ms(row["window_start"]))
                if self.parse_ms(row["window_end"]) - key[1] != WINDOW_MS:
                    problems.append(f"row {n}: window of {row['window_start']}..{row['window_end']}")
                if key in got:
                    problems.append(f"row {n}: window {key} twice")
                got[key] = (row["n"], row["total"])
            except (ValueError, KeyError, TypeError) as e:
                problems.append(f"row {n}: cannot read {line[:120]!r}: {e}")
        if got != ref:
            problems.append(map_difference(got, ref))
        return problems

    def expected_payload(self, i, ts):
        """The payload kafka_bench_client writes for record i with stamp ts, rebuilt here from
        the record formula (kafka_bench_util.h) as an independent reference."""
        key, value, et = ("end", 0, None) if i < 0 else (f"k{i % self.args.keys}", (i * 7919) % 1000,
                                                         ET_BASE + i)
        if i < 0:
            et = ET_BASE + self.args.records + 1000000000
        head = f'{{"id":{i},"key":"{key}","value":{value},"et":{et},"ts":{ts},"pad":"'
        return head + "x" * max(1, self.args.record_bytes - len(head) - 2) + '"}'

    def check_copy(self, dump_path):
        """Every output line must be exactly the payload of one input record, each id once."""
        problems, seen, sentinels = [], set(), 0
        for n, line in enumerate(Path(dump_path).read_text().splitlines()):
            try:
                row = json.loads(line)
                i, ts = row["id"], row["ts"]
            except (ValueError, KeyError, TypeError) as e:
                problems.append(f"output row {n}: cannot read {line[:120]!r}: {e}")
                continue
            if line != self.expected_payload(i, ts):
                problems.append(f"output row {n}: {line[:120]!r} is not input record {i}")
            if i == -1:
                sentinels += 1
            elif i in seen or not 0 <= i < self.args.records:
                problems.append(f"output row {n}: id {i} repeated or unknown")
            seen.add(i)
            if len(problems) > 5:
                break
        if len(seen - {-1}) != self.args.records or sentinels != self.args.partitions:
            problems.append(f"output has {len(seen - {-1})} of {self.args.records} ids and "
                            f"{sentinels} of {self.args.partitions} end records")
        return problems

    @staticmethod
    def copy_report_problems(report, preload, ids):
        """A copy's read_committed output against its input: the same count, every id in
        [0, ids) once, and the producer's payload checksum."""
        problems = []
        if report["count"] != preload["records"]:
            problems.append(f"{report['count']} records, expected {preload['records']}")
        if report["distinct_ids"] != ids or report["repeated_ids"] or report["other_ids"]:
            problems.append(f"ids: {report['distinct_ids']} distinct of {ids}, "
                            f"{report['repeated_ids']} repeated, {report['other_ids']} unknown")
        if report["checksum"] != preload["checksum"]:
            problems.append(f"checksum {report['checksum']} != input {preload['checksum']}")
        return problems

    def throughput_run(self, system, src, preload, ref):
        (dst,) = self.new_topics(f"out-{system}")
        n = self.args.records
        dump = self.work / f"output-{self.tag}.jsonl"
        if kind(system) == "window":
            flags = dict(expect=len(ref), timeout_s=self.args.timeout, linger_ms=1500, dump=dump)
        else:
            flags = dict(expect=preload["records"], timeout_s=self.args.timeout, linger_ms=1500,
                         ids=n)
            if self.args.smoke:  # small enough to compare every payload here
                flags["dump"] = dump
        report, cpu, t0, err = self.run_system(system, src, dst, flags, preload["records"])
        problems = []
        if kind(system) == "window":
            if report["consumer_exit"] == 0:
                problems = self.check_window(dump, ref)
            dump.unlink(missing_ok=True)
        else:
            problems = self.copy_report_problems(report, preload, n)
            if self.args.smoke and report["consumer_exit"] == 0:
                problems += self.check_copy(dump)
            dump.unlink(missing_ok=True)
        if report["consumer_exit"] != 0:
            problems.append(f"output incomplete after {self.args.timeout} s "
                            f"({report['count']} records)")
        if report["system_exit"] not in (0, None):
            problems.append(f"exit code {report['system_exit']} (negative: signal): "
                            f"{err.strip()[-600:]}")
        self.delete_topics(dst)
        if problems:
            return None, problems
        wall = report["expect_us"] / 1e6 - t0
        records = preload["records"]
        return {"wall_s": wall, "cpu_s": cpu, "rate": records / wall,
                "rate_per_cpu": records / cpu if cpu > 0 else float("nan")}, []

    # --- latency -----------------------------------------------------------------------------
    def latency_run(self, system):
        src, dst = self.new_topics("lat-in", "lat-out")
        a = self.args
        n = a.rate * a.latency_seconds
        flags = dict(expect=n, timeout_s=a.timeout, linger_ms=500, ids=n, warmup_ms=a.warmup_ms)
        # Settle: the system must be reading (Flow: job started, transactions initialised) before
        # the first stamp, or start-up would count as latency.
        report, _, _, err = self.run_system(system, src, dst, flags, n,
                                            producer_flags=dict(records=n, rate=a.rate,
                                                                record_bytes=a.record_bytes),
                                            settle_s=4.0)
        self.delete_topics(src, dst)
        problems = []
        if report["count"] != n or report["distinct_ids"] != n:
            problems.append(f"latency run: {report['count']} records ({report['distinct_ids']} "
                            f"distinct) of {n}")
        if report["system_exit"] not in (0, None):
            problems.append(f"latency run: exit code {report['system_exit']} (negative: signal): "
                            f"{err.strip()[-600:]}")
        return report, problems


def fmt_rate(x):
    return f"{x / 1e6:.2f}M" if x >= 1e6 else f"{x / 1e3:.0f}K"


def markdown(meta, results, latency, failures):
    lines = [f"# Kafka benchmark {meta['date']}", "",
             f"{meta['records']:,} input records of ~{meta['record_bytes']} bytes in "
             f"{meta['partitions']} partitions, own broker on 127.0.0.1:{meta['port']}, "
             f"Flow parallelism {meta['parallelism']}, checkpoints every "
             f"{meta.get('checkpoint_interval_ms', 1000) / 1000:g} s in the Flow jobs; "
             f"medians of {meta['runs']} runs"
             f"{' (systems interleaved run by run)' if meta.get('interleave') else ''}. "
             f"Load average before/after: "
             f"{meta['load_before']} / {meta['load_after']}. {meta['cpus']} CPUs.", "",
             "| system | records/s (wall) | records per CPU-second | wall s | CPU s | vs raw (wall) "
             "| vs raw (per CPU) | runs |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    raw = results.get("raw")
    for s, cell in results.items():
        if cell is None:
            lines.append(f"| {label(s)} | failed | | | | | | |")
            continue
        ratio = ratio_cpu = ""
        if raw and s != "raw":
            ratio = f"{cell['rate'] / raw['rate']:.2f}"
            ratio_cpu = f"{cell['rate_per_cpu'] / raw['rate_per_cpu']:.2f}"
        lines.append(f"| {label(s)} | {fmt_rate(cell['rate'])} | {fmt_rate(cell['rate_per_cpu'])} "
                     f"| {cell['wall_s']:.2f} | {cell['cpu_s']:.2f} | {ratio} | {ratio_cpu} "
                     f"| {cell['runs']} |")
    if latency:
        lines += ["", f"End-to-end latency at {meta['rate']:,} records/s for "
                  f"{meta['latency_seconds']} s (send stamp to arrival at a read_committed "
                  f"consumer; first {meta['warmup_ms']} ms excluded; medians of "
                  f"{meta['latency_runs']} runs):", "",
                  "| system | p50 ms | p99 ms | max ms |", "|---|---:|---:|---:|"]
        for s, cell in latency.items():
            lines.append(f"| {label(s)} | {cell['p50_ms']:.1f} | {cell['p99_ms']:.1f} "
                         f"| {cell['max_ms']:.1f} |")
    if failures:
        lines += ["", "Failures:", ""] + [f"- {f}" for f in failures]
    return "\n".join(lines) + "\n"


def draw_chart(path, results, latency):
    """PNG of the medians via bench/.venv's matplotlib (bench/run creates that venv); skipped
    with a note when it is missing."""
    python = ROOT / "bench" / ".venv" / "bin" / "python"
    if not python.exists():
        log("chart skipped: no bench/.venv (bench/run creates it with matplotlib)")
        return None
    spec = {"throughput": {label(s): c["rate"] for s, c in results.items() if c},
            "latency": {label(s): [c["p50_ms"], c["p99_ms"]] for s, c in latency.items()}}
    r = subprocess.run([str(python), str(HERE / "chart.py"), str(path)], input=json.dumps(spec),
                       text=True, capture_output=True)
    if r.returncode != 0:
        log(f"chart failed: {r.stderr.strip()[-300:]}")
        return None
    return path


def load_average():
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv=None):
    args = parse_args(argv)
    systems = []
    for s in SYSTEMS:
        if s in args.systems.split(","):
            systems.append(s)
        if s + "-base" in args.baselines:
            systems.append(s + "-base")
    bench = Bench(args)
    failures = []
    results, latency, raw_runs = {}, {}, {}
    meta = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "records": args.records, "record_bytes": args.record_bytes,
            "partitions": args.partitions, "port": args.port, "parallelism": args.parallelism,
            "runs": args.runs, "rate": args.rate, "latency_seconds": args.latency_seconds,
            "latency_runs": args.latency_runs, "warmup_ms": args.warmup_ms,
            "cpus": os.cpu_count(), "load_before": load_average(),
            "interleave": args.interleave, "baselines": args.baselines,
            "checkpoint_interval_ms": args.checkpoint_interval_ms}
    try:
        bench.build(systems)
        bench.start_broker()
        (src,) = bench.new_topics("in")
        log(f"preloading {args.records:,} records into {src}")
        preload = bench.client_json("produce", topic=src, records=args.records, keys=args.keys,
                                    record_bytes=args.record_bytes, sentinels=1)
        ref = bench.window_reference() if "window" in systems else None
        if args.interleave:
            order = [(s, i) for i in range(args.runs) for s in systems]
        else:
            order = [(s, i) for s in systems for i in range(args.runs)]
        failed = set()
        for s in systems:
            raw_runs[s] = []
        for s, i in order:
            if s in failed:
                continue
            for _ in range(3):
                cell, problems = bench.throughput_run(s, src, preload, ref)
                if not bench.start_race:
                    break
                log(f"{s} run {i + 1}: the job did not find its new output topic; again")
            if problems:
                for p in problems:
                    failures.append(f"{s} run {i + 1}: {p}")
                    log(f"!!!! {s} run {i + 1}: {p}")
                failed.add(s)
                continue
            raw_runs[s].append(cell)
            log(f"{s} run {i + 1}: correct; {cell['rate']:,.0f} rec/s wall, "
                f"{cell['rate_per_cpu']:,.0f} rec/CPU-s ({cell['wall_s']:.2f} s, "
                f"CPU {cell['cpu_s']:.2f} s)")
        for s in systems:
            runs = raw_runs[s]
            if len(runs) == args.runs:
                results[s] = {k: statistics.median(r[k] for r in runs)
                              for k in ("wall_s", "cpu_s", "rate", "rate_per_cpu")}
                results[s]["runs"] = len(runs)
            else:
                results[s] = None
        if not args.no_latency:
            for s in [s for s in systems if kind(s) != "window"]:
                reps = []
                for i in range(args.latency_runs):
                    for _ in range(3):
                        report, problems = bench.latency_run(s)
                        if not bench.start_race:
                            break
                        log(f"{s} latency run {i + 1}: the job did not find its new topic; again")
                    if problems:
                        failures += [f"{s} latency run {i + 1}: {p}" for p in problems]
                        break
                    reps.append(report)
                    log(f"{s} latency run {i + 1}: p50 {report['p50_ms']:.1f} ms, p99 "
                        f"{report['p99_ms']:.1f} ms, max {report['max_ms']:.1f} ms")
                if reps:
                    latency[s] = {k: statistics.median(r[k] for r in reps)
                                  for k in ("p50_ms", "p99_ms", "max_ms")}
        bench.delete_topics(src)
    except SetupError as e:
        log(f"set-up failed: {e}")
        bench.stop_broker()
        return 2
    bench.stop_broker()
    meta["load_after"] = load_average()
    md = markdown(meta, results, latency, failures)
    print(md)
    if not args.smoke:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d-%H%M")
        (out / f"{stamp}-kafka.md").write_text(md)
        (out / f"{stamp}-kafka.json").write_text(json.dumps(
            {"meta": meta, "results": results, "runs": raw_runs, "latency": latency,
             "failures": failures}, indent=1))
        log(f"wrote {out / (stamp + '-kafka.md')}")
        if any(results.values()) and draw_chart(out / f"{stamp}-kafka.png", results, latency):
            log(f"wrote {out / (stamp + '-kafka.png')}")
    if failures:
        log(f"{len(failures)} FAILURE(S)")
        return 1
    log("all correctness checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
