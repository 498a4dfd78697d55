'use strict';
// Loads the VS Code TextMate grammar into VS Code's own tokenizer (vscode-textmate with the
// Oniguruma regex engine compiled to WebAssembly) and tokenizes Flow source headlessly.
const fs = require('fs');
const path = require('path');
const vsctm = require('vscode-textmate');
const oniguruma = require('vscode-oniguruma');

const GRAMMAR_PATH = path.resolve(__dirname, '..', '..', 'vscode', 'syntaxes', 'flow.tmLanguage.json');

async function loadGrammar() {
  const wasm = fs.readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm')).buffer;
  await oniguruma.loadWASM(wasm);
  const registry = new vsctm.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (patterns) => new oniguruma.OnigScanner(patterns),
      createOnigString: (s) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async (scopeName) => {
      if (scopeName !== 'source.flow') return null;
      return vsctm.parseRawGrammar(fs.readFileSync(GRAMMAR_PATH, 'utf8'), GRAMMAR_PATH);
    },
  });
  return registry.loadGrammar('source.flow');
}

// Returns {lines: [[{start, end, text, scopes}]], finalDepth}.
function tokenize(grammar, source) {
  let stack = vsctm.INITIAL;
  const lines = [];
  for (const line of source.split('\n')) {
    const r = grammar.tokenizeLine(line, stack);
    lines.push(r.tokens.map((t) => ({
      start: t.startIndex, end: Math.min(t.endIndex, line.length),
      text: line.slice(t.startIndex, t.endIndex), scopes: t.scopes,
    })));
    stack = r.ruleStack;
  }
  return { lines, finalDepth: stack.depth };
}

// The scopes of the character at (line, col), innermost last.
function scopesAt(tokens, line, col) {
  for (const t of tokens.lines[line]) {
    if (col >= t.start && col < t.end) return t.scopes;
  }
  return [];
}

module.exports = { loadGrammar, tokenize, scopesAt };
