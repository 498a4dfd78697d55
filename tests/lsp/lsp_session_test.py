#!/usr/bin/env python3
"""A scripted client session against the real `flowc lsp`: lifecycle and exit codes, diagnostics on
open/change/close, hover, definition, completion, formatting, document symbols, UTF-16 positions,
incremental edits, and protocol errors (malformed JSON, unknown methods, requests before
initialize, bad headers). Expected answers are written out here by hand.
Usage: lsp_session_test.py FLOWC"""
import json
import os
import select
import subprocess
import sys
import time

FLOWC = os.path.abspath(sys.argv[1])
failures = []
TIMEOUT = 60  # seconds for any single reply; a hang fails the test instead of blocking ctest


def expect(name, cond, detail=""):
    if not cond:
        failures.append(f"{name}: {detail}")


class Client:
    def __init__(self, *extra_args):
        self.p = subprocess.Popen([FLOWC, "lsp", *extra_args], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.buf = b""
        self.next_id = 1
        self.pending = []  # messages read while waiting for something else

    def send_raw(self, data: bytes):
        self.p.stdin.write(data)
        self.p.stdin.flush()

    def send(self, msg):
        body = json.dumps(msg).encode()
        self.send_raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def _read_message(self):
        deadline = time.time() + TIMEOUT
        fd = self.p.stdout.fileno()
        while True:
            sep = self.buf.find(b"\r\n\r\n")
            if sep >= 0:
                headers = self.buf[:sep].decode().split("\r\n")
                length = None
                for h in headers:
                    k, _, v = h.partition(":")
                    if k.strip().lower() == "content-length":
                        length = int(v.strip())
                assert length is not None, f"no Content-Length in {headers}"
                if len(self.buf) >= sep + 4 + length:
                    body = self.buf[sep + 4:sep + 4 + length]
                    self.buf = self.buf[sep + 4 + length:]
                    return json.loads(body.decode())
            left = deadline - time.time()
            if left <= 0:
                raise TimeoutError("no message from flowc lsp")
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 65536)
                if not chunk:
                    raise EOFError("flowc lsp closed its output")
                self.buf += chunk

    def wait_for(self, pred):
        for i, m in enumerate(self.pending):
            if pred(m):
                return self.pending.pop(i)
        while True:
            m = self._read_message()
            if pred(m):
                return m
            self.pending.append(m)

    def request(self, method, params=None, raw_id=None):
        rid = self.next_id if raw_id is None else raw_id
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return self.wait_for(lambda m: "method" not in m and m.get("id") == rid)

    def notify(self, method, params=None):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)

    def diagnostics(self, uri):
        m = self.wait_for(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                          and m["params"]["uri"] == uri)
        return m["params"]

    def finish(self):
        self.p.stdin.close()
        try:
            rc = self.p.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.p.kill()
            rc = "hung"
        err = self.p.stderr.read().decode(errors="replace")
        return rc, err


def pos(line, character):
    return {"line": line, "character": character}


def td(uri):
    return {"textDocument": {"uri": uri}}


URI = "file:///tmp/flow%20lsp/orders.flow"

# Line 4 has an unknown field `amout`; `é` in the string on line 3 makes UTF-16 columns differ from
# bytes after it (1 unit, 2 bytes), and the emoji (2 units, 4 bytes) even more.
BROKEN = (
    "param min_amount: float = 10.0\n"                                   # 0
    "schema Order { id: string, amount: float, ts: timestamp }\n"        # 1
    "\n"                                                                 # 2
    "stream big = from file(path: \"caf\u00e9\U0001F600.jsonl\") format json as Order\n"  # 3
    "  | where amout > min_amount\n"                                     # 4
    "  | select id, upper(id) as shout, amount * 2.0 as doubled\n"      # 5
    "big | into stdout format json\n"                                    # 6
)

# --- Requests before initialize, malformed input, then the lifecycle. ---
c = Client()
r = c.request("textDocument/hover", {**td(URI), "position": pos(0, 0)})
expect("request before initialize", r.get("error", {}).get("code") == -32002, r)
c.notify("textDocument/didOpen", {"textDocument": {"uri": URI, "languageId": "flow", "version": 1, "text": BROKEN}})
r = c.request("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
caps = r.get("result", {}).get("capabilities", {})
expect("initialize result", caps.get("hoverProvider") is True and caps.get("definitionProvider") is True
       and caps.get("documentFormattingProvider") is True and "completionProvider" in caps
       and caps.get("textDocumentSync", {}).get("change") == 2, r)
expect("server info", r.get("result", {}).get("serverInfo", {}).get("name") == "flowc", r)
c.notify("initialized", {})
r = c.request("initialize", {"capabilities": {}})
expect("second initialize", r.get("error", {}).get("code") == -32600, r)

# The didOpen before initialize was dropped: hover on it is an unknown document.
r = c.request("textDocument/hover", {**td(URI), "position": pos(0, 0)})
expect("didOpen before initialize is ignored", r.get("error", {}).get("code") == -32602, r)

# Malformed JSON -> ParseError with id null; the server keeps going.
c.send_raw(b"Content-Length: 9\r\n\r\n{\"id\": 1,")
r = c.wait_for(lambda m: "error" in m and m.get("id") is None)
expect("malformed JSON", r["error"]["code"] == -32700 and "at byte" in r["error"]["message"], r)
# A header block without Content-Length, then a non-object message, then a string id echo.
c.send_raw(b"Content-Type: x\r\n\r\n")
r = c.wait_for(lambda m: "error" in m and m.get("id") is None)
expect("bad header", r["error"]["code"] == -32700 and "Content-Length" in r["error"]["message"], r)
c.send_raw(b"Content-Length: 2\r\n\r\n[]")
r = c.wait_for(lambda m: "error" in m and m.get("id") is None)
expect("batch/array message", r["error"]["code"] == -32600, r)
r = c.request("frobnicate/now", {}, raw_id="abc")
expect("unknown method", r.get("id") == "abc" and r.get("error", {}).get("code") == -32601
       and "frobnicate/now" in r["error"]["message"], r)
c.notify("$/unknownNotification", {"x": 1})  # ignored: no reply
r = c.request("textDocument/hover", {**td(URI)})
expect("missing params", r.get("error", {}).get("code") == -32602, r)

# --- Diagnostics on open. ---
c.notify("textDocument/didOpen", {"textDocument": {"uri": URI, "languageId": "flow", "version": 1, "text": BROKEN}})
d = c.diagnostics(URI)
diags = d["diagnostics"]
expect("one diagnostic", len(diags) == 1, diags)
if diags:
    dg = diags[0]
    expect("diagnostic range", dg["range"] == {"start": pos(4, 10), "end": pos(4, 15)}, dg)
    expect("diagnostic code/severity", dg["code"] == "unknown-field" and dg["severity"] == 1
           and dg.get("source") == "flowc", dg)
    expect("diagnostic message", "amout" in dg["message"] and "did you mean `amount`" in dg["message"], dg)
    rel = dg.get("relatedInformation", [])
    expect("note as related information", len(rel) == 1 and rel[0]["location"]["uri"] == URI
           and rel[0]["location"]["range"]["start"] == pos(1, 7) and "Order" in rel[0]["message"], rel)
expect("diagnostics version", d.get("version") == 1, d)

# Completion while the text has an error still knows the program (from the analysis with errors).
r = c.request("textDocument/completion", {**td(URI), "position": pos(4, 10)})
labels = [i["label"] for i in r["result"]["items"]]
expect("completion in where: fields", {"id", "amount", "ts"} <= set(labels), labels)
expect("completion in where: params and functions", "min_amount" in labels and "upper" in labels
       and "count" in labels, labels)
upper = next((i for i in r["result"]["items"] if i["label"] == "upper"), {})
expect("function completion has signature", upper.get("detail", "").startswith("upper(s: string) -> string"), upper)

# A quick fix from the "did you mean" hint replaces exactly the misspelled name.
r = c.request("textDocument/codeAction", {**td(URI), "range": {"start": pos(4, 11), "end": pos(4, 11)},
                                          "context": {"diagnostics": diags}})
actions = r.get("result") or []
expect("quick fix for a misspelled field", len(actions) == 1 and actions[0]["kind"] == "quickfix"
       and actions[0]["edit"]["changes"][URI] == [{"range": {"start": pos(4, 10), "end": pos(4, 15)},
                                                   "newText": "amount"}], r)
r = c.request("textDocument/codeAction", {**td(URI), "range": {"start": pos(0, 0), "end": pos(0, 3)},
                                          "context": {"diagnostics": []}})
expect("no quick fix away from the diagnostic", r.get("result") == [], r)

# --- Incremental change fixes it: replace `amout` (4:10-4:15) with `amount`. ---
c.notify("textDocument/didChange", {"textDocument": {"uri": URI, "version": 2},
                                    "contentChanges": [{"range": {"start": pos(4, 10), "end": pos(4, 15)},
                                                        "text": "amount"}]})
d = c.diagnostics(URI)
expect("fixed: no diagnostics", d["diagnostics"] == [] and d.get("version") == 2, d)

# An incremental edit after the non-ASCII characters on line 3, in UTF-16 units: the string
# `"café😀.jsonl"` starts at character 29; `.jsonl` starts at 29 + 1 + 4 + 2 = 36 (é is one unit,
# the emoji two); in bytes it would be 39.
c.notify("textDocument/didChange", {"textDocument": {"uri": URI, "version": 3},
                                    "contentChanges": [{"range": {"start": pos(3, 36), "end": pos(3, 42)},
                                                        "text": ".json"}]})
d = c.diagnostics(URI)
expect("utf-16 edit keeps the script valid", d["diagnostics"] == [], d)
# Hover on `Order` after the non-ASCII text; its expected UTF-16 column is computed here from the
# line itself (UTF-16 length of the prefix).
line3 = BROKEN.split("\n")[3].replace(".jsonl", ".json")
order_col = len(line3[:line3.index("as Order") + 3].encode("utf-16-le")) // 2
expect("test setup: emoji counts two units", order_col == len(line3[:line3.index("as Order") + 3]) + 1, order_col)
r = c.request("textDocument/hover", {**td(URI), "position": pos(3, order_col + 2)})
expect("hover after non-ASCII text: schema", "schema Order" in json.dumps(r.get("result")), r)
if r.get("result"):
    expect("hover range in UTF-16", r["result"]["range"] == {"start": pos(3, order_col), "end": pos(3, order_col + 5)},
           r["result"])

# --- Hover. ---
def hover_text(line, ch):
    r = c.request("textDocument/hover", {**td(URI), "position": pos(line, ch)})
    res = r.get("result")
    return res["contents"]["value"] if res else None

h = hover_text(4, 12)  # amount in where
expect("hover field", h is not None and "amount: float" in h and "Order" in h, h)
h = hover_text(4, 22)  # min_amount
expect("hover param", h is not None and "param min_amount: float" in h, h)
h = hover_text(5, 17)  # upper
expect("hover function", h is not None and "upper(s: string) -> string" in h and "upper case" in h, h)
h = hover_text(6, 1)  # big
expect("hover stream record", h is not None and "stream big" in h and "shout: string" in h
       and "doubled: float" in h, h)
h = hover_text(1, 9)  # Order declaration
expect("hover schema", h is not None and "schema Order {" in h and "ts: timestamp" in h, h)
h = hover_text(2, 0)
expect("hover on nothing", h is None, h)

# --- Definition. ---
def definition(line, ch):
    r = c.request("textDocument/definition", {**td(URI), "position": pos(line, ch)})
    return r.get("result")

loc = definition(6, 1)
expect("definition of stream", loc == {"uri": URI, "range": {"start": pos(3, 7), "end": pos(3, 10)}}, loc)
loc = definition(4, 12)
expect("definition of schema field", loc and loc["range"] == {"start": pos(1, 27), "end": pos(1, 33)}, loc)
loc = definition(4, 22)
expect("definition of param", loc and loc["range"] == {"start": pos(0, 6), "end": pos(0, 16)}, loc)
loc = definition(5, 17)
expect("builtin has no definition", loc is None, loc)

# --- Completion contexts. ---
def completion(line, ch):
    r = c.request("textDocument/completion", {**td(URI), "position": pos(line, ch)})
    return [i["label"] for i in r["result"]["items"]]

# Append a new step to the sink pipeline: after `|` the operators.
c.notify("textDocument/didChange", {"textDocument": {"uri": URI, "version": 4},
                                    "contentChanges": [{"range": {"start": pos(6, 4), "end": pos(6, 4)},
                                                        "text": "| "}]})
c.diagnostics(URI)
labels = completion(6, 6)
expect("after |: operators", set(labels) == {"where", "key by", "window", "aggregate", "select",
                                             "explode", "union", "join", "into"}, labels)
# `big | where ` : the fields of big's record (the last good analysis; the text has errors).
c.notify("textDocument/didChange", {"textDocument": {"uri": URI, "version": 5},
                                    "contentChanges": [{"range": {"start": pos(6, 6), "end": pos(6, 6)},
                                                        "text": "where "}]})
d = c.diagnostics(URI)
expect("incomplete text has a syntax error", any(x["code"] == "syntax-error" for x in d["diagnostics"]), d)
labels = completion(6, 12)
expect("fields after | where", {"id", "shout", "doubled"} <= set(labels) and "amount" not in labels, labels)
c.notify("textDocument/didChange", {"textDocument": {"uri": URI, "version": 6},
                                    "contentChanges": [{"range": {"start": pos(6, 4), "end": pos(6, 12)},
                                                        "text": ""}]})
d = c.diagnostics(URI)
expect("back to valid", d["diagnostics"] == [], d)
labels = completion(3, 18)  # after `from `
expect("after from: source connectors", "kafka" in labels and "file" in labels and "stdout" not in labels, labels)
labels = completion(0, 18)  # `param min_amount: ` -> types
expect("type position", "float" in labels and "Order" in labels and "upper" not in labels, labels)

# --- Full-text sync also works (no range). ---
UNFORMATTED = "param  n : int=1\nschema S{a:int}\nstream s=from file(path:\"x\") format json as S|where a>n\ns|into stdout format json\n"
c.notify("textDocument/didChange", {"textDocument": {"uri": URI, "version": 7},
                                    "contentChanges": [{"text": UNFORMATTED}]})
d = c.diagnostics(URI)
expect("full sync", d["diagnostics"] == [], d)

# --- Formatting: the edit must give what `flowc fmt` gives for the same text. ---
fmt = subprocess.run([FLOWC, "fmt", "-"], input=UNFORMATTED.encode(), stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE, timeout=60)
r = c.request("textDocument/formatting", {**td(URI), "options": {"tabSize": 2, "insertSpaces": True}})
edits = r.get("result")
if fmt.returncode == 0:
    expected = fmt.stdout.decode()
    expect("test setup: the text is not in the canonical layout", expected != UNFORMATTED, expected)
    expect("formatting: one whole-document edit", isinstance(edits, list) and len(edits) == 1
           and edits[0]["range"]["start"] == pos(0, 0) and edits[0]["range"]["end"] == pos(4, 0)
           and edits[0]["newText"] == expected, r)
    # Formatting what is already formatted changes nothing.
    c.notify("textDocument/didChange", {"textDocument": {"uri": URI, "version": 7},
                                        "contentChanges": [{"text": expected}]})
    c.diagnostics(URI)
    r = c.request("textDocument/formatting", {**td(URI), "options": {"tabSize": 2, "insertSpaces": True}})
    expect("formatting canonical text: no edits", r.get("result") == [], r)
else:
    failures.append(f"flowc fmt - failed: {fmt.stderr.decode()}")
c.notify("textDocument/didChange", {"textDocument": {"uri": URI, "version": 8},
                                    "contentChanges": [{"text": "stream = = \n"}]})
c.diagnostics(URI)
r = c.request("textDocument/formatting", {**td(URI), "options": {"tabSize": 2, "insertSpaces": True}})
expect("formatting with syntax errors fails cleanly", r.get("error", {}).get("code") == -32803
       and "syntax" in r["error"]["message"], r)

# --- Document symbols. ---
c.notify("textDocument/didChange", {"textDocument": {"uri": URI, "version": 9},
                                    "contentChanges": [{"text": BROKEN.replace("amout", "amount")}]})
c.diagnostics(URI)
r = c.request("textDocument/documentSymbol", td(URI))
syms = r.get("result") or []
expect("symbols", [s["name"] for s in syms] == ["min_amount", "Order", "big", "into stdout"], syms)
if len(syms) > 1:
    expect("schema children", [x["name"] for x in syms[1].get("children", [])] == ["id", "amount", "ts"], syms[1])

# --- A pathological document: deep nesting and a long line must not crash or hang. ---
DEEP = "param p: int = " + "(" * 100000 + "1" + ")" * 100000 + "\n" + "x" * 200000 + "\n"
URI2 = "file:///tmp/deep.flow"
c.notify("textDocument/didOpen", {"textDocument": {"uri": URI2, "languageId": "flow", "version": 1, "text": DEEP}})
d = c.diagnostics(URI2)
expect("deep nesting reported", any(x["code"] == "nesting-too-deep" for x in d["diagnostics"]), d["diagnostics"][:2])
r = c.request("textDocument/hover", {**td(URI2), "position": pos(0, 50000)})
expect("hover on pathological text", "result" in r, r)
r = c.request("textDocument/completion", {**td(URI2), "position": pos(1, 100000)})
expect("completion on pathological text", "result" in r, r)

# --- A join, an extern fn and step keywords (positions found in the text here). ---
JOIN = (
    "schema Order { order_id: string, total: float, ts: timestamp }\n"
    "schema Payment { order_id: string, amount: float, country: string, ts: timestamp }\n"
    "stream orders = from file(path: \"o\") format json as Order event time ts watermark 5s\n"
    "stream payments = from file(path: \"p\") format json as Payment event time ts watermark 5s\n"
    "extern fn risk(amount: float, country: string) -> float from \"udf/risk.h\"\n"
    "orders\n"
    "  | join payments on orders.order_id == payments.order_id within 30s\n"
    "  | select orders.order_id, risk(payments.amount, payments.country) as score\n"
    "  | into stdout format json\n"
)
URI3 = "file:///tmp/join.flow"
JLINES = JOIN.split("\n")


def at(needle, shift=0, nth=0):
    """(line, UTF-16 character) of the nth occurrence of needle, plus shift."""
    seen = 0
    for i, line in enumerate(JLINES):
        start = 0
        while (j := line.find(needle, start)) >= 0:
            if seen == nth:
                return i, j + shift
            seen += 1
            start = j + 1
    raise ValueError(needle)


c.notify("textDocument/didOpen", {"textDocument": {"uri": URI3, "languageId": "flow", "version": 1, "text": JOIN}})
d = c.diagnostics(URI3)
expect("join script is valid", d["diagnostics"] == [], d)


def ask(method, where):
    r = c.request(method, {**td(URI3), "position": pos(*where)})
    return r.get("result")


h = ask("textDocument/hover", at("payments.order_id", 10))
expect("hover qualified field", h and "order_id: string" in h["contents"]["value"]
       and "`payments`" in h["contents"]["value"], h)
loc = ask("textDocument/definition", at("payments.order_id", 10))
expect("qualified field -> Payment's field", loc and loc["range"]["start"] == pos(*at("order_id", 0, 1)), loc)
loc = ask("textDocument/definition", at("payments on", 2))
expect("join right side -> stream", loc and loc["range"]["start"] == pos(*at("payments =", 0)), loc)
h = ask("textDocument/hover", at("risk(payments", 1))
expect("hover extern fn", h and 'extern fn risk(amount: float, country: string) -> float from "udf/risk.h"'
       in h["contents"]["value"], h)
loc = ask("textDocument/definition", at("risk(payments", 1))
expect("extern fn call -> declaration", loc and loc["range"]["start"] == pos(*at("risk(amount", 0)), loc)
sh = ask("textDocument/signatureHelp", at("payments.country", 0))
expect("signature help in an extern fn call", sh and sh["activeParameter"] == 1
       and sh["signatures"][0]["label"] == "risk(amount: float, country: string) -> float", sh)
h = ask("textDocument/hover", at("select", 2))
expect("hover step keyword: its output record", h and "order_id: string" in h["contents"]["value"]
       and "score: float" in h["contents"]["value"], h)
h = ask("textDocument/hover", at("as score", 5))
expect("hover alias", h and "score: float" in h["contents"]["value"], h)
# References of `order_id` of Payment (its declaration, `payments.order_id` in the join) and of
# the `orders` stream (declaration, head, two qualifiers in the join, one in the select).
r = c.request("textDocument/references", {**td(URI3), "position": pos(*at("payments.order_id", 10)),
                                          "context": {"includeDeclaration": True}})
starts = [tuple(x["range"]["start"].values()) for x in r.get("result") or []]
expect("references of a schema field", starts == [at("order_id", 0, 1), at("payments.order_id", 9)], starts)
r = c.request("textDocument/references", {**td(URI3), "position": pos(*at("orders", 0, 1)),
                                          "context": {"includeDeclaration": False}})
starts = [tuple(x["range"]["start"].values()) for x in r.get("result") or []]
expect("references of a stream without its declaration",
       starts == [at("orders", 0, 1), at("orders.order_id", 0), at("orders.order_id", 0, 1)], starts)
r = c.request("textDocument/documentHighlight", {**td(URI3), "position": pos(*at("as score", 5))})
hl = [(tuple(x["range"]["start"].values()), x["kind"]) for x in r.get("result") or []]
expect("highlight of an alias", hl == [(at("as score", 3), 3)], hl)
labels = [i["label"] for i in ask("textDocument/completion", at("orders.order_id,", 7))["items"]]
expect("completion after qualifier", labels == ["order_id", "total", "ts"], labels)
h = ask("textDocument/hover", at("file(", 1))
expect("hover source connector", h and "file(path: string)" in h["contents"]["value"]
       and "source connector" in h["contents"]["value"], h)
h = ask("textDocument/hover", at("stdout", 2))
expect("hover sink connector", h and "stdout(" in h["contents"]["value"]
       and "sink connector" in h["contents"]["value"], h)
h = ask("textDocument/hover", at("json", 1))
expect("hover format", h and "format json" in h["contents"]["value"], h)
labels = [i["label"] for i in ask("textDocument/completion", at("file(", 5))["items"]]
expect("completion of a connector's arguments", labels == ["path"], labels)
c.notify("textDocument/didChange", {"textDocument": {"uri": URI3, "version": 2}, "contentChanges": [
    {"range": {"start": pos(*at("file(", 5)), "end": pos(*at("file(", 5))}, "text": "path: \"o\", "},
]})
labels = [i["label"] for i in ask("textDocument/completion", (at("file(", 0)[0], at("file(", 5)[1] + 11))["items"]]
expect("after a `,` in connector arguments", labels == ["path"], labels)
c.diagnostics(URI3)  # version 2, published when the completion request analysed it
c.notify("textDocument/didChange", {"textDocument": {"uri": URI3, "version": 3}, "contentChanges": [{"text": JOIN}]})
d = c.diagnostics(URI3)
expect("back to the join script", d["version"] == 3 and d["diagnostics"] == [], d)
r = c.request("textDocument/documentSymbol", td(URI3))
expect("symbols of the join script", [x["name"] for x in r.get("result", [])] ==
       ["Order", "Payment", "orders", "payments", "risk", "into stdout"], r)

# --- A burst of changes: every answer reflects the latest text, diagnostics end at the last version. ---
for v in range(10, 42):
    text = JOIN.replace("as score", f"as score{v}")
    c.notify("textDocument/didChange", {"textDocument": {"uri": URI3, "version": v},
                                        "contentChanges": [{"text": text}]})
# A request right after the burst (no waiting for diagnostics) sees the last text.
h = ask("textDocument/hover", at("as score", 5))
expect("hover after a burst of changes sees the latest text", h and "score41: float" in h["contents"]["value"], h)
versions = []
while True:
    d = c.diagnostics(URI3)
    versions.append(d["version"])
    if d["version"] == 41:
        break
expect("diagnostics versions increase and end at the last", versions == sorted(set(versions)) and d["diagnostics"] == [],
       (versions, d))

# --- Close clears diagnostics. ---
c.notify("textDocument/didClose", td(URI))
d = c.diagnostics(URI)
expect("close clears diagnostics", d["diagnostics"] == [], d)
r = c.request("textDocument/hover", {**td(URI), "position": pos(0, 0)})
expect("closed document is unknown", r.get("error", {}).get("code") == -32602, r)

# --- shutdown / exit. ---
r = c.request("shutdown")
expect("shutdown result", "result" in r and r["result"] is None, r)
r = c.request("textDocument/hover", {**td(URI2), "position": pos(0, 0)})
expect("request after shutdown", r.get("error", {}).get("code") == -32600, r)
c.notify("exit")
try:
    rc = c.p.wait(timeout=TIMEOUT)
except subprocess.TimeoutExpired:
    c.p.kill()
    rc = "hung"
expect("exit after shutdown -> 0", rc == 0, rc)
err = c.p.stderr.read().decode(errors="replace")
out_rest = c.p.stdout.read()
expect("logs go to stderr", "malformed JSON" in err, err[-500:])

# --- exit without shutdown -> 1; end of input without shutdown -> 1; --stdio accepted. ---
c = Client("--stdio")
c.request("initialize", {"capabilities": {"textDocument": {"hover": {"contentFormat": ["plaintext"]}}}})
c.notify("initialized", {})
c.notify("textDocument/didOpen", {"textDocument": {"uri": URI3, "languageId": "flow", "version": 1, "text": JOIN}})
c.diagnostics(URI3)
r = c.request("textDocument/hover", {**td(URI3), "position": pos(*at("risk(payments", 1))})
hv = (r.get("result") or {}).get("contents", {})
expect("plaintext hover for a client without Markdown", hv.get("kind") == "plaintext"
       and "`" not in hv.get("value", "`") and hv["value"].startswith("extern fn risk("), r)
c.notify("exit")
try:
    rc = c.p.wait(timeout=TIMEOUT)
except subprocess.TimeoutExpired:
    c.p.kill()
    rc = "hung"
expect("exit without shutdown -> 1", rc == 1, rc)
c = Client()
c.request("initialize", {"capabilities": {}})
rc, _ = c.finish()
expect("EOF without shutdown -> 1", rc == 1, rc)
p = subprocess.run([FLOWC, "help", "lsp"], capture_output=True, timeout=60)
expect("flowc help lsp", p.returncode == 0 and b"Content-Length" in p.stdout and b"Exit codes" in p.stdout, p)
p = subprocess.run([FLOWC, "--help"], capture_output=True, timeout=60)
expect("flowc --help lists lsp", p.returncode == 0 and b"\n  lsp " in p.stdout, p.stdout)
p = subprocess.run([FLOWC, "lsp", "--tcp"], stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
expect("unknown lsp option -> 2", p.returncode == 2 and b"--tcp" in p.stderr, p)

if failures:
    print("FAILED:\n  " + "\n  ".join(str(f) for f in failures))
    sys.exit(1)
print("lsp session: all checks passed")
