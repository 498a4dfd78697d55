#!/usr/bin/env python3
"""`flowc fmt` from the command line: in place, directories, stdin, --check and its exit codes,
syntax errors left untouched, usage errors; and every example and Nexmark query checks and
explains the same before and after formatting.

Usage: fmt_cli_test.py FLOWC SOURCE_DIR
"""
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

FLOWC = os.path.abspath(sys.argv[1])
SOURCE = os.path.abspath(sys.argv[2])
failures = []


def run(args, cwd=None, stdin=None):
    return subprocess.run([FLOWC] + args, cwd=cwd, input=stdin, capture_output=True, text=True,
                          timeout=120)


def expect(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


UNFORMATTED = 'schema L{text:string}\nstream w=from stdin() format raw as L|where text!=""\n' \
              'w|into stdout format csv;\n'
# Written by hand: the canonical layout of UNFORMATTED.
FORMATTED = 'schema L { text: string }\nstream w = from stdin() format raw as L | where text != ""\n' \
            'w | into stdout format csv\n'


def test_stdin():
    r = run(["fmt", "-"], stdin=UNFORMATTED)
    expect(r.returncode == 0, f"fmt - exits 0, got {r.returncode}: {r.stderr}")
    expect(r.stdout == FORMATTED, f"fmt - prints the canonical layout, got:\n{r.stdout}")
    r = run(["fmt", "--check", "-"], stdin=UNFORMATTED)
    expect(r.returncode == 1, "--check - exits 1 for unformatted stdin")
    expect("<stdin>: would be reformatted" in r.stdout, f"--check - names <stdin>: {r.stdout}")
    r = run(["fmt", "--check", "-"], stdin=FORMATTED)
    expect(r.returncode == 0 and r.stdout == "", f"--check - exits 0 silently: {r.stdout}")


def test_in_place_and_check(tmp):
    messy = os.path.join(tmp, "messy.flow")
    tidy = os.path.join(tmp, "tidy.flow")
    write(messy, UNFORMATTED)
    write(tidy, FORMATTED)
    r = run(["fmt", "--check", messy, tidy])
    expect(r.returncode == 1, f"--check exits 1 when a file would change, got {r.returncode}")
    expect(f"{messy}: would be reformatted" in r.stdout, f"--check lists the file: {r.stdout}")
    expect(tidy not in r.stdout, "--check does not list a formatted file")
    expect("@@ line 1 @@" in r.stdout and "-schema L{text:string}" in r.stdout
           and "+schema L { text: string }" in r.stdout, f"--check shows a diff hint: {r.stdout}")
    expect(read(messy) == UNFORMATTED, "--check does not write")
    r = run(["fmt", messy, tidy])
    expect(r.returncode == 0, f"fmt exits 0: {r.stderr}")
    expect(read(messy) == FORMATTED, f"fmt rewrites in place, got:\n{read(messy)}")
    expect(read(tidy) == FORMATTED, "fmt leaves a formatted file as it is")
    r = run(["fmt", "--check", messy, tidy])
    expect(r.returncode == 0 and r.stdout == "", f"--check after fmt exits 0: {r.stdout}")


def test_directory(tmp):
    root = os.path.join(tmp, "tree")
    write(os.path.join(root, "a.flow"), UNFORMATTED)
    write(os.path.join(root, "sub", "deeper", "b.flow"), UNFORMATTED)
    write(os.path.join(root, "notes.txt"), UNFORMATTED)
    write(os.path.join(root, ".hidden", "c.flow"), UNFORMATTED)
    r = run(["fmt", "--check", root])
    expect(r.returncode == 1 and r.stdout.count("would be reformatted") == 2,
           f"--check DIR lists both scripts: {r.stdout}")
    r = run(["fmt", root])
    expect(r.returncode == 0, f"fmt DIR exits 0: {r.stderr}")
    expect(read(os.path.join(root, "a.flow")) == FORMATTED, "fmt DIR formats a.flow")
    expect(read(os.path.join(root, "sub", "deeper", "b.flow")) == FORMATTED,
           "fmt DIR formats nested scripts")
    expect(read(os.path.join(root, "notes.txt")) == UNFORMATTED, "fmt DIR skips other files")
    expect(read(os.path.join(root, ".hidden", "c.flow")) == UNFORMATTED,
           "fmt DIR skips hidden directories")
    # A symbolic link: the target is rewritten, the link stays a link.
    target = os.path.join(tmp, "target.flow")
    link = os.path.join(tmp, "link.flow")
    write(target, UNFORMATTED)
    os.symlink(target, link)
    r = run(["fmt", link])
    expect(r.returncode == 0 and os.path.islink(link) and read(target) == FORMATTED,
           f"fmt through a symlink rewrites its target: {r.stderr}")


def test_syntax_error(tmp):
    bad = os.path.join(tmp, "bad.flow")
    text = "stream s = from stdin( format raw\ns | into   stdout\n"
    write(bad, text)
    before = os.stat(bad).st_mtime_ns
    for args in (["fmt", bad], ["fmt", "--check", bad]):
        r = run(args)
        expect(r.returncode == 1, f"{args}: a syntax error exits 1, got {r.returncode}")
        expect(f"{bad}:1:" in r.stderr and "error:" in r.stderr,
               f"{args}: prints the diagnostics: {r.stderr}")
        expect("not formatted" in r.stderr, f"{args}: says the file was left alone")
    expect(read(bad) == text and os.stat(bad).st_mtime_ns == before, "a bad script is untouched")
    # The same rendering as `flowc check`.
    check = run(["check", "--color", "never", bad])
    fmt = run(["fmt", bad])
    diag_lines = [l for l in check.stderr.splitlines() if not l.startswith("flowc:")]
    expect(all(l in fmt.stderr.splitlines() for l in diag_lines),
           f"fmt renders like check:\n{check.stderr}\nvs\n{fmt.stderr}")
    r = run(["fmt", "-"], stdin="param = 1\n")
    expect(r.returncode == 1 and r.stdout == "" and "<stdin>:1:" in r.stderr,
           f"bad stdin: exit 1, nothing on stdout: {r.returncode} {r.stdout!r} {r.stderr}")


def test_usage():
    for args, what in ((["fmt"], "no paths"), (["fmt", "--frobnicate", "x.flow"], "unknown option"),
                       (["fmt", "--indent", "x", "a.flow"], "bad --indent"),
                       (["fmt", "--max-width=5", "a.flow"], "too small --max-width"),
                       (["fmt", "-", "-"], "stdin twice")):
        r = run(args)
        expect(r.returncode == 2 and "flowc: error:" in r.stderr, f"{what}: usage error exits 2")
    r = run(["fmt", "/nonexistent/dir/x.flow"])
    expect(r.returncode == 1 and "cannot read" in r.stderr, f"missing file exits 1: {r.stderr}")
    r = run(["help", "fmt"])
    expect(r.returncode == 0 and "--check" in r.stdout, "flowc help fmt documents --check")
    r = run(["fmt", "--indent", "4", "-"], stdin="s | where a | into stdout\n")
    expect(r.stdout == "s\n    | where a\n    | into stdout\n", f"--indent 4: {r.stdout!r}")


def diagnostics(root, rel):
    r = run(["check", "--diagnostics-format", "json", rel], cwd=root)
    kinds = collections.Counter()
    for line in r.stdout.splitlines():
        d = json.loads(line)
        kinds[(d["severity"], d["kind"], d["message"])] += 1
    return r.returncode, kinds


def explain(root, rel):
    r = run(["explain", rel], cwd=root)
    # Formatting moves statements to other lines; everything else must stay.
    return r.returncode, re.sub(r"\bline \d+", "line N", r.stdout)


def test_examples_keep_their_meaning(tmp):
    copy = os.path.join(tmp, "copy")
    scripts = []
    for sub in ("examples", "bench/nexmark"):
        shutil.copytree(os.path.join(SOURCE, sub), os.path.join(copy, sub))
        for dirpath, _, names in os.walk(os.path.join(SOURCE, sub)):
            scripts += [os.path.relpath(os.path.join(dirpath, n), SOURCE)
                        for n in names if n.endswith(".flow")]
    expect(len(scripts) >= 15, f"found the examples: {scripts}")
    r = run(["fmt", "examples", "bench/nexmark"], cwd=copy)
    expect(r.returncode == 0, f"fmt over the examples exits 0: {r.stderr}")
    r = run(["fmt", "--check", "examples", "bench/nexmark"], cwd=copy)
    expect(r.returncode == 0, f"a second pass changes nothing: {r.stdout}")
    explained = 0
    for rel in sorted(scripts):
        before, after = diagnostics(SOURCE, rel), diagnostics(copy, rel)
        expect(before == after, f"{rel}: check differs after formatting: {before} vs {after}")
        if before[0] == 0:
            eb, ea = explain(SOURCE, rel), explain(copy, rel)
            expect(eb == ea, f"{rel}: explain differs after formatting:\n{eb[1]}\nvs\n{ea[1]}")
            explained += eb[0] == 0
    expect(explained >= 10, f"most examples explain ({explained})")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        test_stdin()
        test_in_place_and_check(tmp)
        test_directory(tmp)
        test_syntax_error(tmp)
        test_usage()
        test_examples_keep_their_meaning(tmp)
    if failures:
        print(f"{len(failures)} failure(s)")
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
