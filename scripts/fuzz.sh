#!/usr/bin/env bash
# Builds the fuzz preset (clang, libFuzzer, ASan + UBSan) and runs every fuzz
# target for SECONDS seconds each (default 30). A crash fails the script and
# leaves the reproducer in build/fuzz/artifacts/. Inputs that once crashed a
# target live in tests/fuzz/regressions/<target>/ and are replayed first.
#   ./scripts/fuzz.sh [SECONDS] [target-filter]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
filter=${2:-}

cmake --preset fuzz >/dev/null
# Build what will run (with a filter, only its targets), under the shared build
# lock where there is one (the shared development machine; not in CI).
build_targets=()
for src in tests/fuzz/fuzz_*.cc; do
  name=$(basename "$src" .cc)
  if [ -z "$filter" ] || [[ "$name" == *"$filter"* ]]; then
    build_targets+=("$name")
  fi
done
if [ "${#build_targets[@]}" -eq 0 ]; then
  echo "fuzz: no target matches '$filter'" >&2
  exit 2
fi
lock=()
if [ -d /tmp/locks ] && [ "${CI:-}" != true ]; then
  lock=(flock /tmp/locks/build)
fi
"${lock[@]}" cmake --build --preset fuzz -j "$(nproc)" --target "${build_targets[@]}"
mkdir -p build/fuzz/artifacts build/fuzz/corpus
status=0
for bin in build/fuzz/bin/fuzz_*; do
  name=$(basename "$bin")
  if [ -n "$filter" ] && [[ "$name" != *"$filter"* ]]; then
    continue
  fi
  mkdir -p "build/fuzz/corpus/$name"
  regressions="tests/fuzz/regressions/$name"
  if [ -d "$regressions" ]; then
    echo "fuzz: $name replays $(find "$regressions" -type f | wc -l) regression input(s)"
    if ! "$bin" -runs=0 "$regressions"/* >"build/fuzz/$name.regressions.log" 2>&1; then
      echo "fuzz: $name FAILED on a regression input (log: build/fuzz/$name.regressions.log)" >&2
      tail -30 "build/fuzz/$name.regressions.log" >&2
      status=1
      continue
    fi
  fi
  echo "fuzz: $name for ${seconds}s"
  if ! "$bin" -max_total_time="$seconds" -print_final_stats=0 \
      -artifact_prefix="build/fuzz/artifacts/$name-" "build/fuzz/corpus/$name" \
      >"build/fuzz/$name.log" 2>&1; then
    echo "fuzz: $name FAILED (log: build/fuzz/$name.log)" >&2
    tail -30 "build/fuzz/$name.log" >&2
    status=1
  else
    grep -E '^#[0-9]+.*DONE' "build/fuzz/$name.log" | tail -1 || true
  fi
done
exit "$status"
