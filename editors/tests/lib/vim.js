'use strict';
// Runs vim headlessly on a list of syntax cases (see vim/check.vim) and returns its findings.
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawnSync } = require('child_process');

// cases: [{lines?|file?, line, col, len, groups, not, what}]; indentFile: optional.
function runVim(cases, indentFile) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flow-vim-'));
  const env = {
    ...process.env,
    FLOW_VIM_CASES: path.join(dir, 'cases.json'),
    FLOW_VIM_OUT: path.join(dir, 'out.txt'),
    FLOW_VIM_INDENT: indentFile || '',
    HOME: dir,  // no user vimrc or plugins
  };
  try {
    fs.writeFileSync(env.FLOW_VIM_CASES, JSON.stringify(cases));
    const r = spawnSync('vim', ['-Nu', 'NONE', '-i', 'NONE', '-es', '-S', path.join(__dirname, '..', 'vim', 'check.vim')],
      { env, encoding: 'utf8', timeout: 300000 });
    if (r.error) throw new Error('cannot run vim: ' + r.error.message);
    if (!fs.existsSync(env.FLOW_VIM_OUT)) throw new Error(`vim wrote no result (status ${r.status}): ${r.stderr || r.stdout}`);
    const out = fs.readFileSync(env.FLOW_VIM_OUT, 'utf8').split('\n').filter(Boolean);
    return { checks: Number(out[0].split(' ')[1]), failures: out.slice(1) };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

module.exports = { runVim };
