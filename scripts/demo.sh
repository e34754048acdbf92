#!/usr/bin/env bash
# The README's main job: installs what is missing, builds the release preset
# and runs the demo. Until the apps land (issues #5, #6) the demo is the speed
# benchmarks of the stack's lower layers, printed as medians in Gbit/s.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/install-deps.sh
cmake --preset release
cmake --build --preset release -j "$(nproc)"
./scripts/bench.sh "${1:-.}" "${2:-5}"
