#!/usr/bin/env bash
# The README's test command: installs what is missing, builds the asan preset
# (AddressSanitizer + UndefinedBehaviorSanitizer) and runs every test with ctest.
# Exits non-zero on any failure. Privileged tests (label `privileged`) need
# root and /dev/net/tun; outside CI they skip without them, in CI they must run.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/install-deps.sh
cmake --preset asan
cmake --build --preset asan -j "$(nproc)"
ctest --preset asan -j "$(nproc)" "$@"
