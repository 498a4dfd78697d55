#!/usr/bin/env bash
# Tests of the tree-sitter grammar: installs the CLI if needed, generates the parser in a scratch
# copy (the source tree stays clean), runs the corpus (test/corpus) and highlight (test/highlight)
# tests, then parses every examples/*.flow, the editor tour and the expanded VS Code snippets and
# fails on any ERROR or MISSING node. Usage: editors/tree-sitter-flow/test.sh [--keep] (--keep leaves the scratch copy and says where)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"

"$here/install-cli.sh"
export PATH="$HOME/.cargo/bin:$PATH"

work="$(mktemp -d "${TMPDIR:-/tmp}/tree-sitter-flow.XXXXXX")"
if [ "${1:-}" = "--keep" ]; then
  echo "scratch copy: $work" >&2
else
  trap 'rm -rf "$work"' EXIT
fi
cp -r "$here/grammar.js" "$here/package.json" "$here/queries" "$here/test" "$work/"
cd "$work"

tree-sitter generate
tree-sitter test

# The VS Code snippets, expanded with their default values, must be valid Flow too.
mkdir -p "$work/snippets"
node -e '
  const fs = require("fs");
  const snippets = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
  Object.values(snippets).forEach((s, i) => fs.writeFileSync(`${process.argv[2]}/snippet-${i}.flow`,
    s.body.join("\n").replace(/\$\{\d+\|([^,|]*)[^|]*\|\}/g, "$1").replace(/\$\{\d+:([^}]*)\}/g, "$1")
      .replace(/\$\d+/g, "") + "\n"));
' "$root/editors/vscode/snippets/flow.json" "$work/snippets"

shopt -s nullglob
files=("$root"/examples/*.flow "$root"/examples/*/*.flow "$root"/editors/tests/fixtures/tour.flow
       "$work"/snippets/*.flow)
bad=0
for f in "${files[@]}"; do
  tree_text="$(tree-sitter parse "$f" 2>/dev/null || true)"
  if [ -z "$tree_text" ] || grep -qE '\((ERROR|MISSING)' <<<"$tree_text"; then
    echo "FAIL ${f#"$root"/} does not parse cleanly:" >&2
    [[ "$f" != "$work"/snippets/* ]] || cat "$f" >&2
    grep -nE '\((ERROR|MISSING)' <<<"$tree_text" | head -5 >&2 || true
    bad=1
  fi
done
[ "$bad" -eq 0 ] || exit 1

# Every query file (the base and the editor variants) must compile against the grammar.
for q in "$here"/queries/*.scm "$root"/editors/nvim/queries/flow/*.scm \
         "$root"/editors/helix/runtime/queries/flow/*.scm "$root"/editors/zed/languages/flow/*.scm; do
  if ! tree-sitter query "$q" "$root/editors/tests/fixtures/tour.flow" >/dev/null 2>"$work/query.err"; then
    echo "FAIL ${q#"$root"/} does not compile:" >&2
    cat "$work/query.err" >&2
    bad=1
  fi
done
[ "$bad" -eq 0 ] || exit 1
echo "tree-sitter: corpus and highlight tests pass; ${#files[@]} files parse without ERROR or MISSING nodes; queries compile"
