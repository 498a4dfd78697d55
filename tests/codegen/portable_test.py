#!/usr/bin/env python3
"""flowc build --portable (compiler/codegen/portable.h): the job directory runs in an empty root
directory (chroot: no libraries, no /proc, no /etc) and prints exactly what the ordinary binary
of the same script prints; its launcher is static. Usage: portable_test.py FLOWC WORKDIR"""
import os
import shutil
import subprocess
import sys

FLOWC = os.path.abspath(sys.argv[1])
WORK = os.path.abspath(sys.argv[2])
failures = []

SCRIPT = """
schema Reading { sensor: string, level: int, quality: float, ts: timestamp }
from datagen(count: 20000, rate: 100, seed: 7, cardinality: 20, max: 500, disorder: 3s) as Reading
  event time ts watermark 3s
  | where quality > 0.1
  | key by sensor
  | window tumbling 1m
  | aggregate avg(level) as mean, count() as readings
  | select sensor, window_start, mean, readings
  | into stdout format csv
"""


def expect(name, cond, detail=""):
    if not cond:
        failures.append(f"{name}: {detail}")


def run(argv, **kw):
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600, **kw)


shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
script = os.path.join(WORK, "readings.flow")
with open(script, "w") as f:
    f.write(SCRIPT)

plain = os.path.join(WORK, "plain")
p = run([FLOWC, "build", script, "-o", plain])
if p.returncode != 0:
    sys.exit(f"plain build failed: {p.stderr.decode()}")
app = os.path.join(WORK, "dist", "readings")
p = run([FLOWC, "build", script, "-o", app, "--portable", "--verbose"])
if p.returncode != 0:
    sys.exit(f"portable build failed: {p.stderr.decode()}")
expect("verbose build says how many libraries", "shared libraries in" in p.stderr.decode(), p.stderr.decode())

reference = run([plain, "--parallelism", "1"])
expect("plain run", reference.returncode == 0 and reference.stdout.count(b"\n") >= 50,
       reference.stderr.decode()[-2000:])

launcher = os.path.join(app, "readings")
ldd = run(["ldd", launcher])
expect("the launcher is static", b"not a dynamic executable" in ldd.stdout + ldd.stderr
       or b"statically linked" in ldd.stdout + ldd.stderr, (ldd.stdout + ldd.stderr).decode())
libs = set(os.listdir(os.path.join(app, "lib")))
expect("glibc and the loader travel with the job", "libc.so.6" in libs
       and any(n.startswith("ld-linux") for n in libs), sorted(libs))
expect("the runtime's libraries travel with the job", any(n.startswith("librdkafka") for n in libs)
       and any(n.startswith("libfmt") for n in libs), sorted(libs))

# Moved elsewhere and started by a relative path: the same output.
moved = os.path.join(WORK, "elsewhere")
shutil.copytree(app, os.path.join(moved, "readings"))
here = run(["./readings/readings", "--parallelism", "1"], cwd=moved)
expect("moved, relative path", here.returncode == 0 and here.stdout == reference.stdout,
       here.stderr.decode()[-2000:])

# An empty root directory: only the job directory inside.
root = os.path.join(WORK, "root")
shutil.copytree(app, os.path.join(root, "job"))
expect("the root holds nothing else", os.listdir(root) == ["job"], os.listdir(root))
chroot = ["chroot", root, "/job/readings", "--parallelism", "1"]
if os.geteuid() != 0:
    chroot = ["unshare", "--map-root-user"] + chroot  # a user namespace allows chroot
jailed = run(chroot)
expect("in an empty chroot", jailed.returncode == 0 and jailed.stdout == reference.stdout,
       f"exit {jailed.returncode}: {jailed.stderr.decode()[-2000:]}")

# Usage errors: --portable writes a directory.
a_file = os.path.join(WORK, "a-file")
open(a_file, "w").close()
p = run([FLOWC, "build", script, "-o", a_file, "--portable"])
expect("a file as the directory", p.returncode == 1 and b"is a file" in p.stderr, p.stderr.decode())

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("portable: ok")
