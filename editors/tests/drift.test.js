'use strict';
// One source of truth: every keyword of grammar/Flow.g4 and every function of the stdlib registry
// (docs/functions.md, generated from it) must be highlighted by the TextMate grammar, the vim
// syntax and the tree-sitter queries; and the editors must not highlight keywords or functions
// that no longer exist. Fails with a clear message when Flow.g4 or docs/functions.md is missing.
// Usage: node drift.test.js   (after a registry change: node ../tools/sync-functions.js)
const fs = require('fs');
const path = require('path');
const src = require('./lib/flow-source');
const { loadGrammar, tokenize, scopesAt } = require('./lib/textmate');
const { runVim } = require('./lib/vim');

const EDITORS = path.resolve(__dirname, '..');
const KEYWORDISH = /^(keyword|constant\.language|storage\.type)\./;
const VIM_KEYWORD_GROUPS = ['flowDeclaration', 'flowPipeline', 'flowErrorPolicy', 'flowWindow', 'flowJoin',
  'flowDelivery', 'flowConditional', 'flowCast', 'flowOperatorWord', 'flowBoolean', 'flowNull', 'flowTimestamp'];
// Words the editors highlight that are not Flow.g4 keywords: Kafka start offsets and window fields.
const EXTRA_WORDS = new Set(['earliest', 'latest', 'window_start', 'window_end', 'TODO', 'FIXME', 'XXX', 'NOTE']);

const failures = [];
let checks = 0;
function check(ok, message) {
  checks++;
  if (!ok) failures.push(message);
}

function stripScmComments(text) {
  return text.split('\n').map((l) => l.replace(/(^|\s);.*$/, '')).join('\n');
}

async function main() {
  let keywords;
  let functions;
  try {
    keywords = src.grammarKeywords().keywords;
    functions = src.registryFunctions();
  } catch (e) {
    if (!e.flowMissingSource) throw e;
    console.error('drift: ' + e.message);
    process.exit(1);
  }

  // TextMate: each keyword alone on a line; each function in a call.
  const grammar = await loadGrammar();
  for (const k of keywords) {
    const scopes = scopesAt(tokenize(grammar, k), 0, 0);
    check(scopes.some((s) => KEYWORDISH.test(s)), `textmate: keyword "${k}" is not highlighted as a keyword (${scopes.join(' ')})`);
  }
  for (const [name, kind] of functions) {
    const line = `| select ${name}(x) as y`;
    const scopes = scopesAt(tokenize(grammar, line), 0, line.indexOf(name));
    const want = kind === 'aggregate' ? 'support.function.aggregate.flow' : 'support.function.builtin.flow';
    check(scopes.includes(want), `textmate: ${kind} "${name}" is not highlighted as ${want} (${scopes.join(' ')})`);
  }
  const tm = JSON.parse(fs.readFileSync(path.join(EDITORS, 'vscode', 'syntaxes', 'flow.tmLanguage.json'), 'utf8'));
  for (const p of tm.repository.calls.patterns.filter((p) => p.name.startsWith('support.function.'))) {
    for (const name of p.match.match(/\(([a-z0-9_|]+)\)/)[1].split('|')) {
      check(functions.has(name), `textmate: highlights "${name}", which is not in the registry`);
    }
  }

  // vim: the same lines, through vim's own syntax engine.
  const cases = [];
  for (const k of keywords) {
    cases.push({ lines: [k], line: 1, col: 1, len: k.length, groups: VIM_KEYWORD_GROUPS, not: [], what: `vim: keyword "${k}"` });
  }
  for (const [name, kind] of functions) {
    const line = `| select ${name}(x) as y`;
    cases.push({ lines: [line], line: 1, col: line.indexOf(name) + 1, len: name.length,
      groups: [kind === 'aggregate' ? 'flowAggregate' : 'flowFunction'], not: [], what: `vim: ${kind} "${name}"` });
  }
  const vim = runVim(cases, '');
  checks += vim.checks;
  failures.push(...vim.failures);
  const vimSyntax = fs.readFileSync(path.join(EDITORS, 'vim', 'syntax', 'flow.vim'), 'utf8');
  for (const m of vimSyntax.matchAll(/^syntax keyword \w+ (.*)$/gm)) {
    for (const w of m[1].split(/\s+/).filter((w) => w && w !== 'contained')) {
      check(keywords.includes(w) || EXTRA_WORDS.has(w), `vim: "syntax keyword" lists "${w}", which is not a keyword of Flow.g4`);
    }
  }
  for (const m of vimSyntax.matchAll(/^syntax match flow(?:Function|Aggregate) "\\<\\%\(([^)]*)\\\)/gm)) {
    for (const name of m[1].split('\\|')) {
      check(functions.has(name), `vim: highlights "${name}", which is not in the registry`);
    }
  }

  // tree-sitter: every keyword is a quoted node in highlights.scm and a literal of grammar.js;
  // every quoted word there is a keyword; the builtin-call pattern lists exactly the registry.
  const tsDir = path.join(EDITORS, 'tree-sitter-flow');
  const grammarJs = fs.readFileSync(path.join(tsDir, 'grammar.js'), 'utf8');
  const queryFiles = [path.join(tsDir, 'queries', 'highlights.scm'), ...variantQueries()];
  for (const file of queryFiles) {
    const rel = path.relative(src.ROOT, file);
    const query = stripScmComments(fs.readFileSync(file, 'utf8'));
    const quoted = new Set([...query.matchAll(/"([a-z_][a-z0-9_]*)"/g)].map((m) => m[1]));
    for (const k of keywords) {
      // A keyword is an anonymous node ("stream") or, for literals, a named one ((true)).
      check(quoted.has(k) || query.includes(`(${k})`), `tree-sitter: keyword "${k}" has no highlight in ${rel}`);
    }
    for (const w of quoted) {
      check(keywords.includes(w), `tree-sitter: ${rel} highlights "${w}", which is not a keyword of Flow.g4`);
    }
    const builtin = query.match(/#match\? @[\w.]+ "\^\(([a-z0-9_|]+)\)\$"\)\)\s*\(\(call_expression function: \(identifier\) @[\w.]+\)\s*\(#not-match\?/);
    check(builtin, `tree-sitter: ${rel} has no pattern for registry function calls`);
    if (builtin) {
      const listed = new Set(builtin[1].split('|'));
      for (const name of functions.keys()) check(listed.has(name), `tree-sitter: function "${name}" is not highlighted as a builtin in ${rel}`);
      for (const name of listed) check(functions.has(name), `tree-sitter: ${rel} highlights "${name}", which is not in the registry`);
    }
  }
  const regen = require('child_process').spawnSync(process.execPath,
    [path.join(EDITORS, 'tools', 'gen-queries.js'), '--check'], { encoding: 'utf8' });
  check(regen.status === 0, `tree-sitter: editor query copies are stale: ${regen.stderr.trim()}`);
  for (const k of keywords) {
    check(new RegExp(`'${k}'`).test(grammarJs), `tree-sitter: grammar.js has no '${k}' token`);
  }

  for (const f of failures) console.error('FAIL ' + f);
  if (failures.length) console.error('drift: update the editors (functions: node editors/tools/sync-functions.js)');
  console.log(`drift: ${checks - failures.length}/${checks} checks passed (${keywords.length} keywords, ${functions.size} functions)`);
  process.exit(failures.length ? 1 : 0);
}

function variantQueries() {
  const out = [];
  for (const rel of ['nvim/queries/flow/highlights.scm', 'helix/runtime/queries/flow/highlights.scm', 'zed/languages/flow/highlights.scm']) {
    const p = path.join(EDITORS, rel);
    if (fs.existsSync(p)) out.push(p);
  }
  return out;
}

main().catch((e) => { console.error(e); process.exit(2); });
