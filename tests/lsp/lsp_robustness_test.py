#!/usr/bin/env python3
"""`flowc lsp` under hostile traffic, with fixed seeds so every run is the same: random edits of the
examples (including non-ASCII text, unbalanced brackets, stray line terminators and ranges past
the end) each followed by a random request, then random well-framed but malformed messages. Every
request must get a result or a JSON-RPC error, the server must stay alive to answer a final
request, and shutdown/exit must give exit code 0.
Usage: lsp_robustness_test.py FLOWC EXAMPLES_DIR"""
import json
import os
import random
import select
import subprocess
import sys
import threading
import time

FLOWC = os.path.abspath(sys.argv[1])
EXAMPLES = sys.argv[2]
failures = []
TIMEOUT = 60
ALLOWED_ERRORS = {-32700, -32600, -32601, -32602, -32002, -32803}


def expect(name, cond, detail=""):
    if not cond:
        failures.append(f"{name}: {str(detail)[:400]}")


# The session test's client, without running that test.
src = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "lsp_session_test.py")).read()
exec(src[src.index("class Client"):src.index("def pos(")])

examples = [open(os.path.join(EXAMPLES, f), encoding="utf-8").read()
            for f in sorted(os.listdir(EXAMPLES)) if f.endswith(".flow")]
PIECES = ["|", " ", "\n", "(", ")", ".", ",", ":", "where ", "select ", "\u00e9", "\U0001F600", "\"",
          "/*", "//", "as ", "from ", "into ", "format ", "x", "1", "{", "}", "<", ">", "->", "cast(",
          "case ", "join ", "\r\n", "\r", "kafka(", "window tumbling ", "\\"]
METHODS = ["textDocument/hover", "textDocument/definition", "textDocument/completion",
           "textDocument/formatting", "textDocument/documentSymbol"]

# Part 1: edits and requests.
rng = random.Random(7)
c = Client()
c.request("initialize", {"capabilities": {}})
URI = "file:///tmp/robust.flow"
c.notify("textDocument/didOpen", {"textDocument": {"uri": URI, "languageId": "flow", "version": 1,
                                                   "text": examples[0]}})
answered = 0
for step in range(250):
    line, ch = rng.randrange(70), rng.randrange(130)
    end = {"line": line + rng.randrange(3), "character": rng.randrange(130)}
    text = "".join(rng.choice(PIECES) for _ in range(rng.randrange(4)))
    change = {"range": {"start": {"line": line, "character": ch}, "end": end}, "text": text}
    if rng.random() < 0.05:
        change = {"text": rng.choice(examples)}
    c.notify("textDocument/didChange", {"textDocument": {"uri": URI, "version": step + 2},
                                        "contentChanges": [change]})
    method = rng.choice(METHODS)
    r = c.request(method, {"textDocument": {"uri": URI},
                           "position": {"line": rng.randrange(70), "character": rng.randrange(130)},
                           "options": {"tabSize": 2, "insertSpaces": True}})
    ok = "result" in r or r.get("error", {}).get("code") in ALLOWED_ERRORS
    expect(f"step {step} {method}", ok, r)
    answered += bool(r.get("result"))
expect("the edited documents still get real answers", answered > 50, answered)
r = c.request("shutdown")
expect("shutdown after edits", "result" in r, r)
c.notify("exit")
expect("exit code after edits", c.p.wait(timeout=60) == 0)

# Part 2: malformed and ill-typed messages, framed correctly. Replies are drained on a thread so
# neither side blocks on a full pipe.
rng = random.Random(11)
c = Client()
c.request("initialize", {"capabilities": {}})
got = []


def drain():
    while True:
        try:
            got.append(c._read_message())
        except Exception:
            return


threading.Thread(target=drain, daemon=True).start()
VALUES = [None, True, 1, -1, 2 ** 70, 1.5, "x", "", [], {}, [{}], {"uri": 1},
          {"textDocument": {"uri": "file:///a"}}, {"textDocument": {"uri": "file:///a", "text": "stream"}}]
KEYS = ["textDocument", "uri", "text", "position", "line", "character", "contentChanges", "range",
        "start", "end", "version", "options"]
ALL = ["textDocument/didOpen", "textDocument/didChange", "textDocument/didClose", *METHODS,
       "initialize", "no/such", "$/cancelRequest"]


def value(depth=0):
    k = rng.random()
    if depth < 3 and k < 0.3:
        return {rng.choice(KEYS): value(depth + 1) for _ in range(rng.randrange(4))}
    if depth < 3 and k < 0.4:
        return [value(depth + 1) for _ in range(rng.randrange(3))]
    return rng.choice(VALUES)


for i in range(1500):
    msg = {"jsonrpc": "2.0", "method": rng.choice(ALL), "params": value()}
    if rng.random() < 0.5:
        msg["id"] = rng.choice([i, str(i), None, 1.5, [1]])
    body = json.dumps(msg).encode()
    if rng.random() < 0.1:
        b = bytearray(body)
        for _ in range(3):
            b[rng.randrange(len(b))] = rng.randrange(256)
        body = bytes(b)
    c.send_raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)
c.send({"jsonrpc": "2.0", "id": "final", "method": "shutdown"})
deadline = time.time() + 120
while time.time() < deadline and not any(m.get("id") == "final" for m in got):
    time.sleep(0.05)
final = next((m for m in got if m.get("id") == "final"), None)
expect("alive after malformed traffic", final is not None and "result" in final, final)
for m in got:
    if "error" in m:
        expect("only protocol error codes", m["error"]["code"] in ALLOWED_ERRORS, m)
c.notify("exit")
expect("exit code after malformed traffic", c.p.wait(timeout=60) == 0)

if failures:
    print("FAILED:\n  " + "\n  ".join(failures[:30]))
    sys.exit(1)
print("lsp robustness: all checks passed")
