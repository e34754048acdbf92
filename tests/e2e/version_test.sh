#!/usr/bin/env bash
# Every app of apps/ answers --version with one line "NAME X.Y.Z" or
# "NAME X.Y.Z (REVISION)", X.Y.Z being project(VERSION) of CMakeLists.txt,
# on stdout, exit 0, nothing on stderr. Usage: version_test.sh BIN_DIR
set -euo pipefail
BIN=${1:?usage: $0 BIN_DIR}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d /tmp/tt-e2e-version.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

version=$(sed -n 's/^project(tinytcp VERSION \([0-9.]*\).*/\1/p' "$SRC/CMakeLists.txt")
[ -n "$version" ] || fail "no project(tinytcp VERSION ...) in $SRC/CMakeLists.txt"

apps=0
for dir in "$SRC"/apps/*/; do
  app=$(basename "$dir")
  [ "$app" = common ] && continue
  ls "$dir"/*.cc >/dev/null 2>&1 || continue
  [ -x "$BIN/$app" ] || fail "$app is not built in $BIN"
  rc=0
  "$BIN/$app" --version >"$WORK/out" 2>"$WORK/err" </dev/null || rc=$?
  [ "$rc" -eq 0 ] || fail "$app --version exited $rc: $(head -3 "$WORK/err")"
  [ ! -s "$WORK/err" ] || fail "$app --version wrote to stderr: $(head -3 "$WORK/err")"
  [ "$(wc -l <"$WORK/out")" -eq 1 ] || fail "$app --version: not one line: $(cat "$WORK/out")"
  line=$(cat "$WORK/out")
  re="^${app} ${version//./\\.}( \([^()]+\))?\$"
  [[ $line =~ $re ]] || fail "$app --version printed '$line', expected '$app $version [(REVISION)]'"
  echo "ok: $line"
  apps=$((apps + 1))
done
[ "$apps" -ge 5 ] || fail "only $apps apps found under $SRC/apps"
echo "version: $apps apps"
