#!/usr/bin/env bash
# The apps' errors, as a user meets them (docs/apps.md):
#  - every app: a bad argument is one line on stderr, "APP: ... (see APP --help)",
#    exit status 1, nothing on stdout; --help ends with "Exit status:" and its
#    lines are word for word the app's table in docs/apps.md;
#  - webget over the UDP tunnel against tt-serve (no privileges): 404 -> 5,
#    an echo port (not HTTP) -> 4, a closed port -> 2, no peer -> 3, bad URL -> 1;
#  - file-send: a missing file -> 1, no receiver -> 5, a size the receiver
#    refuses -> 3;
# each failure exactly one line on stderr. Usage: app_errors_test.sh BIN_DIR
set -euo pipefail
BIN=${1:?usage: $0 BIN_DIR}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d /tmp/tt-e2e-errors.XXXXXX)
PIDS=()
source "$(dirname "$0")/lib.sh"

# expect STATUS NAME CMD...: runs CMD (stdin closed), checks its status and
# that stderr is exactly one line starting "NAME: ".
expect() {
  local want=$1 name=$2
  shift 2
  local rc=0
  "$@" </dev/null >"$WORK/out" 2>"$WORK/err" || rc=$?
  [ "$rc" = "$want" ] || fail "$*: exit $rc, expected $want; stderr: $(head -5 "$WORK/err")"
  [ "$(wc -l <"$WORK/err")" = 1 ] || fail "$*: stderr is not one line: $(cat "$WORK/err")"
  grep -q "^$name: " "$WORK/err" || fail "$*: stderr does not start with '$name: ': $(cat "$WORK/err")"
  echo "ok: $* -> $rc: $(cat "$WORK/err")"
}

apps=0
for dir in "$SRC"/apps/*/; do
  app=$(basename "$dir")
  [ "$app" = common ] && continue
  ls "$dir"/*.cc >/dev/null 2>&1 || continue
  expect 1 "$app" "$BIN/$app" --no-such-option
  [ ! -s "$WORK/out" ] || fail "$app --no-such-option wrote to stdout: $(head -3 "$WORK/out")"
  grep -q "(see $app --help)\$" "$WORK/err" || fail "$app: the line does not point at --help"
  rc=0
  "$BIN/$app" --help </dev/null >"$WORK/help" 2>"$WORK/err" || rc=$?
  [ "$rc" = 0 ] || fail "$app --help: exit $rc"
  /usr/bin/env python3 - "$app" "$WORK/help" "$SRC/docs/apps.md" <<'PY' || fail "$app: --help and docs/apps.md differ"
import re, sys
app, help_path, doc_path = sys.argv[1:]
lines = open(help_path).read().splitlines()
if "Exit status:" not in lines:
    sys.exit(f"{app} --help has no 'Exit status:' section")
statuses = []
for line in lines[lines.index("Exit status:") + 1:]:
    m = re.match(r"^\s+(\d+)\s+(.*\S)\s*$", line)
    if not m:
        break
    statuses.append((m.group(1), m.group(2)))
doc = open(doc_path).read()
m = re.search(rf"^## {re.escape(app)}\n(.*?)(?=^## |\Z)", doc, re.S | re.M)
if not m:
    sys.exit(f"docs/apps.md has no section '## {app}'")
rows = re.findall(r"^\| (\d+) \| (.*) \|$", m.group(1), re.M)
if rows != statuses:
    sys.exit(f"{app}: --help lists {statuses}, docs/apps.md lists {rows}")
if not any(code == "1" for code, _ in statuses):
    sys.exit(f"{app}: status 1 (bad arguments) is not listed")
print(f"ok: {app} --help and docs/apps.md list the same {len(statuses)} statuses")
PY
  apps=$((apps + 1))
done
[ "$apps" -ge 7 ] || fail "only $apps apps found under $SRC/apps"

echo "--- webget over the UDP tunnel against tt-serve"
mkdir -p "$WORK/www"
echo "hello" >"$WORK/www/index.html"
p_serve=$(free_port)
p_get=$(free_port)
p_dead=$(free_port)
"$BIN/tt-serve" --dev "udp:127.0.0.1:$p_get@$p_serve" --address 169.254.0.1 --echo 7 \
  --http "$WORK/www" >"$WORK/serve.out" 2>"$WORK/serve.err" &
PIDS+=($!)
for _ in $(seq 200); do grep -q "serving on" "$WORK/serve.err" && break; sleep 0.05; done
grep -q "serving on" "$WORK/serve.err" || fail "tt-serve did not start: $(cat "$WORK/serve.err")"
dev="udp:127.0.0.1:$p_serve@$p_get"
"$BIN/webget" -q --dev "$dev" --timeout 20 http://169.254.0.1/index.html >"$WORK/page" ||
  fail "webget of a page that exists"
grep -q hello "$WORK/page" || fail "webget: wrong body"
expect 5 webget "$BIN/webget" --dev "$dev" --timeout 20 http://169.254.0.1/missing
grep -q "HTTP error 404" "$WORK/err" || fail "404: $(cat "$WORK/err")"
expect 4 webget "$BIN/webget" --dev "$dev" --timeout 20 http://169.254.0.1:7/
expect 2 webget "$BIN/webget" --dev "$dev" --timeout 20 http://169.254.0.1:81/
expect 3 webget "$BIN/webget" --dev "udp:127.0.0.1:$p_dead@$p_get" --timeout 1 \
  http://169.254.0.1/index.html
expect 1 webget "$BIN/webget" --dev "$dev" ftp://169.254.0.1/

echo "--- file-send"
head -c 5000 /dev/urandom >"$WORK/five.bin"
expect 1 file-send "$BIN/file-send" "$WORK/no-such-file" --to "127.0.0.1:$p_dead"
expect 5 file-send "$BIN/file-send" "$WORK/five.bin" --to "127.0.0.1:$p_dead" --connect-timeout 1
p_recv=$(free_port)
mkdir -p "$WORK/received"
"$BIN/file-recv" --listen "$p_recv" --output "$WORK/received" --once --max-size 1000 \
  >"$WORK/recv.out" 2>"$WORK/recv.err" &
recv=$!
PIDS+=("$recv")
wait_listen "$p_recv"
expect 3 file-send "$BIN/file-send" "$WORK/five.bin" --to "127.0.0.1:$p_recv" --connect-timeout 5
rc=0
wait "$recv" || rc=$?
[ "$rc" = 1 ] || fail "file-recv --once after a refused file: exit $rc"
[ ! -e "$WORK/received/five.bin" ] || fail "a refused file was stored"
echo "app errors: $apps apps, webget and file-send statuses checked"
