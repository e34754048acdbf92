#!/usr/bin/env bash
# clang-format --dry-run -Werror over every C++ source of ours.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files -co --exclude-standard -- '*.cc' '*.hh' | grep -v '^build/')
if [ "${#files[@]}" -eq 0 ]; then
  echo "format: no sources"
  exit 0
fi
clang-format --dry-run -Werror "${files[@]}"
echo "format: ok (${#files[@]} files)"
