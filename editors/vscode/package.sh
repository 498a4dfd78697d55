#!/usr/bin/env bash
# Builds the VS Code extension package: editors/vscode/flow-lang-<version>.vsix.
# Installs its npm dependencies locally (node_modules/, not committed) from package-lock.json.
# Install the result with: code --install-extension editors/vscode/flow-lang-<version>.vsix
set -euo pipefail
cd "$(dirname "$0")"
# --ignore-scripts: vsce's optional keychain module would try to download a native binary.
npm ci --no-audit --no-fund --ignore-scripts --loglevel=error
version="$(node -p 'require("./package.json").version')"
out="flow-lang-${version}.vsix"
npx --no-install vsce package --out "$out" --skip-license --allow-missing-repository >/dev/null
echo "$(pwd)/$out"
