"""How bench/run builds and runs each system: the limit programs, the Flink peer, Flow."""

import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

QUERIES = ["q0", "q1", "q2", "q3", "q5", "q7", "q8", "q11"]


def parse_query_events(text):
    """--query-events "q7=2000000,q5=5000000" as {query: events}; ValueError naming a bad item."""
    events = {}
    for item in filter(None, text.split(",")):
        q, _, n = item.partition("=")
        if q not in QUERIES or not n.isdigit() or int(n) <= 0:
            raise ValueError(f"--query-events: {item!r} is not QUERY=EVENTS "
                             f"(queries: {', '.join(QUERIES)})")
        events[q] = int(n)
    return events


@dataclass
class RunResult:
    rows: int
    checksum: int
    cpu_s: float    # user + sys CPU of the whole process (getrusage of the child)
    wall_s: float   # wall time of the whole process
    extra: dict = field(default_factory=dict)


class RunError(Exception):
    pass


def run_measured(cmd, env=None, stdout_path=None, cwd=None, timeout=None):
    """Runs cmd, returns (exit code, stdout text, stderr text, cpu seconds, wall seconds).

    CPU is the child's user + sys time from wait4 (the process and all its threads)."""
    with tempfile.TemporaryFile() as err, (open(stdout_path, "wb") if stdout_path
                                           else tempfile.TemporaryFile()) as out:
        start = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, cwd=cwd)
        deadline = None if timeout is None else start + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid != 0:
                break
            if deadline is not None and time.monotonic() > deadline:
                proc.kill()
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.005)
        wall = time.monotonic() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace")
        stdout = ""
        if stdout_path is None:
            out.seek(0)
            stdout = out.read().decode("utf-8", "replace")
    return proc.returncode, stdout, stderr, usage.ru_utime + usage.ru_stime, wall


def parse_json_line(stdout, what):
    import json
    for line in reversed(stdout.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            return json.loads(line)
    raise RunError(f"{what}: no result line in output")


def cmake_build(root, build_dir, targets):
    """Configures build_dir (Release, Ninja) when it has no build yet, as on a fresh checkout, then
    builds targets. flowc's target depends on the runtime libraries jobs link against."""
    if not (build_dir / "build.ninja").exists():
        subprocess.run(["cmake", "-S", str(root), "-B", str(build_dir), "-G", "Ninja",
                        "-DCMAKE_BUILD_TYPE=Release"], check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", str(build_dir), "--target", *targets, "-j2"], check=True,
                   stdout=subprocess.DEVNULL)


class Limit:
    name = "limit"

    def __init__(self, root: Path, build_dir: Path):
        self.root = root
        self.build_dir = build_dir
        self.binary = build_dir / "bin" / "nexmark_limit"

    def build(self, log):
        cmake_build(self.root, self.build_dir, ["nexmark_limit"])
        log(f"limit: {self.binary}")

    def supports(self, mode):
        return mode == "off"

    def run(self, query, events, rate, parallelism, mode, workdir):
        threads = parallelism if query in ("q0", "q1", "q2") else 1
        cmd = [str(self.binary), "--query", query, "--events", str(events), "--rate", str(rate),
               "--threads", str(threads)]
        code, out, err, cpu, wall = run_measured(cmd)
        if code != 0:
            raise RunError(f"limit {query} exited {code}: {err.strip()[-500:]}")
        r = parse_json_line(out, f"limit {query}")
        return RunResult(r["rows"], int(r["checksum"], 16), cpu, wall)

    def self_test_checksum(self, query, events, rate):
        """Recomputes the limit's checksum in Python from its printed canonical rows: checks
        that bench/lib/checksum.py hashes and sums exactly like row_checksum.h."""
        from checksum import MASK, fnv1a64
        out = subprocess.run([str(self.binary), "--query", query, "--events", str(events),
                              "--rate", str(rate), "--print-rows", "1"],
                             check=True, capture_output=True).stdout.decode("utf-8")
        lines = out.splitlines()
        result = parse_json_line(out, f"limit {query}")
        total = 0
        for line in lines[:-1]:
            total = (total + fnv1a64(line.encode("utf-8"))) & MASK
        return (len(lines) - 1, total) == (result["rows"], int(result["checksum"], 16))

    def dump(self, n, rate):
        return subprocess.run([str(self.binary), "--dump", str(n), "--rate", str(rate)],
                              check=True, capture_output=True, text=True).stdout


class Flink:
    name = "flink"

    def __init__(self, root: Path):
        self.project = root / "bench" / "peers" / "flink"
        self.jar = self.project / "target" / "flow-nexmark-flink-0.1.0.jar"

    def build(self, log):
        sources = list((self.project / "src").rglob("*.java")) + [self.project / "pom.xml"]
        if self.jar.exists() and all(s.stat().st_mtime <= self.jar.stat().st_mtime for s in sources):
            log(f"flink: {self.jar} is up to date")
            return
        start = time.monotonic()
        cmd = ["mvn", "-q", "-o", "package", "-DskipTests"]
        if subprocess.run(cmd, cwd=self.project).returncode != 0:
            log("flink: offline build failed (cold Maven cache?), building online")
            subprocess.run(cmd[:2] + cmd[3:], cwd=self.project, check=True)
        log(f"flink: built in {time.monotonic() - start:.0f} s")

    def classpath(self):
        return f"{self.jar}:{self.project / 'target' / 'lib'}/*"

    def supports(self, mode):
        return True

    def run(self, query, events, rate, parallelism, mode, workdir):
        cmd = ["java", "-cp", self.classpath(), "flow.bench.NexmarkFlink", "--query", query,
               "--events", str(events), "--rate", str(rate), "--parallelism", str(parallelism)]
        if mode != "off":
            backend = mode.split("-", 1)[1]
            ckpt = Path(workdir) / "flink-checkpoints"
            shutil.rmtree(ckpt, ignore_errors=True)
            cmd += ["--checkpoint-ms", "1000", "--state", backend,
                    "--checkpoint-dir", ckpt.resolve().as_uri()]
        code, out, err, cpu, wall = run_measured(cmd)
        if code != 0:
            raise RunError(f"flink {query} exited {code}: {err.strip()[-800:]}")
        r = parse_json_line(out, f"flink {query}")
        return RunResult(r["rows"], int(r["checksum"], 16), cpu, wall,
                         {"job_cpu_s": r["job_cpu_s"], "job_wall_s": r["wall_s"]})

    def dump(self, n, rate):
        return subprocess.run(["java", "-cp", self.classpath(), "flow.bench.NexmarkFlink", "--dump",
                               str(n), "--rate", str(rate)],
                              check=True, capture_output=True, text=True).stdout


class Flow:
    """Flow jobs built by `flowc build` from bench/nexmark/<query>.flow.

    Two binaries per query: the script as written (blackhole sink, for timing) and a check
    variant whose sink is `stdout() format csv`, whose output bench/lib/checksum.py hashes."""
    name = "flow"

    def __init__(self, root: Path, flowc: Path, workdir: Path):
        self.root = root
        self.flowc = flowc
        self.bin_dir = workdir / "flow-bin"
        self.workdir = workdir
        self.unavailable = None   # reason, when flowc build does not work
        self.failed = {}          # query -> why its build failed
        self.compile_times = {}   # query -> (cold s, warm s)

    def build(self, log, queries, check_only=False, compile_times=True, reuse=False,
              timed_queries=None):
        """Builds each query's binaries; with check_only, only the check variants (no compile
        times, no timing binaries: what --quick needs). Without compile_times each binary is
        built once with the user's header cache (no cold/warm timing). With reuse, binaries
        newer than flowc and the script are kept (a second run over the same --workdir).
        timed_queries (None: all) limits the timing binaries to those queries; the others get
        only their check variant (a build costs minutes on a loaded machine)."""
        all_check_only = check_only
        if not self.flowc or not Path(self.flowc).exists():
            self.unavailable = "no flowc binary (pass --flowc or build it in the build dir)"
            log(f"flow: {self.unavailable}")
            return
        probe = subprocess.run([str(self.flowc), "help", "build"], capture_output=True, text=True)
        if probe.returncode != 0:
            self.unavailable = "this flowc has no `build` command"
            log(f"flow: {self.unavailable}")
            return
        self.bin_dir.mkdir(parents=True, exist_ok=True)
        check_dir = self.workdir / "flow-check-src"
        check_dir.mkdir(parents=True, exist_ok=True)
        for q in queries:
            check_only = all_check_only or (timed_queries is not None and q not in timed_queries)
            script = self.root / "bench" / "nexmark" / f"{q}.flow"
            variant = check_dir / f"{q}.flow"
            text = script.read_text()
            if "into blackhole()" not in text:
                self.failed[q] = "script has no `into blackhole()` to replace"
                continue
            variant.write_text(text.replace("into blackhole()", "into stdout() format csv"))
            wanted = [self.bin_dir / f"{q}-check"] + ([] if check_only else [self.bin_dir / q])
            newest_input = max(script.stat().st_mtime, Path(self.flowc).stat().st_mtime)
            if reuse and all(b.exists() and b.stat().st_mtime > newest_input for b in wanted):
                log(f"flow: reusing {', '.join(str(b) for b in wanted)}")
                continue
            # Compile time: cold = empty header cache, warm = the same build again.
            cache = Path(tempfile.mkdtemp(prefix="flow-cache-", dir=self.workdir))
            # Only timed builds need the empty cache; the others reuse the user's precompiled header.
            timed = compile_times and not check_only
            env = dict(os.environ, XDG_CACHE_HOME=str(cache)) if timed else None
            times = []
            ok = True
            for attempt in range(0 if check_only else 2 if compile_times else 1):
                start = time.monotonic()
                r = subprocess.run([str(self.flowc), "build", str(script), "-o",
                                    str(self.bin_dir / q)], capture_output=True, text=True, env=env)
                times.append(time.monotonic() - start)
                if r.returncode != 0:
                    self.failed[q] = (r.stderr or r.stdout).strip().splitlines()[0:3]
                    self.failed[q] = " / ".join(self.failed[q])
                    ok = False
                    break
            if ok:
                r = subprocess.run([str(self.flowc), "build", str(variant), "-o",
                                    str(self.bin_dir / f"{q}-check")], capture_output=True,
                                   text=True, env=env)
                if r.returncode != 0:
                    self.failed[q] = "check variant: " + (r.stderr or r.stdout).strip()[:300]
                    ok = False
            shutil.rmtree(cache, ignore_errors=True)
            if ok and check_only:
                log(f"flow: built {q} (check variant)")
            elif ok and compile_times:
                self.compile_times[q] = (times[0], times[1])
                log(f"flow: built {q} (cold {times[0]:.1f} s, warm {times[1]:.1f} s)")
            elif ok:
                log(f"flow: built {q}")
            else:
                log(f"flow: {q} does not build: {self.failed[q]}")

    def available(self, query):
        return self.unavailable is None and query not in self.failed

    def why_not(self, query):
        return self.unavailable or self.failed.get(query, "")

    def supports(self, mode):
        return mode in ("off", "1s-hashmap", "1s-rocksdb")

    def job_flags(self, events, rate, parallelism, mode, workdir):
        flags = ["--set", f"events={events}", "--set", f"rate={int(rate)}", "--parallelism",
                 str(parallelism), "--progress-interval", "0", "--log-level", "warn"]
        if mode != "off":
            state = Path(workdir) / "flow-state"
            shutil.rmtree(state, ignore_errors=True)
            # 1s-hashmap: Flow's heap backend; 1s-rocksdb: keyed state in RocksDB (its scratch
            # files under the state dir, so runs do not share or leave them behind).
            backend = "rocksdb" if mode.endswith("rocksdb") else "heap"
            flags += ["--checkpoint-interval", "1s", "--state-dir", str(state),
                      "--state-backend", backend]
            if backend == "rocksdb":
                local = Path(workdir) / "flow-rocksdb-local"
                shutil.rmtree(local, ignore_errors=True)
                local.mkdir(parents=True)
                flags += ["--state-local-dir", str(local)]
        return flags

    def run(self, query, events, rate, parallelism, mode, workdir, check=False):
        from checksum import checksum_csv
        binary = self.bin_dir / (f"{query}-check" if check else query)
        cmd = [str(binary)] + self.job_flags(events, rate, parallelism, mode, workdir)
        out_path = Path(workdir) / f"flow-{query}.csv"
        code, _, err, cpu, wall = run_measured(cmd, stdout_path=out_path)
        if code != 0:
            raise RunError(f"flow {query} exited {code}: {err.strip()[-800:]}")
        rows, checksum = (checksum_csv(query, out_path.read_text()) if check else (-1, 0))
        out_path.unlink(missing_ok=True)
        return RunResult(rows, checksum, cpu, wall)
