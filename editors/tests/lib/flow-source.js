'use strict';
// The sources of truth the editor support must follow: the keywords of grammar/Flow.g4, the
// function names of the stdlib registry (as documented in docs/functions.md) and the example
// programs in examples/. Also a small independent lexer, written from the lexer rules of Flow.g4,
// that the tests use to decide what each piece of an example is.
const fs = require('fs');
const path = require('path');

const ROOT = path.resolve(__dirname, '..', '..', '..');
// Overridable for testing the tests.
const GRAMMAR = process.env.FLOW_GRAMMAR_FILE || path.join(ROOT, 'grammar', 'Flow.g4');
const FUNCTIONS_MD = process.env.FLOW_FUNCTIONS_MD || path.join(ROOT, 'docs', 'functions.md');

function fail(message) {
  const err = new Error(message);
  err.flowMissingSource = true;
  throw err;
}

function stripG4Comments(text) {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/[^\n]*/g, '');
}

// Every word-like literal token of Flow.g4 ('stream', 'exactly_once', ...), and the subset the
// `ident` rule also accepts as a name ("soft" keywords).
function grammarKeywords() {
  if (!fs.existsSync(GRAMMAR)) fail(`missing ${path.relative(ROOT, GRAMMAR)}: cannot read the keywords`);
  const text = stripG4Comments(fs.readFileSync(GRAMMAR, 'utf8'));
  const keywords = new Set();
  const tokenOf = new Map();  // token name -> literal, for rules like `KEY : 'key' ;`
  for (const m of text.matchAll(/^\s*([A-Z][A-Za-z0-9_]*)\s*:\s*'([a-z_][a-z0-9_]*)'\s*;/gm)) {
    tokenOf.set(m[1], m[2]);
  }
  // Literals written in lexer or parser rules, skipping character sets and fragments of other tokens.
  for (const rule of text.split(';')) {
    const head = rule.match(/^\s*(fragment\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*:/);
    if (!head || head[1]) continue;
    const name = head[2];
    const isLexer = /^[A-Z]/.test(name);
    // A lexer rule that is more than one literal (DURATION's unit suffixes, ...) is not a keyword.
    if (isLexer && !/^\s*[A-Z][A-Za-z0-9_]*\s*:\s*'[^']*'\s*(->.*)?$/s.test(rule)) continue;
    for (const m of rule.matchAll(/'([a-z_][a-z0-9_]*)'/g)) keywords.add(m[1]);
  }
  if (keywords.size === 0) fail(`no keywords found in ${path.relative(ROOT, GRAMMAR)}`);
  const soft = new Set();
  const identRule = text.match(/^\s*ident\s*:([^;]*);/m);
  if (identRule) {
    for (const alt of identRule[1].split('|')) {
      const tok = alt.trim();
      if (tokenOf.has(tok)) soft.add(tokenOf.get(tok));
    }
  }
  return { keywords: [...keywords].sort(), soft };
}

// Function names from docs/functions.md, generated from the registry. Accepts headings
// (`### upper`, `### \`upper(s)\``) and table rows whose first cell names the function.
function registryFunctions() {
  if (!fs.existsSync(FUNCTIONS_MD)) {
    fail(`missing ${path.relative(ROOT, FUNCTIONS_MD)} (generated from stdlib/registry): cannot read the function names`);
  }
  const text = fs.readFileSync(FUNCTIONS_MD, 'utf8');
  const names = new Map();  // name -> 'aggregate' | 'scalar'
  let section = '';
  for (const line of text.split('\n')) {
    const heading = line.match(/^(#{1,6})\s+(.*)$/);
    if (heading) {
      const title = heading[2].replace(/`/g, '').trim();
      const fn = title.match(/^([a-z_][a-z0-9_]*)\s*(\(|$)/);
      if (heading[1].length <= 2 || !fn) section = title.toLowerCase();
      if (fn && heading[1].length >= 3 && !/\s/.test(title.replace(/\(.*$/, ''))) {
        if (/\(/.test(title) || heading[1].length >= 3) names.set(fn[1], kindOf(section));
      }
      continue;
    }
    const row = line.match(/^\|\s*`([a-z_][a-z0-9_]*)\s*\(/);
    if (row) names.set(row[1], kindOf(section));
  }
  if (names.size === 0) fail(`no function names found in ${path.relative(ROOT, FUNCTIONS_MD)}`);
  return names;
}

function kindOf(section) {
  return /aggregate/.test(section) ? 'aggregate' : 'scalar';
}

function examples() {
  const dir = path.join(ROOT, 'examples');
  const files = [];
  const walk = (d) => {
    if (!fs.existsSync(d)) return;
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.flow')) files.push(p);
    }
  };
  walk(dir);
  files.push(path.join(__dirname, '..', 'fixtures', 'tour.flow'));
  return files.sort();
}

// Splits Flow source into tokens following the lexer rules of Flow.g4:
// {kind: 'comment'|'string'|'duration'|'float'|'int'|'word'|'punct', text, line, col} with
// 0-based line and col; multi-line block comments give one token per line.
function lex(source) {
  const out = [];
  const lines = source.split('\n');
  let inBlock = false;
  lines.forEach((line, ln) => {
    let i = 0;
    while (i < line.length) {
      if (inBlock) {
        const end = line.indexOf('*/', i);
        const stop = end < 0 ? line.length : end + 2;
        out.push({ kind: 'comment', text: line.slice(i, stop), line: ln, col: i });
        if (end >= 0) inBlock = false;
        i = stop;
        continue;
      }
      const rest = line.slice(i);
      let m;
      if (/^\s/.test(rest)) { i++; continue; }
      if (rest.startsWith('//')) {
        out.push({ kind: 'comment', text: rest, line: ln, col: i });
        break;
      }
      if (rest.startsWith('/*')) { inBlock = true; continue; }
      if ((m = rest.match(/^"(?:[^"\\]|\\.)*"?/))) {
        out.push({ kind: 'string', text: m[0], line: ln, col: i });
      } else if ((m = rest.match(/^[0-9]+(?:ms|s|m|h|d)(?![A-Za-z0-9_])/))) {
        out.push({ kind: 'duration', text: m[0], line: ln, col: i });
      } else if ((m = rest.match(/^(?:[0-9]+\.[0-9]+(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+)/))) {
        out.push({ kind: 'float', text: m[0], line: ln, col: i });
      } else if ((m = rest.match(/^[0-9]+/))) {
        out.push({ kind: 'int', text: m[0], line: ln, col: i });
      } else if ((m = rest.match(/^[A-Za-z_][A-Za-z0-9_]*/))) {
        out.push({ kind: 'word', text: m[0], line: ln, col: i });
      } else if ((m = rest.match(/^(?:->|==|!=|<=|>=|.)/))) {
        out.push({ kind: 'punct', text: m[0], line: ln, col: i });
      }
      i += m[0].length;
    }
  });
  return out;
}

module.exports = { ROOT, grammarKeywords, registryFunctions, examples, lex };
