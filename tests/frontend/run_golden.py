#!/usr/bin/env python3
"""Golden tests for the Flow front end.

Each tests/frontend/*.flow file is checked with `flowc check` (run from this folder, so paths in
diagnostics are bare file names). The expected stderr is kept at the end of the file itself, one
`// CHECK: <line>` comment per line of output. Files named `fail_*.flow` must exit 1; all others
(`ok_*.flow`) must exit 0. An optional `// ARGS: ...` line adds command-line arguments (after the
file), e.g. `--max-errors 2` or a second, missing file. flowc checks a copy of the file without
its CHECK block, so the expectations never change what is checked.

Usage:
  run_golden.py --flowc build/bin/flowc [--update] [FILE...]   compare (or rewrite expectations)
  run_golden.py --flowc build/bin/flowc --coverage             every diagnostic kind has a test
Update mode is also enabled by FLOW_GOLDEN_UPDATE=1.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CHECK = "// CHECK:"


def split(data: bytes):
    """Returns (source without the trailing CHECK block, expected lines, extra args)."""
    lines = data.split(b"\n")
    # The CHECK block is the trailing run of CHECK lines (and a final empty string after "\n").
    end = len(lines)
    while end > 0 and lines[end - 1] == b"":
        end -= 1
    start = end
    while start > 0 and lines[start - 1].startswith(CHECK.encode()):
        start -= 1
    expected = [l[len(CHECK):].decode("utf-8", "replace") for l in lines[start:end]]
    expected = [e[1:] if e.startswith(" ") else e for e in expected]
    source = b"\n".join(lines[:start])
    if not source.endswith(b"\n"):
        source += b"\n"
    args = []
    for l in lines[:start]:
        m = re.match(rb"^// ARGS:(.*)$", l)
        if m:
            args = m.group(1).decode().split()
    return source, expected, args


def run(flowc, name, source, args):
    # flowc sees the file without its CHECK block (so expectations never feed back into the
    # input, e.g. inside an unterminated comment), under the same name, in a scratch folder.
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, name), "wb") as f:
            f.write(source)
        p = subprocess.run([flowc, "check", "--color", "never", name] + args, cwd=tmp,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    out = p.stderr.decode("utf-8", "replace").rstrip("\n")
    return p.returncode, (out.split("\n") if out else [])


def render(source: bytes, lines):
    block = "".join(CHECK + (" " + l if l else "") + "\n" for l in lines)
    return source + block.encode()


def check_one(flowc, name, update):
    path = os.path.join(HERE, name)
    with open(path, "rb") as f:
        data = f.read()
    source, expected, args = split(data)
    rc, actual = run(flowc, name, source, args)
    want_rc = 1 if name.startswith("fail_") else 0
    problems = []
    if update:
        with open(path, "wb") as f:
            f.write(render(source, actual))
        expected = actual
    if rc != want_rc:
        problems.append(f"exit code {rc}, expected {want_rc}")
    if rc not in (0, 1):
        problems.append("flowc crashed or misbehaved")
    if actual != expected:
        import difflib
        diff = "\n".join(difflib.unified_diff(expected, actual, "expected", "actual", lineterm=""))
        problems.append("output differs:\n" + diff)
    return problems


def coverage(flowc):
    out = subprocess.run([flowc, "help", "diagnostics"], stdout=subprocess.PIPE, check=True).stdout.decode()
    kinds = [l.split()[0] for l in out.splitlines() if l.strip()]
    seen = set()
    for name in os.listdir(HERE):
        if name.endswith(".flow"):
            with open(os.path.join(HERE, name), "rb") as f:
                _, expected, _ = split(f.read())
            for l in expected:
                seen.update(re.findall(r"\[([a-z0-9-]+)\]$", l))
    missing = [k for k in kinds if k not in seen]
    if missing:
        print("diagnostic kinds without a golden test: " + ", ".join(missing))
        return 1
    print(f"all {len(kinds)} diagnostic kinds have golden tests")
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--flowc", required=True)
    ap.add_argument("--update", action="store_true")
    ap.add_argument("--coverage", action="store_true")
    ap.add_argument("files", nargs="*")
    a = ap.parse_args()
    flowc = os.path.abspath(a.flowc)
    if a.coverage:
        return coverage(flowc)
    update = a.update or os.environ.get("FLOW_GOLDEN_UPDATE") == "1"
    files = a.files or sorted(n for n in os.listdir(HERE) if n.endswith(".flow"))
    failed = 0
    for name in files:
        name = os.path.basename(name)
        problems = check_one(flowc, name, update)
        if problems:
            failed += 1
            print(f"FAIL {name}")
            for p in problems:
                print("  " + p.replace("\n", "\n  "))
        else:
            print(f"ok   {name}")
    print(f"{len(files) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
