'use strict';
// Tests of editors/vim: runs vim headlessly (vim -Nu NONE -es) on token cases and on every
// examples/*.flow, checking synIDattr(synID(line, col, 1), "name"), then the indentation of
// fixtures/indent.flow and of the pipeline steps of every example, and the ftplugin settings. Usage: node vim.test.js
const fs = require('fs');
const path = require('path');
const src = require('./lib/flow-source');
const { runVim } = require('./lib/vim');

const KEYWORD_GROUPS = ['flowDeclaration', 'flowPipeline', 'flowErrorPolicy', 'flowWindow', 'flowJoin',
  'flowDelivery', 'flowConditional', 'flowCast', 'flowOperatorWord', 'flowBoolean', 'flowNull',
  'flowTimestamp'];
const NAME_GROUPS = ['flowLabel', 'flowFieldName', 'flowAlias', 'flowParamName', 'flowStreamName',
  'flowSchemaName', 'flowTypeName', 'flowFormat', 'flowConnector'];
const COMMENT_GROUPS = ['flowComment', 'flowBlockComment', 'flowTodo'];
const STRING_GROUPS = ['flowString', 'flowEscape', 'flowEscapeError'];

// [line, needle, group]: the needle's characters must all be in the group.
const CASES = [
  ['// note TODO', 'note', 'flowComment'],
  ['// note TODO', 'TODO', 'flowTodo'],
  ['a /* x */ b', '/* x */', 'flowBlockComment'],
  ['x = "a\\tb"', '"a', 'flowString'],
  ['x = "a\\tb"', '\\t', 'flowEscape'],
  ['x = "a\\"b"', '\\"', 'flowEscape'],
  ['x = "a\\qb"', '\\q', 'flowEscapeError'],
  ['x = "caf\\u{e9}!"', '\\u{e9}', 'flowEscape'],
  ['x = "caf\\u00e9!"', '\\u00e9', 'flowEscape'],
  ['where n > 42', '42', 'flowNumber'],
  ['where n > 4.25', '4.25', 'flowFloat'],
  ['where n > 1e9', '1e9', 'flowFloat'],
  ['watermark 250ms', '250ms', 'flowDuration'],
  ['window tumbling 1m', '1m', 'flowDuration'],
  ['within 2h', '2h', 'flowDuration'],
  ['lateness 1d', '1d', 'flowDuration'],
  ['where ok == true or false', 'true', 'flowBoolean'],
  ['where ok == true or false', 'false', 'flowBoolean'],
  ['where ref is null', 'null', 'flowNull'],
  ['stream s = a', 'stream', 'flowDeclaration'],
  ['param p: int = 3', 'param', 'flowDeclaration'],
  ['extern fn f(a: int) -> int from "f.h"', 'extern', 'flowDeclaration'],
  ['a | where x', 'where', 'flowPipeline'],
  ['a | key by u', 'by', 'flowPipeline'],
  ['event time ts watermark 5s idle 30s', 'watermark', 'flowPipeline'],
  ['on error dead_letter file(path: "x")', 'dead_letter', 'flowErrorPolicy'],
  ['| window sliding 10m every 1m', 'sliding', 'flowWindow'],
  ['| window session 30s lateness 10s', 'lateness', 'flowWindow'],
  ['| window tumbling 1d zone "Europe/Berlin"', 'zone', 'flowWindow'],
  ['| window tumbling 1d zone "Europe/Berlin"', '"Europe/Berlin"', 'flowString'],
  ['| window sliding 1d every 1h zone tz lateness 10m', 'zone', 'flowWindow'],
  ['| window sliding 1d every 1h zone tz lateness 10m', 'lateness', 'flowWindow'],
  ['a | join b on a.k == b.k window tumbling 1d zone "America/New_York"', 'zone', 'flowWindow'],
  ['schema S { zone: string }', 'zone', 'flowFieldName'],
  ['a | join b on a.u == b.u within 10s', 'join', 'flowJoin'],
  ['a | join b on a.u == b.u within 10s', 'within', 'flowJoin'],
  ['| into kafka(topic: "t") format json exactly_once', 'exactly_once', 'flowDelivery'],
  ['case when x then 1 else 2 end', 'when', 'flowConditional'],
  ['case when x then 1 else 2 end', 'end', 'flowConditional'],
  ['where a and not b', 'not', 'flowOperatorWord'],
  ['select cast(x as float) as y', 'cast', 'flowCast'],
  ['select cast(x as float) as y', 'float', 'flowType'],
  ['select cast(x as float) as y', 'y', 'flowAlias'],
  ['param p: duration = 5s', 'duration', 'flowType'],
  ['tags: list<string>,', 'list', 'flowType'],
  ['tags: list<string>,', 'string', 'flowType'],
  ['schema S { bytes: int, seen: Other }', 'bytes', 'flowFieldName'],
  ['schema S { bytes: int, seen: Other }', 'int', 'flowType'],
  ['schema S { bytes: int, seen: Other }', 'Other', 'flowTypeName'],
  ['schema S { bytes: int, seen: Other }', 'S', 'flowSchemaName'],
  ['schema E { "user-id" as user_id: string }', '"user-id"', 'flowString'],
  ['schema E { "user-id" as user_id: string }', 'as', 'flowFieldAs'],
  ['schema E { "user-id" as user_id: string }', 'user_id', 'flowFieldName'],
  ['schema E { "user-id" as user_id: string }', 'string', 'flowType'],
  ['schema E { "a}b" as ab: int, zz: int }', 'zz', 'flowFieldName'],
  ['schema E { "plain": int }', 'int', 'flowType'],
  ['select timestamp "2024-01-01" as t', 'timestamp', 'flowTimestamp'],
  ['| aggregate count_distinct(u) as n', 'count_distinct', 'flowAggregate'],
  ['| select upper(url) as u', 'upper', 'flowFunction'],
  ['| select risk(a, b) as r', 'risk', 'flowCall'],
  ['from kafka(topic: "t")', 'kafka', 'flowConnector'],
  ['| into stdout format csv', 'stdout', 'flowConnector'],
  ['format csv(delimiter: ",")', 'csv', 'flowFormat'],
  ['from kafka(topic: "t")', 'topic', 'flowLabel'],
  ['where a >= b', '>=', 'flowOperator'],
  ['a | b', '|', 'flowPipe'],
  ['param brokers: string = "x"', 'brokers', 'flowParamName'],
  ['stream per_minute = a', 'per_minute', 'flowStreamName'],
  ['extern fn risk(amount: float) -> float from "r.h"', 'risk', 'flowFunctionName'],
  ['from file(path: "x") format json as Click', 'Click', 'flowSchemaRef'],
  ['| select a.user, window_start', 'window_start', 'flowWindowField'],
];

function exampleCases(file, keywords, soft, functions) {
  const text = fs.readFileSync(file, 'utf8');
  const lines = text.split('\n');
  const cases = [];
  const rel = path.relative(src.ROOT, file);
  for (const tok of src.lex(text)) {
    const base = { file, line: tok.line + 1, col: tok.col + 1, len: tok.text.length, not: [],
      what: `${rel} ${JSON.stringify(tok.text)}` };
    if (tok.kind === 'comment') {
      cases.push({ ...base, groups: COMMENT_GROUPS });
    } else if (tok.kind === 'string') {
      cases.push({ ...base, groups: STRING_GROUPS });
      const after = tok.col + tok.text.length;
      if (after < lines[tok.line].length) {
        cases.push({ ...base, col: after + 1, len: 1, groups: [], not: STRING_GROUPS, what: base.what + ' (after its end)' });
      }
    } else if (tok.kind === 'duration') {
      cases.push({ ...base, groups: ['flowDuration'] });
    } else if (tok.kind === 'int') {
      cases.push({ ...base, groups: ['flowNumber'] });
    } else if (tok.kind === 'float') {
      cases.push({ ...base, groups: ['flowFloat'] });
    } else if (tok.kind === 'word' && keywords.has(tok.text)) {
      cases.push({ ...base, groups: soft.has(tok.text) ? KEYWORD_GROUPS.concat(NAME_GROUPS) : KEYWORD_GROUPS });
    } else if (tok.kind === 'word' && functions && functions.has(tok.text) &&
               lines[tok.line].slice(tok.col + tok.text.length).trimStart().startsWith('(') &&
               !/\bfn\s+$/.test(lines[tok.line].slice(0, tok.col))) {
      cases.push({ ...base, groups: ['flowFunction', 'flowAggregate'] });
    }
  }
  return cases;
}

function main() {
  const { keywords, soft } = src.grammarKeywords();
  let functions = null;
  try { functions = src.registryFunctions(); } catch (e) {
    if (!e.flowMissingSource) throw e;
    console.error('note: ' + e.message);
  }
  const cases = CASES.map(([line, needle, group]) => {
    const col = line.indexOf(needle);
    if (col < 0) throw new Error(`bad case: ${needle} not in ${line}`);
    return { lines: [line], line: 1, col: col + 1, len: needle.length, groups: [group], not: [],
      what: `${JSON.stringify(line)} ${JSON.stringify(needle)}` };
  });
  const files = src.examples();
  for (const f of files) cases.push(...exampleCases(f, new Set(keywords), soft, functions));

  let result;
  try {
    // Re-indenting (after stripping all indentation) must give back the indent fixture, and the
    // `| step` lines of every example as written.
    const indentFiles = [path.join(__dirname, 'fixtures', 'indent.flow'), ...files.filter((f) => !f.endsWith('tour.flow'))];
    result = runVim(cases, indentFiles.join('\n'));
  } catch (e) { console.error(e.message); process.exit(2); }
  const { checks, failures } = result;
  for (const f of failures) console.error('FAIL ' + f);
  console.log(`vim: ${checks - failures.length}/${checks} checks passed (${CASES.length} token cases, ${files.length} example files, indentation of the fixture and of example pipelines, ftplugin)`);
  process.exit(failures.length ? 1 : 0);
}

main();
