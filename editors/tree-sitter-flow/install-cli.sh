#!/usr/bin/env bash
# Installs the tree-sitter CLI into ~/.cargo/bin, built from its Rust crate with cargo (the npm package
# downloads a prebuilt binary from elsewhere, which CI cannot reach). Idempotent and quick when the
# pinned version is already there. The build runs with one job at low priority; it takes minutes.
set -euo pipefail

version=0.20.7
bin="$HOME/.cargo/bin/tree-sitter"

if [ -x "$bin" ] && [ "$("$bin" --version 2>/dev/null)" = "tree-sitter $version" ]; then
  exit 0
fi

cargo_bin="$(command -v cargo || true)"
[ -n "$cargo_bin" ] || [ ! -x "$HOME/.cargo/bin/cargo" ] || cargo_bin="$HOME/.cargo/bin/cargo"
if [ -z "$cargo_bin" ]; then
  echo "install-cli.sh: cargo not found; install Rust (Debian package 'cargo' or rustup) first" >&2
  exit 1
fi

echo "install-cli.sh: building tree-sitter-cli $version with cargo (one job, nice 19)" >&2
nice -n 19 "$cargo_bin" install tree-sitter-cli --locked --version "$version" -j 1 \
  --root "$HOME/.cargo" --quiet
"$bin" --version >/dev/null
