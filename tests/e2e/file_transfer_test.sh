#!/usr/bin/env bash
# End to end: file-send and file-recv on loopback, over kernel TCP and over
# tinytcp's TCP inside the UDP tunnel. For each: verified transfer, refusal
# without --force, bad input, max size, and resume after the receiver is killed
# mid-transfer; for the UDP tunnel also a transfer through the impairment stage
# with a cwnd trace. Usage: file_transfer_test.sh BIN_DIR
set -euo pipefail
BIN=${1:?usage: $0 BIN_DIR}
WORK=$(mktemp -d /tmp/tt-e2e-ft.XXXXXX)
PIDS=()
. "$(dirname "$0")/lib.sh"
start_recv() {  # port, extra args...
  local port=$1; shift
  "$BIN/file-recv" --listen "$port" --output "$WORK/out" --transport "$T" "$@" \
    >"$WORK/recv.out" 2>"$WORK/recv.err" &
  RECV_PID=$!
  PIDS+=("$RECV_PID")
  wait_listen "$port"
}

suite() {  # transport
  T=$1
  rm -rf "$WORK/in" "$WORK/out"
  mkdir -p "$WORK/in" "$WORK/out"
  head -c 30000000 /dev/urandom >"$WORK/in/data.bin"
  want=$(sha256sum <"$WORK/in/data.bin" | cut -d' ' -f1)

  echo "--- [$T] verified transfer"
  port=$(free_port)
  start_recv "$port" --once
  "$BIN/file-send" --transport "$T" "$WORK/in/data.bin" --to "127.0.0.1:$port" --json >"$WORK/send.json"
  wait "$RECV_PID" || fail "receiver exit status"
  got=$(sha256sum <"$WORK/out/data.bin" | cut -d' ' -f1)
  [ "$got" = "$want" ] || fail "sha256 differs"
  grep -q '"verified":true' "$WORK/send.json" || fail "sender summary: $(cat "$WORK/send.json")"
  grep -q "\"sha256\":\"$want\"" "$WORK/send.json" || fail "sender summary hash"
  ! ls -A "$WORK/out" | grep -q '\.part$' || fail "partial file left behind"

  echo "--- [$T] existing file refused without --force (exit 3), replaced with it"
  port=$(free_port)
  start_recv "$port" --once
  set +e; "$BIN/file-send" --transport "$T" "$WORK/in/data.bin" --to "127.0.0.1:$port" 2>"$WORK/err"; rc=$?; set -e
  [ "$rc" = 3 ] || fail "expected exit 3, got $rc"
  grep -q "file exists" "$WORK/err" || fail "message: $(cat "$WORK/err")"
  wait "$RECV_PID" && fail "receiver should report failure"
  port=$(free_port)
  start_recv "$port" --once --force
  "$BIN/file-send" --transport "$T" "$WORK/in/data.bin" --to "127.0.0.1:$port" >/dev/null
  wait "$RECV_PID"

  echo "--- [$T] bad input: one line, non-zero exit"
  set +e
  "$BIN/file-send" --transport "$T" "$WORK/in/missing" --to 127.0.0.1:1 2>"$WORK/err"; rc=$?
  set -e
  [ "$rc" = 1 ] && [ "$(wc -l <"$WORK/err")" = 1 ] || fail "missing file: rc=$rc $(cat "$WORK/err")"
  port=$(free_port)
  set +e
  "$BIN/file-send" --transport "$T" "$WORK/in/data.bin" --to "127.0.0.1:$port" --connect-timeout 2 \
    2>"$WORK/err"
  rc=$?
  set -e
  [ "$rc" = 5 ] || fail "unreachable: rc=$rc $(cat "$WORK/err")"
  set +e; "$BIN/file-recv" --listen "$port" --output "$WORK/nonexistent-dir" 2>"$WORK/err"; rc=$?; set -e
  [ "$rc" != 0 ] || fail "file-recv accepted a missing output directory"

  echo "--- [$T] max size"
  port=$(free_port)
  start_recv "$port" --once --max-size 1000
  set +e; "$BIN/file-send" --transport "$T" "$WORK/in/data.bin" --to "127.0.0.1:$port" --name big.bin 2>"$WORK/err"; rc=$?; set -e
  [ "$rc" = 3 ] || fail "max-size: rc=$rc"
  wait "$RECV_PID" || true
  [ ! -e "$WORK/out/big.bin" ] || fail "refused file was written"

  echo "--- [$T] resume after the receiver is killed mid-transfer"
  head -c 200000000 /dev/zero | tr '\0' 'r' >"$WORK/in/big.bin"
  head -c 1000 /dev/urandom >>"$WORK/in/big.bin"
  want=$(sha256sum <"$WORK/in/big.bin" | cut -d' ' -f1)
  port=$(free_port)
  start_recv "$port" --once
  "$BIN/file-send" --transport "$T" "$WORK/in/big.bin" --to "127.0.0.1:$port" --idle-timeout 3 >/dev/null 2>"$WORK/err1" &
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
  [ ! -e "$WORK/out/big.bin" ] || fail "final name appeared before verification"
  held=$(stat -c %s "$part")
  echo "partial file holds $held bytes"
  port=$(free_port)
  start_recv "$port" --once
  "$BIN/file-send" --transport "$T" "$WORK/in/big.bin" --to "127.0.0.1:$port" --json >"$WORK/resume.json"
  wait "$RECV_PID"
  grep -q "\"resumed_from\":$held" "$WORK/resume.json" || fail "did not resume at $held: $(cat "$WORK/resume.json")"
  got=$(sha256sum <"$WORK/out/big.bin" | cut -d' ' -f1)
  [ "$got" = "$want" ] || fail "resumed file differs"
  [ ! -e "$part" ] || fail "partial file left after success"
}

impaired() {  # the UDP tunnel through the impairment stage, with a trace
  T=udp
  echo "--- [udp] 5% loss and 1 ms delay each way, cwnd trace"
  rm -rf "$WORK/out"
  mkdir -p "$WORK/out"
  head -c 3000000 /dev/urandom >"$WORK/in/lossy.bin"
  port=$(free_port)
  start_recv "$port" --once --loss 5% --delay 1ms --seed 7
  "$BIN/file-send" "$WORK/in/lossy.bin" --to "127.0.0.1:$port" --loss 5% --delay 1ms --seed 8 \
    --trace "$WORK/trace.csv" --json >"$WORK/lossy.json"
  wait "$RECV_PID" || fail "receiver exit status (lossy)"
  cmp -s "$WORK/in/lossy.bin" "$WORK/out/lossy.bin" || fail "lossy transfer differs"
  grep -q '"verified":true' "$WORK/lossy.json" || fail "lossy summary: $(cat "$WORK/lossy.json")"
  python3 - "$WORK/lossy.json" "$WORK/trace.csv" <<'PY' || fail "summary or trace"
import csv, json, sys
summary = json.loads(open(sys.argv[1]).read())
assert summary["transport"] == "udp" and summary["retransmits"] > 0, summary
assert 0 < summary["efficiency"] < 1, summary
rows = list(csv.DictReader(open(sys.argv[2])))
assert list(rows[0]) == ["time_s", "cwnd", "ssthresh", "srtt_ms", "rto_ms", "bytes_in_flight",
                         "retransmits"], rows[0]
assert len(rows) > 10 and int(rows[-1]["retransmits"]) > 0, len(rows)
assert all(float(a["time_s"]) <= float(b["time_s"]) for a, b in zip(rows, rows[1:]))
PY

  echo "--- [udp] flags of the stack transports are refused with kernel TCP"
  set +e
  "$BIN/file-send" "$WORK/in/lossy.bin" --to 127.0.0.1:1 --transport kernel --loss 5% \
    2>"$WORK/err"
  rc=$?
  set -e
  [ "$rc" = 1 ] && [ "$(wc -l <"$WORK/err")" = 1 ] || fail "kernel --loss: rc=$rc $(cat "$WORK/err")"
  set +e; "$BIN/file-send" "$WORK/in/lossy.bin" --to 127.0.0.1:1 --cc nosuch 2>"$WORK/err"; rc=$?; set -e
  [ "$rc" = 1 ] && grep -q "nosuch" "$WORK/err" || fail "bad --cc: rc=$rc $(cat "$WORK/err")"
}

sessions() {  # transport: a receiver without --once serves session after session
  T=$1
  echo "--- [$T] one receiver, several sessions, stray datagrams in between"
  rm -rf "$WORK/out"
  mkdir -p "$WORK/out"
  port=$(free_port)
  start_recv "$port"
  for i in 1 2 3 4; do
    head -c $((100000 * i)) /dev/urandom >"$WORK/in/s$i.bin"
    "$BIN/file-send" --transport "$T" "$WORK/in/s$i.bin" --to "127.0.0.1:$port" --connect-timeout 5 \
      >/dev/null 2>"$WORK/err" || fail "session $i: $(cat "$WORK/err")"
    cmp -s "$WORK/in/s$i.bin" "$WORK/out/s$i.bin" || fail "session $i: file differs"
    # A late datagram from a sender that is gone (not a SYN) must not become
    # the tunnel's peer and shut out the next sender.
    if [ "$T" = udp ]; then
      python3 -c 'import socket,sys; s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM); s.sendto(b"\x45"+b"\0"*39,("127.0.0.1",int(sys.argv[1])))' "$port"
    fi
  done
  kill -0 "$RECV_PID" || fail "receiver exited between sessions"
  [ "$(grep -c 'integrity verified' "$WORK/recv.out")" = 4 ] || fail "receiver output: $(cat "$WORK/recv.out")"
  kill "$RECV_PID"
  wait "$RECV_PID" 2>/dev/null || true
}

suite kernel
suite udp
sessions kernel
sessions udp
impaired
echo "1 passed, 0 failed"
