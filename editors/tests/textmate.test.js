'use strict';
// Tests of editors/vscode/syntaxes/flow.tmLanguage.json with VS Code's real tokenizer.
// Usage: node textmate.test.js   (exit status 0 when every check passes)
const fs = require('fs');
const path = require('path');
const { loadGrammar, tokenize, scopesAt } = require('./lib/textmate');
const src = require('./lib/flow-source');

let failures = 0;
let checks = 0;
function check(ok, message) {
  checks++;
  if (!ok) { failures++; console.error('FAIL ' + message); }
}

// One case per token class: a line, the text to look at (the first occurrence, or the n-th), and
// a scope that must be among the scopes of each of its characters.
const CASES = [
  ['// note', '// note', 'comment.line.double-slash.flow'],
  ['a /* x */ b', '/* x */', 'comment.block.flow'],
  ['x = "a\\tb"', '"a\\tb"', 'string.quoted.double.flow'],
  ['x = "a\\tb"', '\\t', 'constant.character.escape.flow'],
  ['x = "a\\"b"', '\\"', 'constant.character.escape.flow'],
  ['x = "a\\qb"', '\\q', 'invalid.illegal.escape.flow'],
  ['x = "caf\\u{e9}!"', '\\u{e9}', 'constant.character.escape.flow'],
  ['x = "caf\\u00e9!"', '\\u00e9', 'constant.character.escape.flow'],
  ['x = "a\\x41"', '\\x', 'invalid.illegal.escape.flow'],
  ['where n > 42', '42', 'constant.numeric.integer.flow'],
  ['where n > 4.25', '4.25', 'constant.numeric.float.flow'],
  ['where n > 1e9', '1e9', 'constant.numeric.float.flow'],
  ['watermark 250ms', '250ms', 'constant.numeric.duration.flow'],
  ['window tumbling 1m', '1m', 'constant.numeric.duration.flow'],
  ['within 2h', '2h', 'constant.numeric.duration.flow'],
  ['lateness 1d', '1d', 'constant.numeric.duration.flow'],
  ['where ok == true', 'true', 'constant.language.boolean.flow'],
  ['where ok == false', 'false', 'constant.language.boolean.flow'],
  ['where ref is null', 'null', 'constant.language.null.flow'],
  ['stream s = a', 'stream', 'keyword.declaration.flow'],
  ['param p: int = 3', 'param', 'keyword.declaration.flow'],
  ['schema S { a: int }', 'schema', 'keyword.declaration.flow'],
  ['extern fn f(a: int) -> int from "f.h"', 'extern', 'keyword.declaration.flow'],
  ['extern fn f(a: int) -> int from "f.h"', 'fn', 'keyword.declaration.flow'],
  ['a | where x', 'where', 'keyword.control.pipeline.flow'],
  ['a | key by u', 'key', 'keyword.control.pipeline.flow'],
  ['a | key by u', 'by', 'keyword.control.pipeline.flow'],
  ['a | select x', 'select', 'keyword.control.pipeline.flow'],
  ['a | aggregate count() as n', 'aggregate', 'keyword.control.pipeline.flow'],
  ['a | explode tags as tag', 'explode', 'keyword.control.pipeline.flow'],
  ['a | union b', 'union', 'keyword.control.pipeline.flow'],
  ['event time ts watermark 5s idle 30s', 'event', 'keyword.control.pipeline.flow'],
  ['event time ts watermark 5s idle 30s', 'watermark', 'keyword.control.pipeline.flow'],
  ['event time ts watermark 5s idle 30s', 'idle', 'keyword.control.pipeline.flow'],
  ['on error dead_letter file(path: "x")', 'error', 'keyword.other.error-policy.flow'],
  ['on error dead_letter file(path: "x")', 'dead_letter', 'keyword.other.error-policy.flow'],
  ['on error skip', 'skip', 'keyword.other.error-policy.flow'],
  ['on error fail', 'fail', 'keyword.other.error-policy.flow'],
  ['| window tumbling 1m', 'window', 'keyword.other.window.flow'],
  ['| window tumbling 1m', 'tumbling', 'keyword.other.window.flow'],
  ['| window sliding 10m every 1m', 'sliding', 'keyword.other.window.flow'],
  ['| window sliding 10m every 1m', 'every', 'keyword.other.window.flow'],
  ['| window session 30s lateness 10s', 'session', 'keyword.other.window.flow'],
  ['| window session 30s lateness 10s', 'lateness', 'keyword.other.window.flow'],
  ['| window session 30s processing time', 'processing', 'keyword.control.pipeline.flow'],
  ['| window tumbling 1d zone "Europe/Berlin"', 'zone', 'keyword.other.window.flow'],
  ['| window tumbling 1d zone "Europe/Berlin"', '"Europe/Berlin"', 'string.quoted.double.flow'],
  ['| window sliding 1d every 1h zone tz lateness 10m', 'zone', 'keyword.other.window.flow'],
  ['| window sliding 1d every 1h zone tz lateness 10m', 'lateness', 'keyword.other.window.flow'],
  ['| window sliding 1d every 1h zone tz lateness 10m', '10m', 'constant.numeric.duration.flow'],
  ['| window tumbling 1h zone "Asia/Kolkata" processing time', 'processing', 'keyword.control.pipeline.flow'],
  ['a | join b on a.k == b.k window tumbling 1d zone "America/New_York"', 'zone', 'keyword.other.window.flow'],
  ['param zone: string = "UTC"', 'zone', 'entity.name.variable.param.flow'],
  ['schema S { zone: string }', 'zone', 'entity.name.variable.field.flow'],
  ['a | join b on a.u == b.u within 10s', 'join', 'keyword.other.join.flow'],
  ['a | join b on a.u == b.u within 10s', 'within', 'keyword.other.join.flow'],
  ['a | join b on a.u == b.u within 10s', 'on', 'keyword.control.pipeline.flow'],
  ['| into kafka(topic: "t") format json exactly_once', 'exactly_once', 'keyword.other.delivery.flow'],
  ['| into stdout() at_least_once', 'at_least_once', 'keyword.other.delivery.flow'],
  ['case when x then 1 else 2 end', 'case', 'keyword.control.conditional.flow'],
  ['case when x then 1 else 2 end', 'when', 'keyword.control.conditional.flow'],
  ['case when x then 1 else 2 end', 'then', 'keyword.control.conditional.flow'],
  ['case when x then 1 else 2 end', 'else', 'keyword.control.conditional.flow'],
  ['case when x then 1 else 2 end', 'end', 'keyword.control.conditional.flow'],
  ['where a and not b or c', 'and', 'keyword.operator.logical.flow'],
  ['where a and not b or c', 'not', 'keyword.operator.logical.flow'],
  ['where a and not b or c', 'or', 'keyword.operator.logical.flow'],
  ['where a in (1, 2)', 'in', 'keyword.operator.word.flow'],
  ['where a is not null', 'is', 'keyword.operator.word.flow'],
  ['select cast(x as float) as y', 'cast', 'keyword.other.cast.flow'],
  ['select cast(x as float) as y', 'float', 'storage.type.primitive.flow'],
  ['select cast(x as list<string>) as y', 'string', 'storage.type.primitive.flow'],
  ['select cast(coalesce(x, 1) as int) as y', 'int', 'storage.type.primitive.flow'],
  ['select cast(x as float) as y', 'y', 'entity.name.variable.alias.flow'],
  ['select timestamp "2024-01-01" as t', 'timestamp', 'storage.type.primitive.flow'],
  ['schema S { bytes: int, tags: list<string>, ref: string?, seen: Click }', 'int', 'storage.type.primitive.flow'],
  ['schema S { bytes: int, tags: list<string>, ref: string?, seen: Click }', 'list', 'storage.type.primitive.flow'],
  ['schema S { bytes: int, tags: list<string>, ref: string?, seen: Click }', '<', 'punctuation.definition.generic.begin.flow'],
  ['schema S { bytes: int, tags: list<string>, ref: string?, seen: Click }', '?', 'keyword.operator.optional.flow'],
  ['schema S { bytes: int, tags: list<string>, ref: string?, seen: Click }', 'Click', 'entity.name.type.flow'],
  ['schema S { bytes: int, tags: list<string>, ref: string?, seen: Click }', 'bytes', 'entity.name.variable.field.flow'],
  ['param p: duration = 5s', 'duration', 'storage.type.primitive.flow'],
  ['param p: bool = true', 'bool', 'storage.type.primitive.flow'],
  ['param p: bytes', 'bytes', 'storage.type.primitive.flow'],
  ['extern fn f(a: int) -> float from "f.h"', 'float', 'storage.type.primitive.flow'],
  ['| aggregate count() as n', 'count', 'support.function.aggregate.flow'],
  ['| aggregate count_distinct(u) as n', 'count_distinct', 'support.function.aggregate.flow'],
  ['| aggregate approx_distinct(u) as n', 'approx_distinct', 'support.function.aggregate.flow'],
  ['| select upper(url) as u', 'upper', 'support.function.builtin.flow'],
  ['| select coalesce(a, b) as u', 'coalesce', 'support.function.builtin.flow'],
  ['| select risk(a, b) as r', 'risk', 'entity.name.function.call.flow'],
  ['from kafka(topic: "t")', 'kafka', 'support.class.connector.flow'],
  ['from file(path: "t")', 'file', 'support.class.connector.flow'],
  ['from stdin()', 'stdin', 'support.class.connector.flow'],
  ['from datagen(rate: 5)', 'datagen', 'support.class.connector.flow'],
  ['from nexmark(rate: 5)', 'nexmark', 'support.class.connector.flow'],
  ['| into stdout()', 'stdout', 'support.class.connector.flow'],
  ['| into blackhole()', 'blackhole', 'support.class.connector.flow'],
  ['format json', 'json', 'support.constant.format.flow'],
  ['format csv(delimiter: ",")', 'csv', 'support.constant.format.flow'],
  ['format raw', 'raw', 'support.constant.format.flow'],
  ['from kafka(topic: "t")', 'topic', 'variable.parameter.label.flow'],
  ['format csv(delimiter: ",")', 'delimiter', 'variable.parameter.label.flow'],
  ['where a == b', '==', 'keyword.operator.comparison.flow'],
  ['where a != b', '!=', 'keyword.operator.comparison.flow'],
  ['where a <= b', '<=', 'keyword.operator.comparison.flow'],
  ['where a >= b', '>=', 'keyword.operator.comparison.flow'],
  ['where a < b', '<', 'keyword.operator.comparison.flow'],
  ['where a > b', '>', 'keyword.operator.comparison.flow'],
  ['select a + b', '+', 'keyword.operator.arithmetic.flow'],
  ['select a - b', '-', 'keyword.operator.arithmetic.flow'],
  ['select a * b', '*', 'keyword.operator.arithmetic.flow'],
  ['select a / b', '/', 'keyword.operator.arithmetic.flow'],
  ['select a % b', '%', 'keyword.operator.arithmetic.flow'],
  ['a | b', '|', 'keyword.operator.pipe.flow'],
  ['stream s = a', '=', 'keyword.operator.assignment.flow'],
  ['extern fn f(a: int) -> int from "f.h"', '->', 'keyword.operator.arrow.flow'],
  ['param brokers: string = "x"', 'brokers', 'entity.name.variable.param.flow'],
  ['stream per_minute = a', 'per_minute', 'entity.name.variable.stream.flow'],
  ['schema Click {', 'Click', 'entity.name.type.schema.flow'],
  ['schema Click { user: string }', 'user', 'entity.name.variable.field.flow'],
  ['schema E { "user-id" as user_id: string }', '"user-id"', 'string.quoted.double.flow'],
  ['schema E { "user-id" as user_id: string }', 'as', 'keyword.control.pipeline.flow'],
  ['schema E { "user-id" as user_id: string }', 'user_id', 'entity.name.variable.field.flow'],
  ['schema E { "user-id" as user_id: string }', 'string', 'storage.type.primitive.flow'],
  ['schema E { "a}b" as ab: int, zz: int }', 'zz', 'entity.name.variable.field.flow'],
  ['schema E { "plain": int }', 'int', 'storage.type.primitive.flow'],
  ['extern fn risk(amount: float) -> float from "r.h"', 'risk', 'entity.name.function.flow'],
  ['extern fn risk(amount: float) -> float from "r.h"', 'amount', 'variable.parameter.flow'],
  ['from file(path: "x") format json as Click', 'Click', 'entity.name.type.schema.flow'],
  ['| select a.user, window_start', 'window_start', 'variable.language.window.flow'],
  ['| select a.user, window_start', 'user', 'variable.other.flow'],
  ['start: earliest', 'earliest', 'constant.language.offset.flow'],
];

function charsHave(tokens, line, col, len, scope) {
  for (let c = col; c < col + len; c++) {
    const scopes = scopesAt(tokens, line, c);
    // `keyword.declaration.flow` also accepts the finer `keyword.declaration.stream.flow`.
    const base = scope.replace(/\.flow$/, '.');
    if (!scopes.some((s) => s === scope || (s.startsWith(base) && s.endsWith('.flow')))) return scopes;
  }
  return null;
}

function checkCases(grammar) {
  for (const [text, needle, scope] of CASES) {
    const tokens = tokenize(grammar, text);
    const col = text.indexOf(needle);
    if (col < 0) throw new Error(`bad case: ${needle} not in ${text}`);
    const bad = charsHave(tokens, 0, col, needle.length, scope);
    check(bad === null, `${JSON.stringify(text)}: ${JSON.stringify(needle)} should have ${scope}, has ${bad && bad.join(' ')}`);
  }
  // Multi-line block comment, and that neither comments nor strings leak past their end.
  const t = tokenize(grammar, 'a /* one\ntwo */ where "x" | b');
  check(charsHave(t, 1, 0, 6, 'comment.block.flow') === null, 'block comment continues on line 2');
  check(scopesAt(t, 1, 7).includes('keyword.control.pipeline.flow'), 'keyword after a block comment');
  check(!scopesAt(t, 1, 17).some((s) => s.startsWith('string')), 'no string after its closing quote');
  const u = tokenize(grammar, 'x = "open\nwhere y');
  check(scopesAt(u, 1, 0).includes('keyword.control.pipeline.flow'), 'an unterminated string ends at end of line');
  check(u.finalDepth === 1, 'no open rule after an unterminated string');
}

const KEYWORDISH = /^(keyword|constant\.language|storage\.type)\./;

// Every token of every example: comments are comments, strings are strings (and stop at their
// closing quote), numbers and durations are numbers, every keyword of Flow.g4 gets a keyword scope
// (a soft keyword used as a declared name may instead be a name), every registry function call a
// support.function scope; and no rule is left open at the end of the file.
function checkExamples(grammar, keywords, soft, functions) {
  const files = src.examples();
  for (const file of files) {
    const rel = path.relative(src.ROOT, file);
    const text = fs.readFileSync(file, 'utf8');
    const tokens = tokenize(grammar, text);
    const lexed = src.lex(text);
    const srcLines = text.split('\n');
    for (const tok of lexed) {
      const where = `${rel}:${tok.line + 1}:${tok.col + 1} ${JSON.stringify(tok.text)}`;
      const scopes = scopesAt(tokens, tok.line, tok.col);
      if (tok.kind === 'comment') {
        check(charsHave(tokens, tok.line, tok.col, tok.text.length, 'comment.flow') === null, `${where}: comment scope expected`);
      } else if (tok.kind === 'string') {
        check(charsHave(tokens, tok.line, tok.col, tok.text.length, 'string.quoted.double.flow') === null, `${where}: string scope expected`);
        const after = tok.col + tok.text.length;
        if (after < srcLines[tok.line].length) {
          check(!scopesAt(tokens, tok.line, after).includes('string.quoted.double.flow'), `${where}: string leaks past its end`);
        }
      } else if (tok.kind === 'duration') {
        check(scopes.includes('constant.numeric.duration.flow'), `${where}: duration scope expected, got ${scopes.join(' ')}`);
      } else if (tok.kind === 'int' || tok.kind === 'float') {
        check(scopes.some((s) => s.startsWith('constant.numeric.')), `${where}: number scope expected, got ${scopes.join(' ')}`);
      } else if (tok.kind === 'word') {
        const next = srcLines[tok.line].slice(tok.col + tok.text.length).trimStart();
        if (keywords.has(tok.text)) {
          const ok = scopes.some((s) => KEYWORDISH.test(s)) ||
            (soft.has(tok.text) && scopes.some((s) => /^(entity\.name|variable)\./.test(s)));
          check(ok, `${where}: keyword scope expected, got ${scopes.join(' ')}`);
        } else if (functions && functions.has(tok.text) && next.startsWith('(') &&
                   !scopes.some((s) => s.startsWith('entity.name.function.flow'))) {
          check(scopes.some((s) => s.startsWith('support.function.')), `${where}: function scope expected, got ${scopes.join(' ')}`);
        } else {
          check(scopes.length > 1, `${where}: identifier left unscoped`);
        }
      }
    }
    check(tokens.finalDepth === 1, `${rel}: a rule is still open at end of file (depth ${tokens.finalDepth})`);
  }
  return files.length;
}

async function main() {
  const grammar = await loadGrammar();
  checkCases(grammar);
  const { keywords, soft } = src.grammarKeywords();
  let functions = null;
  try { functions = src.registryFunctions(); } catch (e) {
    if (!e.flowMissingSource) throw e;
    console.error('note: ' + e.message + ' (function calls in examples not checked here; the drift test fails on it)');
  }
  const n = checkExamples(grammar, new Set(keywords), soft, functions);
  console.log(`textmate: ${checks - failures}/${checks} checks passed (${CASES.length} token cases, ${n} example files)`);
  process.exit(failures ? 1 : 0);
}

main().catch((e) => { console.error(e); process.exit(2); });
