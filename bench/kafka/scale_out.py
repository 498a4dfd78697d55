#!/usr/bin/env python3
"""bench/kafka/scale_out.py: the exactly-once Kafka copier, the keyed windowed count, or a join,
run as instances (--instance).

Reuses bench/kafka/run.py (its broker, load client, job builds and exactness checks) for two
measurements on its OWN broker (scripts/kafka with FLOW_KAFKA_PORT=--port, default 19692):

Scaling: bench/kafka/copy_exactly_once.flow as 1, 2, 3 instances (separate processes, one
--job-id, own --state-dir, --instance i0, i1, ...; --parallelism P each) next to one process of
the same script without --instance and --parallelism k*P, all on the same preloaded input topic
(--partitions, >= k*P). Throughput = input records / (arrival of the last output record at a
read_committed consumer - start of the first process); every run must pass run.py's exactness
check (count, distinct ids, payload checksum) before its time counts. Medians of --runs, the
configurations interleaved run by run.

--job window: bench/kafka/window_exactly_once.flow (key by, 10 s tumbling event-time window,
exactly-once Kafka sink) instead of the copier; its instances cut the key-by through a repartition
topic (--shuffle-brokers, this broker) and share one --state-root; the plain process has its own
--state-dir. The input carries --keys keys and one sentinel per partition far in the future, so
every window closes; the output must equal run.py's window reference (every key and window once,
the right count and sum), and the time counts until its last row arrived.

--job window2: bench/kafka/window2_exactly_once.flow, a window behind a window (two repartition
topics; the second one's writers report the first one's key groups): the window job's rows, and
per (count, window) how many keys had that count and the sum of their sums, both in the output;
checked against both references, computed here.

--job windowjoin: bench/kafka/window_join_exactly_once.flow, a join of two windows (three
repartition topics; the join's writers report the key groups of both windows' readers): per key
and window the window job's count and sum joined with the count and largest of the even values;
checked against a reference computed here.

--job running: bench/kafka/running_exactly_once.flow, a running aggregate (per key, after every
record, the count and sum so far; no window, so one output row per record at once; the job drops
the sentinels): per key, the rows' counts must be 1..N once each, and the steps between the sums in
count order exactly that key's values, from the record formula.

--job join: bench/kafka/join_exactly_once.flow (an interval join of the input with itself on the
record's id; both sides cross one repartition topic) as the window job is run; the output must
hold every input record exactly once with both sides' fields equal to the record formula.

Failover: --failover-instances instances copy a steady input (--rate records/s for --seconds);
--kill-after seconds into it one instance gets SIGKILL (or SIGTERM) and is not restarted. The
partitions it owned come from its log ("partitions assigned/revoked", --log-level info); for each
of them the driver takes the time the survivor logged it as assigned (reassigned) and the first
arrival of a record of that input partition (id mod partitions) in the committed output after
that (visible). Cases: SIGKILL with the default session timeout (10 s), SIGKILL with
session.timeout.ms=6000 (--kafka-properties FILE), SIGTERM. A SIGKILLed instance leaves its
open Kafka transaction behind, which holds back read_committed readers of the output partitions
it wrote until the broker aborts it (transaction.timeout.ms: about 71 s for an instance by
default, docs/deploy.md). So when the output has not resumed --stall-cap (100) seconds after the
reassignment the driver restarts the killed instance (its init_transactions aborts the
transaction) and reports the output as stalled; the whole output must still hold every input
record exactly once.

  bench/kafka/scale_out.py                  # 500k records, 3 runs; failover at 20k rec/s, 30 s
  bench/kafka/scale_out.py --job window     # the keyed job
  bench/kafka/scale_out.py --job join       # the join job
  bench/kafka/scale_out.py --job window2    # a window behind a window (two topics)
  bench/kafka/scale_out.py --job windowjoin # a join of two windows (three topics)
  bench/kafka/scale_out.py --job running    # a running aggregate (a row per record)
  bench/kafka/scale_out.py --smoke          # small, correctness only (CTest bench_kafka_scale_out_smoke)
  bench/kafka/scale_out.py --no-failover --records 1000000 --runs 5
Exit codes: 0 all checks passed, 1 a check or a run failed, 2 bad usage or set-up failure.
"""

import argparse
import collections
import datetime
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run as kb  # noqa: E402  (bench/kafka/run.py)

ROOT = kb.ROOT
log = kb.log
CASES = {"sigkill-10s": (signal.SIGKILL, None), "sigkill-6s": (signal.SIGKILL, 6000),
         "sigterm": (signal.SIGTERM, None)}


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--smoke", action="store_true", help="small and short: the CTest")
    p.add_argument("--job",
                   choices=["copier", "window", "window2", "windowjoin", "running", "join"],
                   default="copier",
                   help="the exactly-once copier, the keyed windowed count, a window behind it, "
                        "a join of two windows, a running aggregate, or the interval join")
    p.add_argument("--keys", type=int, default=100, help="distinct keys (--job window, join)")
    p.add_argument("--records", type=int, default=500_000, help="input records per scaling run")
    p.add_argument("--record-bytes", type=int, default=100)
    p.add_argument("--partitions", type=int, default=6, help="partitions of input and output")
    p.add_argument("--instances", default="1,2,3", help="instance counts of the scaling runs")
    p.add_argument("--parallelism", type=int, default=1, help="--parallelism of each instance")
    p.add_argument("--runs", type=int, default=3, help="scaling runs per configuration (median)")
    p.add_argument("--no-failover", action="store_true")
    p.add_argument("--cases", default=",".join(CASES), help=f"failover cases of {list(CASES)}")
    p.add_argument("--failover-instances", type=int, default=2)
    p.add_argument("--rate", type=int, default=20_000, help="records/s of the failover input")
    p.add_argument("--seconds", type=int, default=30, help="length of the failover input")
    p.add_argument("--kill-after", type=float, default=10.0, help="s into the failover input")
    p.add_argument("--restart-after", type=float, default=5.0,
                   help="--job window, join: s after its partitions moved to restart a SIGKILLed "
                        "instance")
    p.add_argument("--stall-cap", type=float, default=100.0,
                   help="s after the reassignment to wait for the output before restarting "
                        "the killed instance")
    p.add_argument("--checkpoint-interval-ms", type=int, default=1000)
    p.add_argument("--port", type=int, default=19692, help="port of the benchmark's own broker")
    p.add_argument("--keep-broker", action="store_true")
    p.add_argument("--build-dir", default=str(ROOT / "build-bench"))
    p.add_argument("--flowc", default=None)
    p.add_argument("--client", default=None)
    p.add_argument("--workdir", default=str(ROOT / "bench" / "work" / "kafka-scale"))
    p.add_argument("--out", default=str(ROOT / "bench" / "results"))
    p.add_argument("--timeout", type=int, default=300, help="seconds one run may take")
    a = p.parse_args(argv)
    if a.smoke:
        a.records, a.runs, a.instances = min(a.records, 20_000), 1, "1,2"
        a.cases, a.rate, a.seconds, a.kill_after = "sigkill-6s,sigterm", 5000, 10, 4.0
        a.stall_cap, a.timeout = min(a.stall_cap, 3.0), min(a.timeout, 90)
    if a.port == 9092:
        p.error("--port 9092 is the shared broker; the benchmark needs its own")
    try:
        a.counts = [int(x) for x in a.instances.split(",")]
    except ValueError:
        p.error(f"--instances {a.instances}: expected a comma list of counts")
    a.case_list = a.cases.split(",") if not a.no_failover else []
    for c in a.case_list:
        if c not in CASES:
            p.error(f"unknown case {c} (known: {', '.join(CASES)})")
    if min(a.counts) < 1 or a.records < 1 or a.runs < 1 or a.parallelism < 1:
        p.error("--instances, --records, --runs and --parallelism must be >= 1")
    if max(a.counts + [a.failover_instances]) * a.parallelism > a.partitions:
        p.error(f"{max(a.counts + [a.failover_instances])} instances x --parallelism "
                f"{a.parallelism} source subtasks exceed --partitions {a.partitions}: "
                f"some would read nothing")
    if a.failover_instances < 2:
        p.error("--failover-instances must be >= 2 (one is stopped)")
    # What run.py's Bench reads of its arguments.
    a.system = {"copier": "eo", "window": "window-eo", "window2": "window2-eo",
                "windowjoin": "windowjoin-eo", "running": "running-eo", "join": "join-eo"}[a.job]
    a.copier, a.baselines, a.systems = None, {}, a.system
    return a


def log_rows(path):
    """(epoch s, row) of each JSON log line (--log-format json) of one process."""
    out = []
    for line in Path(path).read_text(errors="replace").splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if "ts" in row:
            ts = datetime.datetime.fromisoformat(row["ts"].replace("Z", "+00:00")).timestamp()
            out.append((ts, row))
    return out


def parse_log(path, topic_prefix=""):
    """The partition events of one instance's log: (epoch s, message, partitions), of the topics
    whose name starts with topic_prefix."""
    return [(ts, row["message"], {int(x) for x in row["partitions"].split(",") if x.isdigit()})
            for ts, row in log_rows(path)
            if "partitions" in row and row.get("component") == "kafka"
            and row.get("topic", "").startswith(topic_prefix)]


def owned_at(events, t):
    """Partitions an instance held at time t: assigned minus revoked or lost, in log order."""
    owned = set()
    for ts, message, parts in events:
        if ts > t:
            break
        if message == "partitions assigned":
            owned |= parts
        elif message in ("partitions revoked", "partitions lost"):
            owned -= parts
    return owned


class ScaleBench(kb.Bench):
    def start_job(self, run_id, name, src, dst, parallelism, extra=()):
        """One process of job run_id: an instance `name`, or (name None) a plain job."""
        argv = self.flow_job_argv(self.jobs[self.args.system], src, dst, run_id, parallelism,
                                  state_name=f"{run_id}-{name or 'plain'}")
        if name:
            argv += ["--instance", name]
        if name and self.args.job != "copier":
            # The state of a repartition partition's keys follows the partition: one root.
            at = argv.index("--state-dir")
            argv[at:at + 2] = ["--state-root", str(self.work / "state" / run_id)]
            argv += ["--shuffle-brokers", self.brokers]
        log_path = self.work / "logs" / f"{run_id}-{name or 'plain'}.log"
        log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(log_path, "a") as err:
            proc = subprocess.Popen(argv + list(extra), stdout=subprocess.DEVNULL, stderr=err)
        return {"name": name, "proc": proc, "log": log_path, "argv": argv + list(extra)}

    @staticmethod
    def failed_job(jobs):
        for j in jobs:
            if j["proc"].poll() not in (None, 0):
                tail = Path(j["log"]).read_text(errors="replace")[-600:]
                return f"{j['name'] or 'job'} exited with {j['proc'].returncode}: {tail.strip()}"
        return None

    def stop_jobs(self, jobs):
        """SIGTERM every process still running (a clean stop), reaped; their CPU seconds."""
        cpu = 0.0
        for j in jobs:
            if j["proc"].returncode is None:
                usage = self.stop_and_reap(j["proc"])
                cpu += usage.ru_utime + usage.ru_stime
        return cpu

    # --- scaling -----------------------------------------------------------------------------
    def scaling_run(self, config, src, preload):
        """config ("plain"|"inst", k): one run; returns (cell, problems)."""
        mode, k = config
        a = self.args
        (dst,) = self.new_topics(f"out-{mode}{k}")
        self.seq += 1
        run_id = f"scale-{mode}{k}-{self.tag}-{self.seq}"
        dump = self.work / f"output-{run_id}.jsonl"
        if a.job != "copier":
            flags = dict(expect=self.expected_rows(a.records), dump=dump)
        else:
            flags = dict(expect=preload["records"], ids=a.records)
        consumer = subprocess.Popen(
            self.client_cmd("consume", topic=dst, timeout_s=a.timeout, linger_ms=1500, **flags),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        t0 = time.time()
        if mode == "plain":
            jobs = [self.start_job(run_id, None, src, dst, k * a.parallelism)]
        else:
            jobs = [self.start_job(run_id, f"i{i}", src, dst, a.parallelism) for i in range(k)]
        died = None
        while consumer.poll() is None and died is None:
            died = self.failed_job(jobs)
            time.sleep(0.05)
        if died:
            consumer.kill()
        out, cerr = consumer.communicate()
        cpu = self.stop_jobs(jobs)
        self.delete_topics(dst, *[t.replace("<job id>", run_id) for t in self.repartition_topics])
        if died:
            dump.unlink(missing_ok=True)
            return None, [died]
        if not out.strip():
            dump.unlink(missing_ok=True)
            return None, [f"the consumer printed nothing: {cerr.strip()[-300:]}"]
        report = json.loads(out)
        if a.job != "copier":
            problems = self.check_keyed(dump, a.records) if consumer.returncode == 0 else []
        else:
            problems = self.copy_report_problems(report, preload, a.records)
        dump.unlink(missing_ok=True)
        if consumer.returncode != 0:
            problems.append(f"output incomplete after {a.timeout} s ({report['count']} records)")
        if problems:
            return None, problems
        wall = report["expect_us"] / 1e6 - t0
        return {"wall_s": wall, "cpu_s": cpu, "rate": preload["records"] / wall,
                "first_s": report["first_us"] / 1e6 - t0,
                "rate_per_cpu": preload["records"] / cpu if cpu > 0 else float("nan")}, []

    # --- failover ----------------------------------------------------------------------------
    def failover_setup(self, case, name):
        """Topics, run id and the instances' extra flags (JSON logs, the case's session
        timeout) of one failover run."""
        sig, session_ms = CASES[case]
        src, dst = self.new_topics(f"{name}-in", f"{name}-out")
        self.seq += 1
        run_id = f"{name}-{case}-{self.tag}-{self.seq}"
        extra = ["--log-level", "info", "--log-format", "json"]
        if session_ms:
            props = self.work / f"{run_id}.properties"
            props.write_text(f"session.timeout.ms={session_ms}\n")
            extra += ["--kafka-properties", str(props)]
        return sig, session_ms, src, dst, run_id, extra

    def failover_run(self, case):
        a = self.args
        sig, session_ms, src, dst, run_id, extra = self.failover_setup(case, "failover")
        n = a.rate * a.seconds
        arrivals = self.work / f"{run_id}.arrivals"
        consumer = subprocess.Popen(
            self.client_cmd("consume", topic=dst, expect=n, ids=n, timeout_s=a.timeout + 120,
                            linger_ms=1000, arrivals=arrivals),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        jobs = [self.start_job(run_id, f"i{i}", src, dst, a.parallelism, extra)
                for i in range(a.failover_instances)]
        victim, survivors = jobs[-1], jobs[:-1]
        result = {"case": case, "signal": sig.name, "session_timeout_ms": session_ms or 10000}
        problems = []
        try:
            problems = self.failover_phases(jobs, victim, survivors, src, n, arrivals, consumer,
                                            sig, result)
        finally:
            for helper in (consumer, result.pop("producer", None)):
                if helper is not None and helper.poll() is None:
                    helper.kill()
                    helper.wait()
            out, cerr = consumer.communicate()
            self.stop_jobs(jobs)
        produced = result.pop("produced", None)
        if produced is not None and not problems:
            report = json.loads(out) if out.strip() else None
            if report is None:
                problems.append(f"the consumer printed nothing: {cerr.strip()[-300:]}")
            else:
                problems += self.copy_report_problems(report, produced, n)
        self.delete_topics(src, dst)
        arrivals.unlink(missing_ok=True)
        return result, problems

    def failover_phases(self, jobs, victim, survivors, src, n, arrivals, consumer, sig, result):
        a = self.args
        deadline = time.time() + 60
        while True:  # every partition owned, and every instance owns some
            owners = {j["name"]: owned_at(parse_log(j["log"]), time.time()) for j in jobs}
            if all(owners.values()) and len(set().union(*owners.values())) == a.partitions:
                break
            if time.time() > deadline:
                return [f"the instances did not share the {a.partitions} partitions within 60 s "
                        f"(owned: {', '.join(f'{k} {sorted(v)}' for k, v in owners.items())})"]
            if died := self.failed_job(jobs):
                return [died]
            time.sleep(0.2)
        producer = subprocess.Popen(
            self.client_cmd("produce", topic=src, records=n, rate=a.rate,
                            record_bytes=a.record_bytes),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        result["producer"] = producer  # killed by the caller should this end early
        time.sleep(a.kill_after)
        if died := self.failed_job(jobs):
            return [died]
        kill_at = time.time()
        victim["proc"].send_signal(sig)
        owned = owned_at(parse_log(victim["log"]), kill_at)
        result["owned"] = sorted(owned)
        log(f"{result['case']}: {sig.name} to {victim['name']} (partitions {sorted(owned)})")
        if not owned:
            return [f"{victim['name']} owned no partitions when it was stopped"]
        live = list(survivors)
        reassigned, visible, rows = {}, {}, []
        follower = ArrivalFollower(arrivals)
        restart_at = None
        deadline = kill_at + a.timeout
        while time.time() < deadline:
            time.sleep(0.2)
            if died := self.failed_job(live):
                return [died]
            for j in survivors:
                for ts, message, parts in parse_log(j["log"]):
                    if message == "partitions assigned" and ts >= kill_at - 0.001:
                        for p in parts & owned:
                            reassigned.setdefault(p, ts)
            new_rows = follower.poll()
            rows += new_rows
            for arrival, rid, _ in new_rows:
                p = rid % a.partitions
                if p in reassigned and p not in visible and arrival >= reassigned[p]:
                    visible[p] = arrival
            if len(reassigned) < len(owned) or time.time() < max(reassigned.values()) + 1:
                continue
            missing = missing_before(rows, kill_at)
            if len(visible) == len(owned) and missing == 0:
                break
            if restart_at is None and time.time() > max(reassigned.values()) + a.stall_cap:
                victim["proc"].wait()
                restart_at = time.time()
                what = (f"{missing} records sent before the stop still missing from"
                        if missing is not None else "no record sent after the stop yet in")
                log(f"{result['case']}: {what} the committed output {a.stall_cap:g} s after the "
                    f"reassignment; restarting {victim['name']} (aborts its open transaction)")
                restarted = self.start_job_argv(victim)
                jobs.append(restarted)
                live.append(restarted)
        pout, perr = producer.communicate()
        del result["producer"]
        if producer.returncode != 0:
            raise kb.SetupError(f"kafka_bench_client produce failed: {perr.strip()}")
        result["produced"] = json.loads(pout)
        while consumer.poll() is None and not (died := self.failed_job(live)):
            time.sleep(0.2)
        rows += follower.poll()
        if len(reassigned) < len(owned) or len(visible) < len(owned):
            return [f"partitions {sorted(owned)}: reassigned {sorted(reassigned)}, output "
                    f"resumed for {sorted(visible)} within {a.timeout} s"]
        result["reassigned_s"] = max(reassigned.values()) - kill_at
        result["visible_s"] = max(visible.values()) - kill_at
        result["caught_up_s"] = caught_up(rows, kill_at) - kill_at
        result["restarted_after_s"] = restart_at - kill_at if restart_at else None
        return [died] if died else []

    def explain_repartition_topics(self):
        """The repartition topics instances of the job create, from `flowc explain` (with
        "<job id>" for the job's id): deleted after each run."""
        script = kb.HERE / kb.SCRIPTS[self.args.system]
        r = subprocess.run([self.flowc, "explain", str(script)], capture_output=True, text=True)
        if r.returncode != 0:
            raise kb.SetupError(f"flowc explain {script.name} failed: {r.stderr.strip()}")
        # "writes __flow_repartition_<job id>.op, hash by ...": the name holds a space.
        # A join's topic is listed under each stage that writes it: once here.
        return list(dict.fromkeys(
            line.strip()[len("writes "):].split(",")[0] for line in r.stdout.splitlines()
            if line.strip().startswith("writes __flow_repartition_")))

    def window_failover_run(self, case):
        """--job window: two instances count a steady keyed input; one is stopped mid-input
        (SIGKILL: restarted --restart-after s after its partitions moved, so that their keys'
        state moves away and back). Reports
        when the survivor held every repartition partition the stopped one had and when it had
        adopted their keys' state; the whole output must equal the window reference."""
        a = self.args
        sig, session_ms, src, dst, run_id, extra = self.failover_setup(case, "wfailover")
        n = a.rate * a.seconds
        dump = self.work / f"{run_id}.jsonl"
        consumer = subprocess.Popen(
            self.client_cmd("consume", topic=dst, expect=self.expected_rows(n),
                            timeout_s=a.timeout + 120,
                            linger_ms=1500, dump=dump),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        jobs = [self.start_job(run_id, f"i{i}", src, dst, a.parallelism, extra)
                for i in range(a.failover_instances)]
        victim, survivors = jobs[-1], jobs[:-1]
        # The first cut's topic (the only one but for window2): its partitions and keys' state.
        shuffle = self.repartition_topics[0].replace("<job id>", run_id)
        first_op = shuffle[len(f"__flow_repartition_{run_id}."):]
        result = {"case": case, "signal": sig.name, "session_timeout_ms": session_ms or 10000}
        problems, producer = [], None
        try:
            deadline = time.time() + 60
            while True:  # every instance reads some repartition partitions
                owners = [owned_at(parse_log(j["log"], shuffle), time.time()) for j in jobs]
                if all(owners):
                    break
                if time.time() > deadline or (died := self.failed_job(jobs)):
                    problems = [died or "the instances did not share the repartition topic "
                                        "within 60 s"]
                    return result, problems
                time.sleep(0.2)
            producer = subprocess.Popen(
                self.client_cmd("produce", topic=src, records=n, rate=a.rate, keys=a.keys,
                                record_bytes=a.record_bytes, sentinels=1),
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            time.sleep(a.kill_after)
            if died := self.failed_job(jobs):
                return result, [died]
            kill_at = time.time()
            owned = owned_at(parse_log(victim["log"], shuffle), kill_at)
            victim["proc"].send_signal(sig)
            result["owned"] = sorted(owned)
            log(f"{a.job} {case}: {sig.name} to {victim['name']} (repartition partitions "
                f"{sorted(owned)})")
            reassigned = {}
            while time.time() < kill_at + a.timeout and len(reassigned) < len(owned):
                time.sleep(0.2)
                for j in survivors:
                    for ts, message, parts in parse_log(j["log"], shuffle):
                        if message == "partitions assigned" and ts >= kill_at:
                            for p in parts & owned:
                                reassigned.setdefault(p, ts)
            if len(reassigned) < len(owned):
                return result, [f"repartition partitions {sorted(owned)}: only "
                                f"{sorted(reassigned)} reassigned within {a.timeout} s"]
            result["reassigned_s"] = max(reassigned.values()) - kill_at
            if sig == signal.SIGKILL:
                # After the move: its partitions and their keys' state come back to it.
                time.sleep(max(0.0, max(reassigned.values()) + a.restart_after - time.time()))
                victim["proc"].wait()
                restarted = self.start_job_argv(victim)
                jobs.append(restarted)
                result["restarted_after_s"] = time.time() - kill_at
            pout, perr = producer.communicate()
            if producer.returncode != 0:
                raise kb.SetupError(f"kafka_bench_client produce failed: {perr.strip()}")
            live = [j for j in jobs if j is not victim]
            while consumer.poll() is None and not (died := self.failed_job(live)):
                time.sleep(0.2)
            if died:
                problems.append(died)
            elif consumer.returncode != 0:
                problems.append(f"output incomplete after {a.timeout + 120} s")
                if dump.exists():  # which rows are missing, for the diagnosis
                    problems += self.check_keyed(dump, n)
            else:
                problems += self.check_keyed(dump, n)
            # When a survivor had restored the keys' state of each partition it took over.
            adopted = {}
            for j in survivors:
                for ts, row in log_rows(j["log"]):
                    if (row.get("message") != "adopted the state of a repartition partition's keys"
                            or row.get("operator") != first_op):
                        continue
                    p = int(row.get("partition", -1))
                    if ts >= kill_at and p in owned:
                        adopted[p] = min(adopted.get(p, ts), ts)
            result["adopted_s"] = (max(adopted.values()) - kill_at if len(adopted) == len(owned)
                                   else None)
        finally:
            for helper in (consumer, producer):
                if helper is not None and helper.poll() is None:
                    helper.kill()
                    helper.wait()
            self.stop_jobs(jobs)
            self.delete_topics(src, dst,
                               *[t.replace("<job id>", run_id) for t in self.repartition_topics])
            if problems and dump.exists():
                log(f"{a.job} {case}: output kept in {dump}, instance logs in {self.work / 'logs'}")
            else:
                dump.unlink(missing_ok=True)
        return result, problems

    # --- the keyed jobs' outputs -------------------------------------------------------------
    def expected_rows(self, n):
        """Output rows of the window, window2, windowjoin or join job for n input records."""
        if self.args.job == "join":
            return n
        if self.args.job == "windowjoin":
            return len(self.window_join_reference(n))
        if self.args.job == "running":
            return n  # a row per record; the job drops the sentinels
        ref = self.window_reference(n)
        return len(ref) + (len(self.second_window_reference(ref)) if self.args.job == "window2"
                           else 0)

    def check_keyed(self, dump_path, n):
        if self.args.job == "window":
            return self.check_window(dump_path, self.window_reference(n))
        if self.args.job == "window2":
            return self.check_window2(dump_path, self.window_reference(n))
        if self.args.job == "windowjoin":
            return self.check_window_join(dump_path, n)
        if self.args.job == "running":
            return self.check_running(dump_path, n)
        return self.check_join(dump_path, n)

    def check_running(self, dump_path, n):
        """running: per key, the counts of its rows are 1..N once each, and in count order the
        sums step by exactly the values of that key's records (any order of them: a key's records
        come from several input partitions), from the record formula. The job drops the
        sentinels."""
        values = {}
        for i in range(n):
            values.setdefault(f"k{i % self.args.keys}", []).append((i * 7919) % 1000)
        rows, problems = {}, []
        for line_no, line in enumerate(Path(dump_path).read_text().splitlines()):
            try:
                row = json.loads(line)
                rows.setdefault(row["key"], []).append((row["seen"], row["so_far"]))
            except (ValueError, KeyError, TypeError) as e:
                problems.append(f"row {line_no}: cannot read {line[:120]!r}: {e}")
        for key in sorted(set(values) | set(rows)):
            got = sorted(rows.get(key, []))
            want = values.get(key, [])
            counts = [seen for seen, _ in got]
            if counts != list(range(1, len(want) + 1)):
                dup = len(counts) - len(set(counts))
                problems.append(f"key {key}: {len(counts)} rows for {len(want)} records "
                                f"({dup} counts twice, e.g. counts {counts[:5]})")
                continue
            steps = collections.Counter(b - a for (_, a), (_, b) in zip([(0, 0)] + got, got))
            if steps != collections.Counter(want):
                extra = sorted((steps - collections.Counter(want)).elements())
                missing = sorted((collections.Counter(want) - steps).elements())
                problems.append(f"key {key}: the sums step by {extra[:3]}, which are no values of "
                                f"its records, and not by {missing[:3]}, which are")
            if len(problems) >= 5:
                break
        return problems

    def window_join_reference(self, n):
        """windowjoin's rows for n records: (key, window start ms) -> (count, sum, count of even
        values, largest even value), for the keys and windows with an even value, from the record
        formula (value (i * 7919) mod 1000, event time ET_BASE + i)."""
        evens = {}
        for i in range(n):
            value = (i * 7919) % 1000
            if value % 2:
                continue
            et = kb.ET_BASE + i
            at = (f"k{i % self.args.keys}", et - et % kb.WINDOW_MS)
            c, top = evens.get(at, (0, -1))
            evens[at] = (c + 1, max(top, value))
        sums = self.window_reference(n)
        return {at: sums[at] + evens[at] for at in evens}

    def check_window_join(self, dump_path, n):
        """windowjoin: each (key, window) of the reference once, with both sides' values."""
        got, problems = {}, []
        for line_no, line in enumerate(Path(dump_path).read_text().splitlines()):
            try:
                row = json.loads(line)
                at = (row["key"], self.parse_ms(row["window_start"]))
                if at in got:
                    problems.append(f"row {line_no}: window {at} twice")
                got[at] = (row["n"], row["total"], row["evens"], row["top"])
            except (ValueError, KeyError, TypeError) as e:
                problems.append(f"row {line_no}: cannot read {line[:120]!r}: {e}")
        want = self.window_join_reference(n)
        if got != want:
            problems.append(kb.map_difference(got, want))
        return problems

    @staticmethod
    def second_window_reference(ref):
        """window2's second stage from the window reference: (count, window start ms) -> (keys
        with that count in that window, the sum of their sums)."""
        out = {}
        for (key, start), (count, total) in ref.items():
            keys, sums = out.get((count, start), (0, 0))
            out[(count, start)] = (keys + 1, sums + total)
        return out

    def check_window2(self, dump_path, ref):
        """window2: the rows with a `key` are the first window's (check_window), those with
        `keys` the second's, each (count, window) once with the reference's keys and sum."""
        first, second, problems = [], {}, []
        for n, line in enumerate(Path(dump_path).read_text().splitlines()):
            try:
                row = json.loads(line)
                if "key" in row:
                    first.append(line)
                    continue
                at = (row["n"], self.parse_ms(row["window_start"]))
                if at in second:
                    problems.append(f"row {n}: second-stage window {at} twice")
                second[at] = (row["keys"], row["sum_total"])
            except (ValueError, KeyError, TypeError) as e:
                problems.append(f"row {n}: cannot read {line[:120]!r}: {e}")
        problems += self.check_window_rows(first, ref)
        want = self.second_window_reference(ref)
        if second != want:
            problems.append("second stage: " + kb.map_difference(second, want))
        return problems

    def check_join(self, dump_path, n):
        """Every input record i once, both sides' fields from the record formula (run.py's
        expected_payload): key k<i mod keys>, value (i * 7919) mod 1000."""
        problems, seen = [], set()
        for line_no, line in enumerate(Path(dump_path).read_text().splitlines()):
            try:
                row = json.loads(line)
                i = row["id"]
                key, value = f"k{i % self.args.keys}", (i * 7919) % 1000
                want = {"id": i, "key": key, "value": value, "rkey": key, "rvalue": value}
                if row != want and len(problems) < 5:
                    problems.append(f"row {line_no}: {row} where {want} was expected")
                if i in seen and len(problems) < 5:
                    problems.append(f"row {line_no}: record {i} twice")
                seen.add(i)
            except (ValueError, KeyError, TypeError) as e:
                problems.append(f"row {line_no}: cannot read {line[:120]!r}: {e}")
        missing = [i for i in range(n) if i not in seen]
        extra = sorted(i for i in seen if not 0 <= i < n)
        if missing or extra:
            problems.append(f"{len(seen)} records joined of {n}: {len(missing)} missing (e.g. "
                            f"{missing[:3]}), {len(extra)} not in the input (e.g. {extra[:3]})")
        return problems

    def start_job_argv(self, job):
        with open(job["log"], "a") as err:
            proc = subprocess.Popen(job["argv"], stdout=subprocess.DEVNULL, stderr=err)
        return {**job, "proc": proc}


class ArrivalFollower:
    """Follows kafka_bench_client consume --arrivals: (arrival epoch s, id, send stamp epoch s)
    of each record with an id >= 0, in arrival order."""

    def __init__(self, path):
        self.path, self.offset, self.rest = Path(path), 0, b""

    def poll(self):
        if not self.path.exists():
            return []
        with open(self.path, "rb") as f:
            f.seek(self.offset)
            data = f.read()
        self.offset += len(data)
        lines = (self.rest + data).split(b"\n")
        self.rest = lines.pop()
        out = []
        for line in lines:
            us, rid, ts = (int(x) for x in line.split())
            if rid >= 0:
                out.append((us / 1e6, rid, ts / 1e6))
        return out


def sent_before(rows, t):
    """How many records the producer had sent before t: ids go out in order, so that is the
    smallest id stamped at or after t (an upper bound while not every record has arrived)."""
    return min((rid for _, rid, ts in rows if ts >= t), default=None)


def missing_before(rows, t):
    """Records sent before t that are not in the committed output yet; None when no record sent
    after t has arrived either (then their number is not known yet)."""
    bound = sent_before(rows, t)
    if bound is None:
        return None  # nothing sent after t has arrived yet: the output has not caught up
    return bound - sum(1 for _, rid, _ in rows if rid < bound)


def caught_up(rows, t):
    """When the last record sent before t arrived (every record has arrived by now)."""
    bound = sent_before(rows, t)
    return max(arrival for arrival, rid, _ in rows if bound is None or rid < bound)


# --- report -----------------------------------------------------------------------------------
def config_label(config, parallelism):
    mode, k = config
    if mode == "plain":
        return f"1 process, no --instance, parallelism {k * parallelism}"
    return f"{k} instance{'s' if k > 1 else ''} x parallelism {parallelism}"


def markdown(meta, scaling, failover, failures):
    job = {"copier": "Exactly-once copier (bench/kafka/copy_exactly_once.flow)",
           "window": f"Keyed windowed count, exactly once (bench/kafka/window_exactly_once.flow; "
                     f"{meta['keys']} keys, instances through a repartition topic and one "
                     f"--state-root)",
           "window2": f"A window behind a window, exactly once "
                      f"(bench/kafka/window2_exactly_once.flow; {meta['keys']} keys, two "
                      f"repartition topics, one --state-root)",
           "windowjoin": f"A join of two windows, exactly once "
                         f"(bench/kafka/window_join_exactly_once.flow; {meta['keys']} keys, "
                         f"three repartition topics, one --state-root)",
           "running": f"A running aggregate, exactly once "
                      f"(bench/kafka/running_exactly_once.flow; {meta['keys']} keys, one "
                      f"repartition topic, one --state-root)",
           "join": "Interval join of the input with itself on its id, exactly once "
                   "(bench/kafka/join_exactly_once.flow; both sides through one repartition "
                   "topic, one --state-root)"}[meta["job"]]
    lines = [f"# Kafka scale-out benchmark {meta['date']}", "",
             f"{job}, {meta['records']:,} "
             f"input records of ~{meta['record_bytes']} bytes in {meta['partitions']} partitions, "
             f"own broker on 127.0.0.1:{meta['port']}, checkpoints every "
             f"{meta['checkpoint_interval_ms'] / 1000:g} s; medians of {meta['runs']} runs, "
             f"configurations interleaved run by run; wall and first output from the start of "
             f"the first process. Load average before/after: "
             f"{meta['load_before']} / {meta['load_after']}. {meta['cpus']} CPUs.", "",
             "| configuration | records/s (wall) | records per CPU-second | wall s "
             "| first output s | CPU s | vs 1 process | runs |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    plain = scaling.get(("plain", min(k for _, k in scaling))) if scaling else None
    for config, cell in scaling.items():
        name = config_label(config, meta["parallelism"])
        if cell is None:
            lines.append(f"| {name} | failed | | | | | | |")
            continue
        ratio = f"{cell['rate'] / plain['rate']:.2f}" if plain else ""
        lines.append(f"| {name} | {kb.fmt_rate(cell['rate'])} | {kb.fmt_rate(cell['rate_per_cpu'])} "
                     f"| {cell['wall_s']:.2f} | {cell['first_s']:.2f} | {cell['cpu_s']:.2f} "
                     f"| {ratio} | {cell['runs']} |")
    if failover and meta["job"] != "copier":
        lines += ["", f"Failover: {meta['failover_instances']} instances, {meta['rate']:,} "
                  f"records/s for {meta['seconds']} s, one instance stopped {meta['kill_after']:g} s "
                  f"in; after a SIGKILL it is restarted {meta['restart_after']:g} s after its "
                  f"partitions moved (they and their keys' state move back). Times from the signal: "
                  f"reassigned, until a survivor logged the last of its repartition partitions as "
                  f"assigned; adopted, until a survivor had restored their keys' state from the "
                  f"checkpoints the committed offsets name. Every output row equals the "
                  f"reference.", "",
                  "| case | session timeout | repartition partitions | reassigned s | adopted s "
                  "| restarted at s | exact |", "|---|---:|---|---:|---:|---:|---|"]
        for r in failover:
            if "reassigned_s" not in r:
                lines.append(f"| {r['signal']} | {r['session_timeout_ms'] / 1000:g} s | | failed "
                             f"| | | no |")
                continue
            adopted = "" if r.get("adopted_s") is None else f"{r['adopted_s']:.1f}"
            restarted = r.get("restarted_after_s")
            lines.append(f"| {r['signal']} | {r['session_timeout_ms'] / 1000:g} s "
                         f"| {','.join(map(str, r['owned']))} | {r['reassigned_s']:.1f} "
                         f"| {adopted} | {'' if restarted is None else f'{restarted:.1f}'} "
                         f"| {'no' if r.get('failed') else 'yes'} |")
    elif failover:
        lines += ["", f"Failover: {meta['failover_instances']} instances, {meta['rate']:,} "
                  f"records/s for {meta['seconds']} s, one instance stopped {meta['kill_after']:g} s "
                  f"in and not restarted unless its output stalled {meta['stall_cap']:g} s past "
                  f"the reassignment. Times from the signal: reassigned, until a survivor logged "
                  f"the last of its partitions as assigned; visible, until the first committed "
                  f"output record of each of them after that (the slowest); caught up, until "
                  f"every record sent before the signal (all partitions) was in the committed "
                  f"output.", "",
                  "| case | session timeout | partitions | reassigned s | visible s "
                  "| caught up s | note |", "|---|---:|---|---:|---:|---:|---|"]
        for r in failover:
            if "visible_s" not in r:
                lines.append(f"| {r['signal']} | {r['session_timeout_ms'] / 1000:g} s | | failed "
                             f"| | | |")
                continue
            note = ""
            if r["restarted_after_s"] is not None:
                note = (f"output stalled (the killed instance's open transaction); it was "
                        f"restarted at {r['restarted_after_s']:.1f} s")
            lines.append(f"| {r['signal']} | {r['session_timeout_ms'] / 1000:g} s "
                         f"| {','.join(map(str, r['owned']))} | {r['reassigned_s']:.1f} "
                         f"| {r['visible_s']:.1f} | {r['caught_up_s']:.1f} | {note} |")
    if failures:
        lines += ["", "Failures:", ""] + [f"- {f}" for f in failures]
    return "\n".join(lines) + "\n"


def main(argv=None):
    args = parse_args(argv)
    bench = ScaleBench(args)
    failures, raw_runs, scaling, failover = [], {}, {}, []
    meta = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            **{k: getattr(args, k) for k in (
                "records", "record_bytes", "partitions", "port", "parallelism", "runs", "rate",
                "seconds", "kill_after", "stall_cap", "failover_instances",
                "checkpoint_interval_ms", "job", "keys", "restart_after")},
            "cpus": os.cpu_count(), "load_before": kb.load_average()}
    configs = [(m, k) for k in args.counts for m in ("plain", "inst")]
    try:
        bench.build([args.system])
        bench.repartition_topics = bench.explain_repartition_topics()
        bench.start_broker()
        (src,) = bench.new_topics("in")
        log(f"preloading {args.records:,} records into {src}")
        keyed = args.job != "copier"
        preload = bench.client_json("produce", topic=src, records=args.records,
                                    record_bytes=args.record_bytes,
                                    **(dict(keys=args.keys, sentinels=1) if keyed else {}))
        for c in configs:
            raw_runs[c] = []
        for i in range(args.runs):
            for c in configs:
                cell, problems = bench.scaling_run(c, src, preload)
                name = config_label(c, args.parallelism)
                for p in problems:
                    failures.append(f"{name} run {i + 1}: {p}")
                    log(f"!!!! {name} run {i + 1}: {p}")
                if cell:
                    raw_runs[c].append(cell)
                    log(f"{name} run {i + 1}: correct; {cell['rate']:,.0f} rec/s "
                        f"({cell['wall_s']:.2f} s, CPU {cell['cpu_s']:.2f} s)")
        for c in configs:
            runs = raw_runs[c]
            scaling[c] = None
            if len(runs) == args.runs:
                scaling[c] = {k: statistics.median(r[k] for r in runs)
                              for k in ("wall_s", "cpu_s", "rate", "rate_per_cpu", "first_s")}
                scaling[c]["runs"] = len(runs)
        bench.delete_topics(src)
        for case in args.case_list:
            run_case = bench.failover_run if args.job == "copier" else bench.window_failover_run
            result, problems = run_case(case)
            result["failed"] = bool(problems)
            failover.append(result)
            for p in problems:
                failures.append(f"failover {case}: {p}")
                log(f"!!!! failover {case}: {p}")
            if not problems and args.job != "copier":
                adopted = result["adopted_s"]
                log(f"failover {case}: repartition partitions reassigned after "
                    f"{result['reassigned_s']:.1f} s, their keys' state adopted after "
                    f"{'-' if adopted is None else f'{adopted:.1f}'} s; exact")
            elif not problems:
                log(f"failover {case}: reassigned after {result['reassigned_s']:.1f} s, output "
                    f"of every partition visible after {result['visible_s']:.1f} s, caught up "
                    f"after {result['caught_up_s']:.1f} s; exact")
    except kb.SetupError as e:
        log(f"set-up failed: {e}")
        return 2
    finally:
        bench.stop_broker()
    meta["load_after"] = kb.load_average()
    md = markdown(meta, scaling, failover, failures)
    print(md)
    if not args.smoke:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d-%H%M")
        (out / f"{stamp}-kafka-scale-out.md").write_text(md)
        (out / f"{stamp}-kafka-scale-out.json").write_text(json.dumps(
            {"meta": meta, "scaling": {config_label(c, args.parallelism): v
                                       for c, v in scaling.items()},
             "runs": {config_label(c, args.parallelism): v for c, v in raw_runs.items()},
             "failover": failover, "failures": failures}, indent=1))
        log(f"wrote {out / (stamp + '-kafka-scale-out.md')}")
    if failures:
        log(f"{len(failures)} FAILURE(S)")
        return 1
    log("all correctness checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
