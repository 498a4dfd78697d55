#!/usr/bin/env python3
"""Command-line behaviour of flowc: exit codes (0 ok, 1 errors, 2 usage), help, version, JSON
diagnostics, colour. Usage: cli_test.py FLOWC"""
import json
import os
import subprocess
import sys

FLOWC = os.path.abspath(sys.argv[1])
HERE = os.path.dirname(os.path.abspath(__file__))
failures = []


def run(*args):
    p = subprocess.run([FLOWC, *args], cwd=HERE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def expect(name, cond, detail=""):
    if not cond:
        failures.append(f"{name}: {detail}")


rc, out, _ = run("--version")
expect("version", rc == 0 and out.startswith("flowc "), out)
rc, out, _ = run("--help")
expect("help", rc == 0 and "check" in out and "Exit codes" in out, out)
rc, _, _ = run()
expect("no arguments is a usage error", rc == 2)
rc, _, err = run("chek", "x.flow")
expect("unknown command", rc == 2 and "unknown command `chek`" in err and "did you mean `check`" in err, err)
rc, _, err = run("--frobnicate")
expect("unknown global flag", rc == 2 and "unknown option" in err, err)
rc, _, err = run("check")
expect("check without files", rc == 2 and "at least one file" in err, err)
rc, _, err = run("check", "--frob", "ok_contract.flow")
expect("unknown check flag", rc == 2 and "unknown option `--frob`" in err, err)
rc, _, err = run("check", "--diagnostics-format", "xml", "ok_contract.flow")
expect("bad format value", rc == 2 and "text or json" in err, err)
rc, _, err = run("check", "--color")
expect("missing flag value", rc == 2, err)
for args in (("check", "--help"), ("help", "check")):
    rc, out, _ = run(*args)
    expect("command help " + " ".join(args), rc == 0 and out.startswith("Usage: flowc check"), out)
rc, out, _ = run("help", "diagnostics")
expect("diagnostics list", rc == 0 and "unknown-field" in out and "unused-stream" in out, out)

rc, out, err = run("check", "ok_contract.flow")
expect("clean file", rc == 0 and out == "" and err == "", err)
rc, out, err = run("check", "ok_contract.flow", "fail_unknown_field.flow")
expect("several files, one failing", rc == 1 and "in 2 files" in err, err)
rc, out, err = run("check", "--diagnostics-format=json", "fail_unknown_field.flow")
expect("json goes to stdout only", rc == 1 and err == "", err)
objs = [json.loads(l) for l in out.splitlines()]
expect("json objects", len(objs) == 2 and all(o["kind"] == "unknown-field" for o in objs), out)
if objs:
    o = objs[0]
    expect("json fields", (o["file"], o["line"], o["column"], o["end_column"], o["severity"]) ==
           ("fail_unknown_field.flow", 3, 16, 19, "error"), o)
    expect("json help and notes", o["help"] == "did you mean `user`?" and o["notes"][0]["line"] == 1, o)
rc, _, err = run("check", "--color", "always", "fail_unknown_field.flow")
expect("colour", rc == 1 and "\x1b[" in err, err)
rc, _, err = run("check", "--color", "never", "fail_unknown_field.flow")
expect("no colour", "\x1b[" not in err, err)


def run_on_terminal(env_extra, *args):
    """flowc with stderr on a pseudo-terminal (automatic colour looks at it); returns its bytes."""
    import pty
    master, slave = pty.openpty()
    env = dict(os.environ)
    env.pop("NO_COLOR", None)
    env.update(env_extra)
    p = subprocess.Popen([FLOWC, *args], cwd=HERE, stdout=subprocess.DEVNULL, stderr=slave, env=env)
    os.close(slave)
    data = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO once the child closed its end
            break
        if not chunk:
            break
        data += chunk
    os.close(master)
    p.wait(timeout=60)
    return data.decode("utf-8", "replace")


# Automatic colour: on for a terminal, off when NO_COLOR is set, for check and for build (which
# prints the same diagnostics); an explicit --color wins over NO_COLOR.
err = run_on_terminal({}, "check", "fail_unknown_field.flow")
expect("automatic colour on a terminal", "\x1b[" in err, err)
err = run_on_terminal({"NO_COLOR": "1"}, "check", "fail_unknown_field.flow")
expect("NO_COLOR turns automatic colour off", "\x1b[" not in err and "unknown-field" in err, err)
err = run_on_terminal({"NO_COLOR": "1"}, "build", "fail_unknown_field.flow", "-o", os.devnull)
expect("NO_COLOR for build", "\x1b[" not in err and "unknown-field" in err, err)
err = run_on_terminal({"NO_COLOR": "1"}, "check", "--color", "always", "fail_unknown_field.flow")
expect("--color always wins over NO_COLOR", "\x1b[" in err, err)

# check reports what only a build would find (lowering and code generation), without compiling.
rc, _, err = run("check", "fail_unsupported_codegen.flow")
expect("check reports unsupported constructs", rc == 1 and "[unsupported]" in err, err)

rc, _, err = run("check", "ok_unused_stream_warning.flow")
expect("warnings do not fail", rc == 0 and "warning:" in err, err)

for f in failures:
    print("FAIL " + f)
print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
