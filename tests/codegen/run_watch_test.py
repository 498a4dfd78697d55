#!/usr/bin/env python3
"""`flowc run --watch`: a save of the script re-checks it and restarts the job; a script with an
error shows its diagnostic and keeps waiting; the output is limited to --rows lines; SIGINT stops
the job and flowc (exit 0).

Usage: run_watch_test.py FLOWC WORKDIR CACHE_HOME"""
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

FLOWC, WORK, CACHE = (os.path.abspath(a) for a in sys.argv[1:4])
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
script = os.path.join(WORK, "watched.flow")
data = os.path.join(WORK, "in.jsonl")
with open(data, "w") as f:
    for i in range(1, 9):
        f.write('{"user":"u%d","n":%d}\n' % (i, i))


def write_script(where, tag):
    # Each save differs in its first line (the watcher looks at mtime and size; the binary cache
    # keys on the generated C++, so equal scripts may reuse a binary, which is fine here).
    body = ("// %s %d %f\nparam input: string = \"none\"\nschema Ev { user: string, n: int }\n"
            "stream s = from file(path: input) format json as Ev\n  | where %s\n"
            "s | into stdout format csv\n" % (tag, os.getpid(), time.time(), where))
    tmp = script + ".tmp"
    with open(tmp, "w") as f:
        f.write(body)
    os.replace(tmp, script)  # as editors save: the watcher never sees half a file


out_lines, err_lines = [], []
lock = threading.Lock()


def reader(stream, sink):
    for raw in iter(stream.readline, b""):
        with lock:
            sink.append(raw.decode().rstrip("\n"))


def wait_for(pred, what, timeout=240):
    deadline = time.time() + timeout
    while time.time() < deadline:
        with lock:
            if pred():
                return
        time.sleep(0.1)
    with lock:
        raise AssertionError(f"timed out waiting for {what}\nstdout: {out_lines}\nstderr: {err_lines[-30:]}")


write_script("n > 6", "first")
env = dict(os.environ, XDG_CACHE_HOME=CACHE)
p = subprocess.Popen([FLOWC, "run", "--watch", "--rows", "3", script, "--set", "input=" + data],
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
threads = [threading.Thread(target=reader, args=(p.stdout, out_lines), daemon=True),
           threading.Thread(target=reader, args=(p.stderr, err_lines), daemon=True)]
for t in threads:
    t.start()
try:
    # The first run: the rows that pass the filter, and the job's exit reported.
    wait_for(lambda: any("the job exited with 0 after 2 rows" in l for l in err_lines), "the first run's end")
    with lock:
        assert out_lines == ["u7,7", "u8,8"], out_lines
        out_lines.clear()

    # A save with an error: its diagnostic, no run, still watching.
    time.sleep(0.05)
    write_script("m > 6", "broken")
    wait_for(lambda: any("[unknown-field]" in l for l in err_lines), "the diagnostic of the broken save")
    wait_for(lambda: any("waiting for a change" in l for l in err_lines[-3:]), "waiting after the error")
    with lock:
        assert out_lines == [], out_lines

    # A valid save again: a new run with the new filter, its output cut at --rows 3.
    write_script("n > 2", "second")
    wait_for(lambda: any("the job exited with 0 after 6 rows" in l for l in err_lines), "the second run's end")
    with lock:
        assert out_lines == ["u3,3", "u4,4", "u5,5"], out_lines
        assert any("more rows not shown (--rows 3)" in l for l in err_lines), err_lines[-10:]
    p.send_signal(signal.SIGINT)
    rc = p.wait(timeout=30)
    assert rc == 0, f"flowc exited with {rc}"
finally:
    if p.poll() is None:
        p.kill()
print("run --watch: ok")
