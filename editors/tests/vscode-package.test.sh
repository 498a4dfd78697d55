#!/usr/bin/env bash
# Builds the VS Code extension with editors/vscode/package.sh (npm ci + vsce) and checks that the
# .vsix holds the manifest, the grammar, the language configuration, the snippets, the entry point
# and the language client it needs at run time. The .vsix is removed afterwards.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
vsix="$("$here/../vscode/package.sh" | tail -1)"
trap 'rm -f "$vsix"' EXIT
python3 - "$vsix" <<'PY'
import json, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
names = set(z.namelist())
need = ["extension.vsixmanifest", "extension/package.json", "extension/extension.js",
        "extension/language-configuration.json", "extension/syntaxes/flow.tmLanguage.json",
        "extension/snippets/flow.json", "extension/node_modules/vscode-languageclient/node.js"]
missing = [n for n in need if n not in names]
bad = [n for n in names if "/node_modules/@vscode/vsce/" in n]
pkg = json.loads(z.read("extension/package.json"))
ok = not missing and not bad and pkg["contributes"]["languages"][0]["id"] == "flow"
for n in missing: print("FAIL missing from the .vsix: " + n)
for n in bad[:3]: print("FAIL build tool packed into the .vsix: " + n)
print("vscode package: %s, %d files" % ("ok" if ok else "broken", len(names)))
sys.exit(0 if ok else 1)
PY
