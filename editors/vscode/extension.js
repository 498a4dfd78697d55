'use strict';
// Flow for VS Code. Highlighting, brackets, indentation and snippets are declarative (package.json);
// this entry point only starts `flowc lsp` as a language server over stdio when flowc can be found
// (setting `flow.flowcPath`, default: `flowc` on PATH). Without flowc it does nothing.
const fs = require('fs');
const path = require('path');
const vscode = require('vscode');

let client;
let output;

// The absolute path of `command` if it names an executable file, directly or through PATH.
function findExecutable(command, env = process.env) {
  if (!command) return undefined;
  const isFile = (p) => {
    try {
      const st = fs.statSync(p);
      if (!st.isFile()) return false;
      if (process.platform !== 'win32') fs.accessSync(p, fs.constants.X_OK);
      return true;
    } catch (_) {
      return false;
    }
  };
  if (command.includes('/') || command.includes(path.sep)) {
    return isFile(command) ? path.resolve(command) : undefined;
  }
  const exts = process.platform === 'win32' ? (env.PATHEXT || '.EXE;.CMD;.BAT').split(';') : [''];
  for (const dir of (env.PATH || '').split(path.delimiter)) {
    if (!dir) continue;
    for (const ext of exts) {
      const candidate = path.join(dir, command + ext);
      if (isFile(candidate)) return candidate;
    }
  }
  return undefined;
}

function log(message) {
  if (!output) output = vscode.window.createOutputChannel('Flow');
  output.appendLine(message);
}

async function startClient(context) {
  const config = vscode.workspace.getConfiguration('flow');
  if (!config.get('languageServer.enabled', true)) return;
  const configured = config.get('flowcPath', 'flowc') || 'flowc';
  const flowc = findExecutable(configured.replace(/^~(?=\/)/, process.env.HOME || '~'));
  if (!flowc) {
    log(`flowc not found (flow.flowcPath = "${configured}"): highlighting and snippets only`);
    return;
  }
  const { LanguageClient, TransportKind } = require('vscode-languageclient/node');
  // With the stdio transport the client appends `--stdio`, which `flowc lsp` accepts.
  const serverOptions = { command: flowc, args: ['lsp'], transport: TransportKind.stdio };
  const clientOptions = {
    documentSelector: [{ scheme: 'file', language: 'flow' }, { scheme: 'untitled', language: 'flow' }],
    outputChannelName: 'Flow Language Server',
  };
  client = new LanguageClient('flow', 'Flow Language Server', serverOptions, clientOptions);
  try {
    await client.start();
    log(`started ${flowc} lsp`);
  } catch (err) {
    log(`could not start ${flowc} lsp: ${err && err.message ? err.message : err}`);
    client = undefined;
  }
}

async function stopClient() {
  const c = client;
  client = undefined;
  if (c) await c.stop();
}

async function activate(context) {
  await startClient(context);
  context.subscriptions.push(vscode.workspace.onDidChangeConfiguration(async (e) => {
    if (e.affectsConfiguration('flow.flowcPath') || e.affectsConfiguration('flow.languageServer.enabled')) {
      await stopClient();
      await startClient(context);
    }
  }));
}

function deactivate() {
  return stopClient();
}

module.exports = { activate, deactivate, findExecutable };
