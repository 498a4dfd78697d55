'use strict';
// Tests of the VS Code extension without VS Code: extension.js runs against stand-ins for the
// `vscode` and `vscode-languageclient/node` modules and must start `<flowc> lsp` over stdio exactly
// when flowc is found (flow.flowcPath or PATH); language-configuration.json's indentation rules
// must indent after a statement head and keep `|` steps aligned; every snippet, expanded with its
// defaults, must tokenize cleanly with the TextMate grammar. Usage: node vscode.test.js
const fs = require('fs');
const os = require('os');
const path = require('path');
const Module = require('module');
const { loadGrammar, tokenize } = require('./lib/textmate');

const VSCODE_DIR = path.resolve(__dirname, '..', 'vscode');
let failures = 0;
let checks = 0;
function check(ok, message) {
  checks++;
  if (!ok) { failures++; console.error('FAIL ' + message); }
}

// Stand-ins recording what the extension asks for.
function makeFakes(settings) {
  const log = { clients: [], lines: [] };
  class LanguageClient {
    constructor(id, name, serverOptions, clientOptions) {
      this.args = { id, name, serverOptions, clientOptions };
      this.started = false;
      this.stopped = false;
      log.clients.push(this);
    }
    async start() { this.started = true; }
    async stop() { this.stopped = true; }
  }
  const vscode = {
    workspace: {
      getConfiguration: (section) => ({ get: (key, def) => (`${section}.${key}` in settings ? settings[`${section}.${key}`] : def) }),
      onDidChangeConfiguration: (fn) => { log.onConfig = fn; return { dispose() {} }; },
    },
    window: {
      createOutputChannel: () => ({ appendLine: (l) => log.lines.push(l) }),
      showWarningMessage: () => {},
    },
  };
  const languageclient = { LanguageClient, TransportKind: { stdio: 0, ipc: 1, pipe: 2, socket: 3 } };
  return { vscode, languageclient, log };
}

// Loads a fresh extension.js with `vscode` and `vscode-languageclient/node` resolved to the fakes
// (the client module is required lazily, during activation) and activates it.
async function activateWith(settings, env) {
  const fakes = makeFakes(settings);
  const file = path.join(VSCODE_DIR, 'extension.js');
  delete require.cache[require.resolve(file)];
  const savedLoad = Module._load;
  const savedPath = process.env.PATH;
  Module._load = function (request, parent, isMain) {
    if (request === 'vscode') return fakes.vscode;
    if (request === 'vscode-languageclient/node') return fakes.languageclient;
    return savedLoad.call(this, request, parent, isMain);
  };
  process.env.PATH = env.PATH;
  try {
    const ext = require(file);
    await ext.activate({ subscriptions: [] });
    return { ext, log: fakes.log };
  } finally {
    Module._load = savedLoad;
    process.env.PATH = savedPath;
  }
}

async function checkExtension() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flow-vscode-'));
  const bin = path.join(dir, 'bin');
  fs.mkdirSync(bin);
  const flowc = path.join(bin, 'flowc');
  fs.writeFileSync(flowc, '#!/bin/sh\nexit 0\n', { mode: 0o755 });
  const other = path.join(dir, 'custom-flowc');
  fs.writeFileSync(other, '#!/bin/sh\nexit 0\n', { mode: 0o755 });
  const notExec = path.join(dir, 'plain-file');
  fs.writeFileSync(notExec, '', { mode: 0o644 });
  const empty = path.join(dir, 'empty');
  fs.mkdirSync(empty);
  try {
    // flowc on PATH: one client, `flowc lsp` over stdio, for flow documents.
    let r = await activateWith({}, { PATH: `${empty}${path.delimiter}${bin}` });
    check(r.log.clients.length === 1, 'flowc on PATH: a language client is created');
    const c = r.log.clients[0];
    if (c) {
      check(c.started, 'flowc on PATH: the client is started');
      check(c.args.serverOptions.command === flowc, `the server command is ${flowc} (got ${c.args.serverOptions.command})`);
      check(JSON.stringify(c.args.serverOptions.args) === '["lsp"]', 'the server arguments are ["lsp"]');
      check(c.args.serverOptions.transport === 0, 'the transport is stdio');
      check(c.args.clientOptions.documentSelector.every((s) => s.language === 'flow'), 'the client serves flow documents');
      await r.ext.deactivate();
      check(c.stopped, 'deactivate stops the client');
    }
    // No flowc anywhere: no client, a note in the output channel, activation still succeeds.
    r = await activateWith({}, { PATH: empty });
    check(r.log.clients.length === 0, 'without flowc no language client is created');
    check(r.log.lines.some((l) => /flowc not found/.test(l)), 'without flowc the output channel says so');
    // flow.flowcPath pointing at an executable file.
    r = await activateWith({ 'flow.flowcPath': other }, { PATH: empty });
    check(r.log.clients.length === 1 && r.log.clients[0].args.serverOptions.command === other, 'flow.flowcPath selects the executable');
    // flow.flowcPath pointing at a file that is not executable, or the server disabled.
    r = await activateWith({ 'flow.flowcPath': notExec }, { PATH: bin });
    check(r.log.clients.length === 0, 'a non-executable flow.flowcPath starts nothing');
    r = await activateWith({ 'flow.languageServer.enabled': false }, { PATH: bin });
    check(r.log.clients.length === 0, 'flow.languageServer.enabled = false starts nothing');
    // Changing the setting restarts the client.
    r = await activateWith({}, { PATH: bin });
    check(typeof r.log.onConfig === 'function', 'the extension listens for configuration changes');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function checkManifest() {
  const pkg = JSON.parse(fs.readFileSync(path.join(VSCODE_DIR, 'package.json'), 'utf8'));
  const lang = pkg.contributes.languages.find((l) => l.id === 'flow');
  check(lang && lang.extensions.includes('.flow'), 'package.json: language flow for .flow files');
  check(pkg.contributes.grammars.some((g) => g.language === 'flow' && g.scopeName === 'source.flow' &&
    fs.existsSync(path.join(VSCODE_DIR, g.path))), 'package.json: the grammar file exists');
  check(pkg.contributes.snippets.every((s) => fs.existsSync(path.join(VSCODE_DIR, s.path))), 'package.json: the snippet file exists');
  check(pkg.contributes.configuration.properties['flow.flowcPath'].default === 'flowc', 'package.json: flow.flowcPath defaults to flowc');
  check(pkg.activationEvents.includes('onLanguage:flow'), 'package.json: activates on flow documents');
  check(fs.existsSync(path.join(VSCODE_DIR, pkg.main)), 'package.json: main exists');
}

function checkLanguageConfiguration() {
  const conf = JSON.parse(fs.readFileSync(path.join(VSCODE_DIR, 'language-configuration.json'), 'utf8'));
  check(conf.comments.lineComment === '//', 'line comment is //');
  check(conf.comments.blockComment[0] === '/*' && conf.comments.blockComment[1] === '*/', 'block comment is /* */');
  // The first onEnter rule whose beforeText matches decides, as in VS Code.
  const onEnter = (line) => {
    const rule = conf.onEnterRules.find((r) => new RegExp(r.beforeText).test(line));
    return rule ? rule.action.indent : 'none';
  };
  const cases = [
    ['stream per_minute = clicks', 'indent'],
    ['stream clicks = from kafka(topic: "t") format json as Click', 'indent'],
    ['from file(path: input) format json as Click', 'indent'],
    ['scored', 'indent'],
    ['  | where bytes > 0', 'none'],
    ['  | where bytes > 0   // comment', 'none'],
    ['  | select user, url,', 'indent'],
    ['// a comment', 'none'],
    ['param brokers: string = "x"', 'none'],
  ];
  for (const [line, want] of cases) check(onEnter(line) === want, `onEnter after ${JSON.stringify(line)}: ${want}, got ${onEnter(line)}`);
  const inc = new RegExp(conf.indentationRules.increaseIndentPattern);
  const dec = new RegExp(conf.indentationRules.decreaseIndentPattern);
  check(inc.test('schema Click {'), 'indent after an open brace');
  check(inc.test('from datagen('), 'indent after an open parenthesis');
  check(!inc.test('schema Line { text: string }'), 'no indent after a closed brace');
  check(dec.test('}'), 'outdent a closing brace');
  for (const p of conf.autoClosingPairs) check(typeof p.open === 'string' && typeof p.close === 'string', 'auto-closing pair ' + JSON.stringify(p));
}

// Replaces ${1:x}, ${1|a,b|}, $1 and $0 with their defaults, as VS Code inserts them.
function expandSnippet(body) {
  return body.join('\n')
    .replace(/\$\{\d+\|([^,|]*)[^|]*\|\}/g, '$1')
    .replace(/\$\{\d+:([^}]*)\}/g, '$1')
    .replace(/\$\d+/g, '');
}

async function checkSnippets() {
  const grammar = await loadGrammar();
  const snippets = JSON.parse(fs.readFileSync(path.join(VSCODE_DIR, 'snippets', 'flow.json'), 'utf8'));
  const names = Object.keys(snippets);
  for (const want of ['Kafka source', 'Windowed aggregation', 'Interval join', 'Kafka sink']) {
    check(names.includes(want), `snippet "${want}" exists`);
  }
  for (const [name, s] of Object.entries(snippets)) {
    const text = expandSnippet(s.body);
    check(!/\$/.test(text), `snippet "${name}": every placeholder expands`);
    const t = tokenize(grammar, text);
    const bad = t.lines.flat().filter((tok) => tok.scopes.some((sc) => sc.startsWith('invalid')));
    check(bad.length === 0, `snippet "${name}": no invalid tokens`);
    check(t.finalDepth === 1, `snippet "${name}": no rule left open`);
    const keywordish = t.lines.flat().filter((tok) => tok.scopes.some((sc) => sc.startsWith('keyword.')));
    check(keywordish.length > 0, `snippet "${name}": has highlighted keywords`);
  }
  return names.length;
}

async function main() {
  await checkExtension();
  checkManifest();
  checkLanguageConfiguration();
  const n = await checkSnippets();
  console.log(`vscode: ${checks - failures}/${checks} checks passed (extension activation, manifest, language configuration, ${n} snippets)`);
  process.exit(failures ? 1 : 0);
}

main().catch((e) => { console.error(e); process.exit(2); });
