#!/usr/bin/env node
'use strict';
// Rewrites the lists of built-in function and aggregate names in the three editor definitions
// from docs/functions.md (generated from stdlib/registry). Run after the registry changes:
//   node editors/tools/sync-functions.js
// The drift test (editors/tests/drift.test.js) fails until the lists match again.
const fs = require('fs');
const path = require('path');
const src = require('../tests/lib/flow-source');

const EDITORS = path.resolve(__dirname, '..');
const fns = src.registryFunctions();
const scalar = [...fns].filter(([, k]) => k === 'scalar').map(([n]) => n).sort();
const aggregate = [...fns].filter(([, k]) => k === 'aggregate').map(([n]) => n).sort();

// Longest names first so an alternation never stops at a prefix.
const alt = (names) => [...names].sort((a, b) => b.length - a.length || a.localeCompare(b)).join('|');

function replaceBetween(file, begin, end, body) {
  const text = fs.readFileSync(file, 'utf8');
  const i = text.indexOf(begin);
  const j = text.indexOf(end, i + begin.length);
  if (i < 0 || j < 0) throw new Error(`${file}: markers ${begin} / ${end} not found`);
  const lineEnd = text.indexOf('\n', i) + 1;
  const next = text.slice(0, lineEnd) + body + text.slice(text.lastIndexOf('\n', j) + 1);
  if (next !== text) {
    fs.writeFileSync(file, next);
    console.log('updated ' + path.relative(src.ROOT, file));
  }
}

function wrap(words, prefix, width) {
  const lines = [];
  let cur = prefix;
  for (const w of words) {
    if (cur.length + w.length + 1 > width && cur !== prefix) { lines.push(cur); cur = prefix; }
    cur += (cur === prefix ? '' : ' ') + w;
  }
  if (cur !== prefix) lines.push(cur);
  return lines.join('\n') + '\n';
}

// TextMate: the two `calls` patterns.
const tmPath = path.join(EDITORS, 'vscode', 'syntaxes', 'flow.tmLanguage.json');
const tm = JSON.parse(fs.readFileSync(tmPath, 'utf8'));
const calls = tm.repository.calls.patterns;
calls.find((p) => p.name === 'support.function.aggregate.flow').match = `\\b(${alt(aggregate)})\\s*(?=\\()`;
calls.find((p) => p.name === 'support.function.builtin.flow').match = `\\b(${alt(scalar)})\\s*(?=\\()`;
const tmText = JSON.stringify(tm, null, 2) + '\n';
if (tmText !== fs.readFileSync(tmPath, 'utf8')) {
  fs.writeFileSync(tmPath, tmText);
  console.log('updated ' + path.relative(src.ROOT, tmPath));
}

// vim: `syntax match` groups between marker comments.
const vimPath = path.join(EDITORS, 'vim', 'syntax', 'flow.vim');
if (fs.existsSync(vimPath)) {
  const vimAlt = (names) => alt(names).replace(/\|/g, '\\|');
  replaceBetween(vimPath, '" BEGIN registry functions', '" END registry functions',
    `syntax match flowAggregate "\\<\\%(${vimAlt(aggregate)}\\)\\ze\\s*("\n` +
    `syntax match flowFunction "\\<\\%(${vimAlt(scalar)}\\)\\ze\\s*("\n`);
}

// tree-sitter: the #any-of? lists in every highlights.scm.
const tsDir = path.join(EDITORS, 'tree-sitter-flow');
for (const rel of ['queries/highlights.scm', 'queries/nvim/highlights.scm', 'queries/helix/highlights.scm', 'queries/zed/highlights.scm']) {
  const file = path.join(tsDir, rel);
  if (!fs.existsSync(file)) continue;
  const q = (names) => wrap(names.map((n) => `"${n}"`), '    ', 96);
  replaceBetween(file, '; BEGIN registry aggregates', '; END registry aggregates', q(aggregate));
  replaceBetween(file, '; BEGIN registry functions', '; END registry functions', q(scalar));
}
