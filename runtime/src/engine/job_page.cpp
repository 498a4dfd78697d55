#include "job_page.h"

namespace flow::rt {

// Names from scripts reach the page only through textContent and setAttribute, never as markup.
std::string_view JobPageHtml() {
  static constexpr std::string_view kPage = R"flowpage(<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Flow job</title>
<style>
  body { font: 14px system-ui, sans-serif; margin: 0; color: #1d2430; background: #f6f7f9; }
  header { display: flex; gap: 24px; align-items: baseline; padding: 12px 20px; background: #1d2430; color: #fff; }
  header h1 { font-size: 18px; margin: 0; }
  .pill { padding: 2px 10px; border-radius: 10px; font-weight: 600; }
  .ready { background: #2e9d5b; } .notready { background: #c9572b; }
  main { padding: 16px 20px; }
  section { background: #fff; border: 1px solid #dde1e7; border-radius: 6px; padding: 12px 16px; margin-bottom: 16px; }
  h2 { font-size: 15px; margin: 0 0 8px; }
  svg text { font: 12px system-ui, sans-serif; }
  .op rect { fill: #fff; stroke-width: 2; }
  .op .name { font-weight: 600; font-size: 13px; }
  .edge { fill: none; stroke: #8a94a6; stroke-width: 1.5; }
  .edge-label { fill: #5b6578; font-size: 11px; }
  table { border-collapse: collapse; width: 100%; }
  th, td { text-align: right; padding: 3px 10px; border-bottom: 1px solid #eef0f3; }
  th:first-child, td:first-child { text-align: left; }
  .failed td { color: #c9572b; }
  #error { color: #c9572b; }
</style>
</head>
<body>
<header>
  <h1 id="job">Flow job</h1>
  <span id="status" class="pill">loading</span>
  <span id="summary"></span>
</header>
<main>
  <div id="error"></div>
  <section><h2>Graph</h2><svg id="graph" width="100%" height="120"></svg></section>
  <section><h2>Checkpoints</h2>
    <table><thead><tr><th>id</th><th>result</th><th>duration</th><th>size</th><th>ended</th></tr></thead>
      <tbody id="checkpoints"></tbody></table>
  </section>
</main>
<script>
"use strict";
const SVG = "http://www.w3.org/2000/svg";
const W = 210, H = 92, GAPX = 90, GAPY = 28;


function el(tag, attrs, text) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}
function human(n) {
  if (n === null || n === undefined || !isFinite(n)) return "–";
  const a = Math.abs(n);
  if (a >= 1e9) return (n / 1e9).toFixed(1) + "G";
  if (a >= 1e6) return (n / 1e6).toFixed(1) + "M";
  if (a >= 1e4) return (n / 1e3).toFixed(1) + "k";
  return a >= 100 || Number.isInteger(n) ? String(Math.round(n)) : n.toFixed(1);
}
function bytes(n) {
  const u = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
  return (i ? n.toFixed(1) : n) + " " + u[i];
}
function duration(ms) {
  if (ms === null || ms === undefined) return "–";
  if (ms < 1000) return ms + " ms";
  if (ms < 120000) return (ms / 1000).toFixed(1) + " s";
  if (ms < 7200000) return (ms / 60000).toFixed(1) + " min";
  if (ms < 172800000) return (ms / 3600000).toFixed(1) + " h";
  return (ms / 86400000).toFixed(0) + " d";
}
// Column of each operator: the longest path from a source.
function layers(job) {
  const col = {};
  job.operators.forEach(o => { col[o.name] = 0; });
  for (let i = 0; i < job.operators.length; i++) {
    job.edges.forEach(e => { col[e.to] = Math.max(col[e.to], col[e.from] + 1); });
  }
  return col;
}

function draw(job) {
  const svg = document.getElementById("graph");
  while (svg.firstChild) svg.removeChild(svg.firstChild);
  const col = layers(job), rows = {}, pos = {};
  job.operators.forEach(o => {
    const c = col[o.name];
    rows[c] = (rows[c] || 0) + 1;
    pos[o.name] = { x: 10 + c * (W + GAPX), y: 10 + (rows[c] - 1) * (H + GAPY) };
  });
  const maxRows = Math.max(1, ...Object.values(rows));
  const maxCol = Math.max(0, ...Object.values(col));
  svg.setAttribute("height", 20 + maxRows * (H + GAPY));
  svg.setAttribute("viewBox", `0 0 ${20 + (maxCol + 1) * (W + GAPX)} ${20 + maxRows * (H + GAPY)}`);
  const defs = el("defs");
  const marker = el("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto" });
  marker.appendChild(el("path", { d: "M0,0 L10,5 L0,10 z", fill: "#8a94a6" }));
  defs.appendChild(marker);
  svg.appendChild(defs);
  job.edges.forEach(e => {
    const a = pos[e.from], b = pos[e.to];
    if (!a || !b) return;
    const x1 = a.x + W, y1 = a.y + H / 2, x2 = b.x, y2 = b.y + H / 2, mx = (x1 + x2) / 2;
    svg.appendChild(el("path", { class: "edge", d: `M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2},${y2}`,
                                 "marker-end": "url(#arrow)", "data-from": e.from, "data-to": e.to }));
    const label = e.partitioning === "key" && e.key ? "key " + e.key : e.partitioning;
    svg.appendChild(el("text", { class: "edge-label", x: mx, y: (y1 + y2) / 2 - 6, "text-anchor": "middle" }, label));
  });
  job.operators.forEach(o => {
    const p = pos[o.name];
    // Rates come from the job (sampled once a second), so every viewer sees the same numbers.
    const rin = o.rate_in, rout = o.rate_out;
    // Share of the time upstream writers waited on this operator's full inputs, per subtask.
    const bp = o.backpressure_ms_per_s;
    const busy = bp === null ? null : Math.min(1, bp / 1000 / Math.max(1, o.parallelism));
    const color = busy === null ? "#8a94a6" : busy > 0.5 ? "#c9572b" : busy > 0.1 ? "#e0a030" : "#2e9d5b";
    const g = el("g", { class: "op", transform: `translate(${p.x},${p.y})`, "data-op": o.name,
                        "data-records-in": o.records_in === null ? "" : o.records_in,
                        "data-records-out": o.records_out === null ? "" : o.records_out,
                        "data-rate": rin === null ? (rout === null ? "" : rout) : rin });
    g.appendChild(el("rect", { width: W, height: H, rx: 6, stroke: color }));
    g.appendChild(el("text", { class: "name", x: 10, y: 18 }, o.name.length > 28 ? o.name.slice(0, 27) + "…" : o.name));
    g.appendChild(el("text", { x: W - 10, y: 18, "text-anchor": "end" }, o.kind + " ×" + o.parallelism));
    const lines = [];
    if (o.kind !== "source") lines.push("in " + human(rin) + "/s  (" + human(o.records_in) + ")");
    if (o.kind !== "sink") lines.push("out " + human(rout) + "/s  (" + human(o.records_out) + ")");
    lines.push("backpressure " + (busy === null ? "–" : Math.round(busy * 100) + "%") +
               (o.queue_capacity ? "  queue " + human(o.queue_depth) + "/" + human(o.queue_capacity) : ""));
    lines.push("watermark lag " + (o.watermark_ms === null ? "–" : duration(Math.max(0, job.now_ms - o.watermark_ms))));
    lines.forEach((t, i) => g.appendChild(el("text", { x: 10, y: 38 + i * 15 }, t)));
    svg.appendChild(g);
  });
}
function table(job) {
  const body = document.getElementById("checkpoints");
  while (body.firstChild) body.removeChild(body.firstChild);
  job.checkpoints.history.slice().reverse().forEach(c => {
    const tr = document.createElement("tr");
    tr.className = c.result === "completed" ? "cp" : "cp failed";
    const ago = Math.max(0, job.now_ms - c.end_ms);
    [c.id, c.result, duration(c.duration_ms), c.result === "completed" ? bytes(c.bytes) : "–",
     duration(ago) + " ago"].forEach(v => {
      const td = document.createElement("td");
      td.textContent = String(v);
      tr.appendChild(td);
    });
    body.appendChild(tr);
  });
}
async function poll() {
  try {
    const r = await fetch("api/job", { cache: "no-store" });
    if (!r.ok) throw new Error("HTTP " + r.status);
    const job = await r.json();
    const name = job.instance ? job.job + " (instance " + job.instance + ")" : job.job;
    document.title = "Flow: " + name;
    document.getElementById("job").textContent = name || "Flow job";
    const status = document.getElementById("status");
    status.textContent = job.status;
    status.className = "pill " + (job.ready ? "ready" : "notready");
    const cp = job.checkpoints;
    document.getElementById("summary").textContent =
      "parallelism " + job.parallelism + " · checkpoints " + cp.completed + " completed, " + cp.failed +
      " failed · restarts " + job.restarts;
    draw(job);
    table(job);
    document.getElementById("error").textContent = "";
  } catch (e) {
    document.getElementById("error").textContent = "cannot reach the job: " + e.message;
  }
}
poll();
setInterval(poll, 1000);
</script>
</body>
</html>
)flowpage";
  return kPage;
}

}  // namespace flow::rt
