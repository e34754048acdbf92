#!/usr/bin/env bash
# Runs tinytcp_bench with repetitions and prints the median of each benchmark
# in decimal units (Gbit/s for bytes, M/s for items).
#   ./scripts/bench.sh [filter-regex] [repetitions]
# Builds the release preset first if needed. Raw JSON: build/release/bench.json.
set -euo pipefail
cd "$(dirname "$0")/.."
filter=${1:-.}
reps=${2:-5}

if [ ! -x build/release/bin/tinytcp_bench ]; then
  cmake --preset release >/dev/null
fi
cmake --build --preset release --target tinytcp_bench >/dev/null

build/release/bin/tinytcp_bench --benchmark_filter="$filter" \
  --benchmark_repetitions="$reps" --benchmark_report_aggregates_only=true \
  --benchmark_out=build/release/bench.json --benchmark_out_format=json >/dev/null
python3 scripts/bench_summary.py build/release/bench.json
