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

// tree-sitter: a pair of call patterns (registry name or not) in highlights.scm.
const tsQuery = path.join(EDITORS, 'tree-sitter-flow', 'queries', 'highlights.scm');
const re = `^(${[...aggregate, ...scalar].sort().join('|')})$`;
replaceBetween(tsQuery, ';; BEGIN registry functions', ';; END registry functions',
  `((call_expression function: (identifier) @function.builtin)\n (#match? @function.builtin "${re}"))\n` +
  `((call_expression function: (identifier) @function.call)\n (#not-match? @function.call "${re}"))\n`);

// The editor-specific query copies follow the base file.
require('child_process').execFileSync(process.execPath, [path.join(__dirname, 'gen-queries.js')], { stdio: 'inherit' });
