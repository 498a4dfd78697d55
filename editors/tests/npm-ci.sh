#!/usr/bin/env bash
# Installs the editor tests' npm dependencies (vscode-textmate, vscode-oniguruma) from the
# committed package-lock.json into editors/tests/node_modules. Quiet; quick when up to date.
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v npm >/dev/null; then
  echo "npm-ci.sh: npm not found; run scripts/setup (Debian packages nodejs and npm)" >&2
  exit 1
fi
stamp=node_modules/.installed-from-lock
if [ -f "$stamp" ] && cmp -s package-lock.json "$stamp"; then
  exit 0
fi
npm ci --no-audit --no-fund --loglevel=error >/dev/null
cp package-lock.json "$stamp"
