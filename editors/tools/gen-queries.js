#!/usr/bin/env node
'use strict';
// Writes the editor-specific copies of editors/tree-sitter-flow/queries/highlights.scm, renaming
// captures to each editor's conventions (the base file uses Neovim's names):
//   editors/nvim/queries/flow/highlights.scm          Neovim (nvim-treesitter)
//   editors/helix/runtime/queries/flow/highlights.scm Helix
//   editors/zed/languages/flow/highlights.scm         Zed
// Usage: node editors/tools/gen-queries.js [--check]   (--check: exit 1 if a copy is stale)
const fs = require('fs');
const path = require('path');

const EDITORS = path.resolve(__dirname, '..');
const BASE = path.join(EDITORS, 'tree-sitter-flow', 'queries', 'highlights.scm');

const HELIX = {
  'string.escape': 'constant.character.escape',
  'number': 'constant.numeric.integer',
  'number.float': 'constant.numeric.float',
  'boolean': 'constant.builtin.boolean',
  'keyword.exception': 'keyword.control.exception',
  'keyword.modifier': 'keyword.storage.modifier',
  'keyword.conditional': 'keyword.control.conditional',
  'type.definition': 'type',
  'variable.member': 'variable.other.member',
  'module': 'namespace',
  'module.builtin': 'namespace',
  'function.call': 'function',
  'character.special': 'special',
};

const ZED = {
  'number.float': 'number',
  'constant.builtin': 'constant',
  'keyword.function': 'keyword',
  'keyword.exception': 'keyword',
  'keyword.modifier': 'keyword',
  'keyword.conditional': 'keyword',
  'keyword.operator': 'keyword',
  'type.builtin': 'type',
  'type.definition': 'type',
  'variable.member': 'property',
  'module': 'type',
  'module.builtin': 'type',
  'function.builtin': 'function',
  'function.call': 'function',
  'character.special': 'punctuation.special',
};

const TARGETS = [
  { rel: 'nvim/queries/flow/highlights.scm', editor: 'Neovim', map: {} },
  { rel: 'helix/runtime/queries/flow/highlights.scm', editor: 'Helix', map: HELIX },
  { rel: 'zed/languages/flow/highlights.scm', editor: 'Zed', map: ZED },
];

function render(base, target) {
  const body = base
    .split('\n')
    .filter((line, i) => !(i < 3 && line.startsWith(';')))  // the base file's own header
    .join('\n')
    .replace(/@([a-z][a-z.]*)/g, (m, name) => '@' + (target.map[name] || name));
  return `; Flow highlights for ${target.editor}. Generated from editors/tree-sitter-flow/queries/highlights.scm\n` +
    '; by editors/tools/gen-queries.js; edit the base file and rerun the script.\n' + body;
}

function main() {
  const check = process.argv.includes('--check');
  const base = fs.readFileSync(BASE, 'utf8');
  let stale = 0;
  for (const t of TARGETS) {
    const file = path.join(EDITORS, t.rel);
    const want = render(base, t);
    const have = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : null;
    if (have === want) continue;
    if (check) {
      console.error(`stale: editors/${t.rel} (run node editors/tools/gen-queries.js)`);
      stale++;
    } else {
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, want);
      console.log('wrote editors/' + t.rel);
    }
  }
  process.exit(stale ? 1 : 0);
}

main();
