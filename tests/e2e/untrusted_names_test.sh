#!/usr/bin/env bash
# End to end (issue 21 item 3): names that are not valid UTF-8 or carry
# control characters. file-send --json sends a tree with a name that is not
# UTF-8 ("a\xff") and one after it, prints one valid JSON line per file with
# the name escaped, and exits 0; a name with an escape sequence (which the
# protocol cannot carry) is reported with the control characters escaped,
# never raw to the terminal. Over kernel TCP on loopback.
# Usage: untrusted_names_test.sh BIN_DIR
set -euo pipefail
BIN=${1:?usage: $0 BIN_DIR}
WORK=$(mktemp -d /tmp/tt-e2e-names.XXXXXX)
PIDS=()
. "$(dirname "$0")/lib.sh"

mkdir -p "$WORK/in/tree" "$WORK/out"
echo "not utf-8" >"$WORK/in/tree/a$(printf '\xff')"
echo "after it" >"$WORK/in/tree/b-after"
echo "escape" >"$WORK/in/tree/c$(printf '\033')[31mred"

port=$(free_port)
"$BIN/file-recv" --listen "$port" --output "$WORK/out" --transport kernel --once \
  >"$WORK/recv.out" 2>"$WORK/recv.err" &
RECV_PID=$!
PIDS+=("$RECV_PID")
wait_listen "$port"
set +e
"$BIN/file-send" --transport kernel --json "$WORK/in/tree" --to "127.0.0.1:$port" \
  >"$WORK/send.out" 2>"$WORK/send.err"
rc=$?
set -e
wait "$RECV_PID" || true
# The name with a control character cannot be sent: a local error, exit 1,
# but every other file must have gone.
[ "$rc" = 1 ] || fail "sender exit $rc (expected 1 for the unsendable name): $(cat "$WORK/send.err")"
[ -f "$WORK/out/tree/a$(printf '\xff')" ] || fail "the non-UTF-8 name did not arrive"
[ -f "$WORK/out/tree/b-after" ] || fail "the rest of the tree was abandoned: $(cat "$WORK/send.err")"
python3 - "$WORK/send.out" <<'PY' || fail "file-send --json printed something that is not JSON"
import json, sys
lines = open(sys.argv[1], "rb").read().splitlines()
docs = [json.loads(l) for l in lines]
files = {d["file"] for d in docs if "file" in d}
assert "tree/a\\xff" in files, files
assert "tree/b-after" in files, files
summary = [d for d in docs if "directory" in d]
assert len(summary) == 1 and summary[0]["files"] == 2, summary
PY
if grep -q "$(printf '\033')" "$WORK/send.out" "$WORK/send.err"; then
  fail "a raw escape character reached the terminal: $(cat -v "$WORK/send.err")"
fi
grep -qF 'c\x1b[31mred' "$WORK/send.err" || fail "the unsendable name is not reported escaped: $(cat -v "$WORK/send.err")"
echo "PASS"
