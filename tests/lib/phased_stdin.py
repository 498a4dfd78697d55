"""Helpers for tests that feed a flowc-built job's stdin in phases, so that what is late is
deterministic: the test writes a phase, then waits on the job's metrics endpoint until every
task's watermark (flow_watermark_ms) reached the phase's final watermark before it writes the
next one. Used by tests/codegen_ops/late_records_test.py and tests/late_sink/late_sink_job_test.py.
"""
import datetime
import re
import subprocess
import threading
import time
import urllib.request


def rfc(t):
    """Epoch ms as the JSON encoder writes timestamps: RFC 3339, milliseconds, Z."""
    return datetime.datetime.fromtimestamp(t / 1000, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + \
        f"{t % 1000:03d}Z"


def fired(end, lateness, wm):
    """Whether a window ending (exclusively) at `end` with `lateness` has fired at watermark `wm`."""
    return end - 1 + lateness <= wm


def scrape(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as resp:
        return resp.read().decode()


def metric_values(text, name):
    """[(labels text, value)] of every sample of `name`."""
    out = []
    for line in text.splitlines():
        m = re.match(r"^" + re.escape(name) + r"(\{[^}]*\})?\s+(\S+)$", line)
        if m:
            out.append((m.group(1) or "", float(m.group(2))))
    return out


class PhasedRun:
    """`argv` (which must ask for `--metrics-port 0`) started with stdin and stdout as pipes and
    stderr in `err_path`; stdout is read on a thread so the job never blocks on it."""

    def __init__(self, argv, err_path, cwd=None):
        self.err_path = err_path
        with open(err_path, "wb") as err:
            self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, cwd=cwd)
        self._chunks = []
        self._reader = threading.Thread(target=lambda: self._chunks.append(self.p.stdout.read()))
        self._reader.start()

    def err(self):
        with open(self.err_path) as f:
            return f.read()

    def port(self, timeout=120):
        """The metrics port the job logged, or None if it did not within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.p.poll() is None:
            m = re.search(r"http://127\.0\.0\.1:(\d+)/metrics", self.err())
            if m:
                return int(m.group(1))
            time.sleep(0.05)
        return None

    def feed(self, port, phases, encode, expect, tag, timeout=120):
        """Writes each (records, wm_after) phase as encode(record) lines and waits until every
        task's watermark is >= wm_after. Returns the last metrics text, or None after reporting
        (through `expect`) a phase whose watermark did not arrive."""
        text = ""
        for i, (recs, wm_after) in enumerate(phases):
            self.p.stdin.write("".join(encode(r) + "\n" for r in recs).encode())
            self.p.stdin.flush()
            deadline = time.monotonic() + timeout
            while True:
                text = scrape(port)
                wms = [v for _, v in metric_values(text, "flow_watermark_ms")]
                if wms and min(wms) >= wm_after:
                    break
                if time.monotonic() > deadline or self.p.poll() is not None:
                    expect(f"{tag}: phase {i} watermark {wm_after}", False, f"{wms}\n" + self.err()[-2000:])
                    return None
                time.sleep(0.01)
        return text

    def finish(self, timeout=300):
        """Closes stdin (the job drains and ends) and returns (exit code or "timeout", stdout)."""
        self.p.stdin.close()
        try:
            code = self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            code = "timeout"
        self._reader.join()
        return code, b"".join(self._chunks).decode()
