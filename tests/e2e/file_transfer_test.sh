#!/usr/bin/env bash
# End to end: file-send and file-recv over kernel TCP on loopback.
# Verified transfer, refusal without --force, bad input, and resume after the
# receiver is killed mid-transfer. Usage: file_transfer_test.sh BIN_DIR
set -euo pipefail
BIN=${1:?usage: $0 BIN_DIR}
WORK=$(mktemp -d /tmp/tt-e2e-ft.XXXXXX)
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# A free port: ask the kernel, then release it.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_listen() {  # the receiver logs when it listens (a probe connection would use up --once)
  for _ in $(seq 200); do
    if grep -q "listening on port $1" "$WORK/recv.err" 2>/dev/null; then return 0; fi
    sleep 0.05
  done
  fail "receiver did not listen on $1: $(cat "$WORK/recv.err")"
}
start_recv() {  # port, extra args...
  local port=$1; shift
  "$BIN/file-recv" --listen "$port" --output "$WORK/out" "$@" >"$WORK/recv.out" 2>"$WORK/recv.err" &
  RECV_PID=$!
  PIDS+=("$RECV_PID")
  wait_listen "$port"
}

mkdir -p "$WORK/in" "$WORK/out"
head -c 30000000 /dev/urandom >"$WORK/in/data.bin"
want=$(sha256sum <"$WORK/in/data.bin" | cut -d' ' -f1)

echo "--- verified transfer"
port=$(free_port)
start_recv "$port" --once
"$BIN/file-send" "$WORK/in/data.bin" --to "127.0.0.1:$port" --json >"$WORK/send.json"
wait "$RECV_PID" || fail "receiver exit status"
got=$(sha256sum <"$WORK/out/data.bin" | cut -d' ' -f1)
[ "$got" = "$want" ] || fail "sha256 differs"
grep -q '"verified":true' "$WORK/send.json" || fail "sender summary: $(cat "$WORK/send.json")"
grep -q "\"sha256\":\"$want\"" "$WORK/send.json" || fail "sender summary hash"
ls -A "$WORK/out" | grep -q '\.part$' && fail "partial file left behind"

echo "--- existing file refused without --force (exit 3), replaced with it"
port=$(free_port)
start_recv "$port" --once
set +e; "$BIN/file-send" "$WORK/in/data.bin" --to "127.0.0.1:$port" 2>"$WORK/err"; rc=$?; set -e
[ "$rc" = 3 ] || fail "expected exit 3, got $rc"
grep -q "file exists" "$WORK/err" || fail "message: $(cat "$WORK/err")"
wait "$RECV_PID" && fail "receiver should report failure"
port=$(free_port)
start_recv "$port" --once --force
"$BIN/file-send" "$WORK/in/data.bin" --to "127.0.0.1:$port" >/dev/null
wait "$RECV_PID"

echo "--- bad input: one line, non-zero exit"
set +e
"$BIN/file-send" "$WORK/in/missing" --to 127.0.0.1:1 2>"$WORK/err"; rc=$?
set -e
[ "$rc" = 1 ] && [ "$(wc -l <"$WORK/err")" = 1 ] || fail "missing file: rc=$rc $(cat "$WORK/err")"
port=$(free_port)
set +e; "$BIN/file-send" "$WORK/in/data.bin" --to "127.0.0.1:$port" 2>"$WORK/err"; rc=$?; set -e
[ "$rc" = 5 ] || fail "unreachable: rc=$rc $(cat "$WORK/err")"
set +e; "$BIN/file-recv" --listen "$port" --output "$WORK/nonexistent-dir" 2>"$WORK/err"; rc=$?; set -e
[ "$rc" != 0 ] || fail "file-recv accepted a missing output directory"

echo "--- max size"
port=$(free_port)
start_recv "$port" --once --max-size 1000
set +e; "$BIN/file-send" "$WORK/in/data.bin" --to "127.0.0.1:$port" --name big.bin 2>"$WORK/err"; rc=$?; set -e
[ "$rc" = 3 ] || fail "max-size: rc=$rc"
wait "$RECV_PID" || true
[ -e "$WORK/out/big.bin" ] && fail "refused file was written"

echo "--- resume after the receiver is killed mid-transfer"
head -c 200000000 /dev/zero | tr '\0' 'r' >"$WORK/in/big.bin"
head -c 1000 /dev/urandom >>"$WORK/in/big.bin"
want=$(sha256sum <"$WORK/in/big.bin" | cut -d' ' -f1)
port=$(free_port)
start_recv "$port" --once
"$BIN/file-send" "$WORK/in/big.bin" --to "127.0.0.1:$port" >/dev/null 2>"$WORK/err1" &
SEND_PID=$!
PIDS+=("$SEND_PID")
for _ in $(seq 400); do
  part=$(find "$WORK/out" -name '.big.bin.*.part' -size +20M | head -1)
  [ -n "$part" ] && break
  sleep 0.01
done
[ -n "$part" ] || fail "no partial file appeared"
kill -9 "$RECV_PID"
set +e; wait "$SEND_PID"; rc=$?; set -e
[ "$rc" = 5 ] || fail "interrupted sender: expected exit 5, got $rc ($(cat "$WORK/err1"))"
[ -e "$WORK/out/big.bin" ] && fail "final name appeared before verification"
held=$(stat -c %s "$part")
echo "partial file holds $held bytes"
port=$(free_port)
start_recv "$port" --once
"$BIN/file-send" "$WORK/in/big.bin" --to "127.0.0.1:$port" --json >"$WORK/resume.json"
wait "$RECV_PID"
grep -q "\"resumed_from\":$held" "$WORK/resume.json" || fail "did not resume at $held: $(cat "$WORK/resume.json")"
got=$(sha256sum <"$WORK/out/big.bin" | cut -d' ' -f1)
[ "$got" = "$want" ] || fail "resumed file differs"
[ -e "$part" ] && fail "partial file left after success"
echo "1 passed, 0 failed"
