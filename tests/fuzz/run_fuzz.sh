#!/usr/bin/env bash
# Builds the front-end fuzzer with clang (libFuzzer + AddressSanitizer) in its own build folder and
# runs it for a bounded time over a seed corpus of the examples and the golden test files.
# Usage: tests/fuzz/run_fuzz.sh SOURCE_DIR BUILD_DIR SECONDS
# Exit: 0 when no crash/leak/timeout was found, non-zero otherwise (the reproducer is kept in
# BUILD_DIR/artifacts/).
set -euo pipefail
src="$1"; build="$2"; seconds="${3:-60}"
cxx="$(command -v clang++-14 || command -v clang++)"
cc="$(command -v clang-14 || command -v clang)"
mkdir -p "$build"
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$cxx" \
    -DCMAKE_C_COMPILER="$cc" -DFLOW_FUZZ=ON -DFLOW_BUILD_BENCH=OFF -DFLOW_WERROR=OFF >/dev/null
fi
if ! cmake --build "$build" --target flow_frontend_fuzz -j "${FLOW_JOBS:-2}" >"$build/fuzz-build.log" 2>&1; then
  tail -n 40 "$build/fuzz-build.log"
  exit 1
fi
corpus="$build/corpus"; artifacts="$build/artifacts"
mkdir -p "$corpus" "$artifacts"
cp "$src"/examples/*.flow "$src"/tests/frontend/*.flow "$corpus"/ 2>/dev/null || true
# -rss_limit_mb and -timeout turn memory blow-ups and hangs into failures too.
"$build/tests/flow_frontend_fuzz" "$corpus" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 \
  -max_len=65536 -artifact_prefix="$artifacts/" -print_final_stats=1 2>&1 | tail -n 25
