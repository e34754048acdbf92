#!/usr/bin/env bash
# tt-perf on loopback (no privileges): a server per transport (tinytcp in the
# UDP tunnel, kernel TCP) and every client mode against it, --json parsed and
# checked (rates, latency percentiles in order, packet counts, echo verified
# by SHA-256, stream/messages byte counts confirmed by the server); echo
# through 5% loss and messages stop-and-wait (--cc fixed:1); a server that
# corrupts one echoed byte makes echo fail (exit 3); echo, stream and
# messages stopped by SIGTERM midway fail (exit 1); garbage instead of a
# header is refused while the server keeps serving; bad flags give one line
# on stderr and a non-zero exit.
# Usage: tt_perf_test.sh BIN_DIR
set -euo pipefail
BIN=${1:?usage: $0 BIN_DIR}
WORK=$(mktemp -d /tmp/tt-e2e-perf.XXXXXX)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  for f in "$WORK"/*.err; do echo "--- $f" >&2; tail -n 20 "$f" >&2; done
  exit 1
}
free_port() {
  python3 - <<'PY'
import socket
while True:
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.bind(("127.0.0.1", 0))
    port = u.getsockname()[1]
    t = socket.socket()
    try:
        t.bind(("127.0.0.1", port))
        print(port)
        break
    except OSError:
        pass
    finally:
        t.close()
        u.close()
PY
}
wait_for() {  # FILE TEXT
  for _ in $(seq 200); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done
  fail "'$2' never appeared in $1"
}
# check NAME JSON_FILE PYTHON_EXPR...: each expression over `r` (the report) must hold.
check() {
  local name=$1 file=$2
  shift 2
  python3 - "$file" "$@" <<'PY' || fail "$name: $(cat "$file")"
import json, sys
r = json.loads(open(sys.argv[1]).read())
for expr in sys.argv[2:]:
    if not eval(expr, {"r": r}):
        print(f"does not hold: {expr}", file=sys.stderr)
        sys.exit(1)
PY
}
LAT='r["latency_us"]["p50"] <= r["latency_us"]["p90"] <= r["latency_us"]["p99"] <= r["latency_us"]["max"]'

declare -A PORT
for transport in udp kernel; do
  PORT[$transport]=$(free_port)
  "$BIN/tt-perf" server --listen "${PORT[$transport]}" --transport "$transport" \
    >"$WORK/server-$transport.out" 2>"$WORK/server-$transport.err" &
  PIDS+=($!)
  wait_for "$WORK/server-$transport.err" "tt-perf server on port"
done

run() {  # NAME TRANSPORT MODE ARGS...
  local name=$1 transport=$2 mode=$3
  shift 3
  timeout 30 "$BIN/tt-perf" "$mode" --to "127.0.0.1:${PORT[$transport]}" --transport "$transport" \
    --json -q "$@" >"$WORK/$name.json" 2>"$WORK/$name.err" ||
    fail "$name: exit $?"
}

for t in udp kernel; do
  run "stream-$t" "$t" stream --time 0.5 --parallel 2
  check "stream-$t" "$WORK/stream-$t.json" 'r["mode"] == "stream"' 'r["verified"]' \
    'r["bytes_delivered"] == r["bytes_sent"] > 0' 'r["bits_per_second"] > 0' \
    'r["connections"] == 2' 'r["packets"]["sent"] > 0' 'r["errors"] == 0'
  run "rr-$t" "$t" rr --time 0.5
  check "rr-$t" "$WORK/rr-$t.json" 'r["transactions"] > 10' 'r["transactions_per_second"] > 0' \
    "$LAT" 'r["latency_us"]["count"] == r["transactions"]' 'r["packets"]["sent"] >= r["transactions"]'
  run "crr-$t" "$t" crr --time 0.5 --parallel 2
  check "crr-$t" "$WORK/crr-$t.json" 'r["transactions"] > 0' "$LAT" \
    'r["connections"] >= r["transactions"]' 'r["bytes_received"] == 8192 * r["transactions"]'
  run "echo-$t" "$t" echo --messages 200 --size 200-399 --gap 0-2ms --seed 7
  check "echo-$t" "$WORK/echo-$t.json" 'r["verified"]' 'r["transactions"] == 200' \
    'r["bytes_received"] == r["bytes_sent"]' '200 * 200 <= r["bytes_sent"] <= 200 * 399' \
    'len(r["sha256"]) == 64' "$LAT"
  run "messages-$t" "$t" messages --count 500 --size 1000
  check "messages-$t" "$WORK/messages-$t.json" 'r["verified"]' 'r["transactions"] == 500' \
    'r["bytes_delivered"] == 500000' 'r["packets"]["received"] > 0'
done
# The same seed draws the same messages, whatever the transport.
python3 -c 'import json,sys; a,b=(json.load(open(f))["sha256"] for f in sys.argv[1:]); sys.exit(a!=b)' \
  "$WORK/echo-udp.json" "$WORK/echo-kernel.json" || fail "echo: the seed did not fix the messages"
grep -q "TCP_INFO" "$WORK/rr-kernel.json" || fail "kernel packets: method not stated"
grep -q "Host counters" "$WORK/rr-udp.json" || fail "udp packets: method not stated"

# Loss, and stop-and-wait: one segment in flight, so each data segment (full
# ones: TCP packs the 1000-byte messages) is acknowledged on its own, about
# as many packets come back as go out.
run echo-loss udp echo --messages 100 --gap 0-1ms --loss 5% --seed 3 --trace "$WORK/trace.csv"
check echo-loss "$WORK/echo-loss.json" 'r["verified"]' 'r["transactions"] == 100'
# --trace: the sender's state over time; at 5% loss some segment went again.
python3 - "$WORK/trace.csv" <<'PY' || fail "--trace: $(head -5 "$WORK/trace.csv")"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert list(rows[0].keys()) == ["time_s", "cwnd", "ssthresh", "srtt_ms", "rto_ms",
                                "bytes_in_flight", "retransmits"], rows[0].keys()
assert len(rows) >= 10, len(rows)
times = [float(r["time_s"]) for r in rows]
assert times == sorted(times) and times[0] == 0, "time must start at 0 and never go back"
assert int(rows[-1]["retransmits"]) > 0, "no retransmission recorded at 5% loss"
PY
run saw udp messages --count 300 --size 1000 --cc fixed:1
check saw "$WORK/saw.json" 'r["verified"]' 'r["cc"] == "fixed:1"' \
  '300000 / 1460 <= r["packets"]["sent"] <= 300 + 10' \
  'abs(r["packets"]["sent"] - r["packets"]["received"]) <= 5'
# --no-delayed-ack on the receiving server: stop-and-wait no longer waits out
# the 5 ms delayed ACK of each segment (about 1 s for these 206 segments).
PORT[quick]=$(free_port)
"$BIN/tt-perf" server --listen "${PORT[quick]}" --transport udp --no-delayed-ack \
  >"$WORK/server-quick.out" 2>"$WORK/server-quick.err" &
PIDS+=($!)
wait_for "$WORK/server-quick.err" "tt-perf server on port"
timeout 30 "$BIN/tt-perf" messages --to "127.0.0.1:${PORT[quick]}" --transport udp --json -q \
  --count 300 --size 1000 --cc fixed:1 >"$WORK/saw-quick.json" 2>"$WORK/saw-quick.err" ||
  fail "saw-quick: exit $?"
check saw-quick "$WORK/saw-quick.json" 'r["verified"]'
python3 -c 'import json,sys; q,d=(json.load(open(f))["seconds"] for f in sys.argv[1:]); print(f"stop-and-wait: {d:.3f} s with delayed ACKs, {q:.3f} s without"); sys.exit(not q < d / 2)' \
  "$WORK/saw-quick.json" "$WORK/saw.json" || fail "--no-delayed-ack: stop-and-wait not faster"

# A server that flips one echoed byte: echo must notice.
bad_port=$(free_port)
python3 - "$bad_port" >"$WORK/corrupt.out" 2>"$WORK/corrupt.err" <<'PY' &
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(1)
print("listening", flush=True)
c, _ = s.accept()
head = b""
while len(head) < 16:
    head += c.recv(16 - len(head))
total = 0
while True:
    data = bytearray(c.recv(65536))
    if not data:
        break
    if total <= 1000 < total + len(data):
        data[1000 - total] ^= 1
    total += len(data)
    c.sendall(data)
c.close()
PY
PIDS+=($!)
wait_for "$WORK/corrupt.out" listening
set +e
timeout 30 "$BIN/tt-perf" echo --to "127.0.0.1:$bad_port" --transport kernel --messages 20 \
  --gap 0ms --json -q >"$WORK/corrupt.json" 2>"$WORK/corrupt-client.err"
status=$?
set -e
[ "$status" -eq 3 ] || fail "corrupted echo: exit $status, expected 3"
check corrupt "$WORK/corrupt.json" 'r["verified"] is False'

# Interrupted (a timeout around a stalled run): an error, exit 1, never
# verified; before, echo said "the bytes did not match" (exit 3), and so did
# stream and messages (the server had not counted the bytes yet).
interrupted() {  # NAME TRANSPORT MODE ARGS...: SIGTERM after 1 s
  local name=$1 transport=$2 mode=$3
  shift 3
  set +e
  timeout --preserve-status -s TERM 1 "$BIN/tt-perf" "$mode" --to "127.0.0.1:${PORT[$transport]}" \
    --transport "$transport" --json -q "$@" >"$WORK/$name.json" 2>"$WORK/$name.err"
  local status=$?
  set -e
  [ "$status" -eq 1 ] || fail "$name: exit $status, expected 1"
  grep -q "interrupted with" "$WORK/$name.err" || fail "$name: $(cat "$WORK/$name.err")"
  check "$name" "$WORK/$name.json" 'r.get("verified") is not True' 'r["errors"] == 1'
}
interrupted interrupted-echo kernel echo --messages 1000 --gap 20ms
interrupted interrupted-stream kernel stream --time 30 --parallel 2
# Stop-and-wait through the 5 ms delayed ACK: far from done after 1 s.
interrupted interrupted-bytes udp stream --bytes 100000000 --cc fixed:1
interrupted interrupted-messages udp messages --count 100000 --size 1000 --cc fixed:1

# Not a tt-perf client: refused, and the server serves the next one.
python3 -c 'import socket,sys; s=socket.create_connection(("127.0.0.1",int(sys.argv[1]))); s.sendall(b"GET / HTTP/1.1\r\n\r\n"); s.recv(10); s.close()' \
  "${PORT[kernel]}" 2>/dev/null || true
wait_for "$WORK/server-kernel.err" "bad header"
run after-garbage kernel rr --time 0.2
check after-garbage "$WORK/after-garbage.json" 'r["transactions"] > 0'

# Bad flags: one line on stderr, non-zero exit.
bad() {  # ARGS...
  set +e
  "$BIN/tt-perf" "$@" >"$WORK/bad.out" 2>"$WORK/bad.err"
  local status=$?
  set -e
  [ "$status" -ne 0 ] || fail "accepted: $*"
  [ "$(wc -l <"$WORK/bad.err")" -eq 1 ] || fail "not one line for '$*': $(cat "$WORK/bad.err")"
  grep -q "^tt-perf: " "$WORK/bad.err" || fail "no 'tt-perf:' prefix for '$*'"
}
bad echo --to 127.0.0.1:9 --size 399-200
bad echo --to 127.0.0.1:9 --gap 19
bad messages --to 127.0.0.1:9 --size 200-399
bad rr --to 127.0.0.1:9 --bogus
bad rr --to 127.0.0.1:9 --transport carrier-pigeon
bad rr --to 127.0.0.1:9 --time -1
bad stream
bad rr --to 127.0.0.1:9 --transport kernel --trace "$WORK/k.csv"
bad server --listen 9 --trace "$WORK/s.csv"
bad rr --to 127.0.0.1:9 --transport kernel --no-delayed-ack
# A refused connection ends the run with one error line (it used to call
# through the failed slot's null channel).
bad rr --to "127.0.0.1:$(free_port)" --transport kernel --time 0.2
bad crr --to "127.0.0.1:$(free_port)" --transport kernel --time 0.2
bad
echo "PASS"
