#!/usr/bin/env bash
# IPv6 endpoints on loopback (issue 20, no privileges), every address [::1]:
#  - file-send -> file-recv over tinytcp in the UDP tunnel on IPv6 sockets at
#    2% loss each way, and over kernel TCP (AF_INET6): files verified, the
#    receiver names the sender [::1]:PORT;
#  - the same receivers take an IPv4 sender too (they listen on [::]); one
#    given --listen [::1]:PORT takes [::1] and not 127.0.0.1;
#  - tt-perf stream and rr over [::1], udp and kernel;
#  - tt-tunnel client on [::1] -> server (udp tunnel, and kernel) -> a socat
#    echo server on [::1]: the echo is byte for byte what was sent;
#  - a malformed [ADDR]:PORT is one line and exit status 1.
# Usage: ipv6_transfer_test.sh BIN_DIR
set -euo pipefail
BIN=${1:?usage: $0 BIN_DIR}
WORK=$(mktemp -d /tmp/tt-e2e-ipv6.XXXXXX)
PIDS=()
ECHO_PID=""
cleanup() {
  [ -n "$ECHO_PID" ] && pkill -P "$ECHO_PID" 2>/dev/null || true
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
if ! python3 -c 'import socket; socket.socket(socket.AF_INET6).bind(("::1", 0))' 2>/dev/null; then
  echo "SKIP: no IPv6 loopback (::1) here"
  exit 0
fi
# A port free on ::1 and 127.0.0.1, TCP and UDP.
free_port() {
  python3 - <<'PY'
import socket
while True:
    probe = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    probe.bind(("::1", 0))
    port = probe.getsockname()[1]
    held = [probe]
    try:
        for family, kind, host in ((socket.AF_INET6, socket.SOCK_STREAM, "::1"),
                                   (socket.AF_INET, socket.SOCK_STREAM, "127.0.0.1"),
                                   (socket.AF_INET, socket.SOCK_DGRAM, "127.0.0.1")):
            s = socket.socket(family, kind)
            held.append(s)
            s.bind((host, port))
        print(port)
        break
    except OSError:
        pass
    finally:
        for s in held:
            s.close()
PY
}
wait_for() {  # FILE TEXT
  for _ in $(seq 200); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done
  fail "'$2' never appeared in $1"
}

head -c 3000000 /dev/urandom >"$WORK/data.bin"
want=$(sha256sum <"$WORK/data.bin" | cut -d' ' -f1)

# ---------------------------------------------------------------- file-send
LISTEN_AT=""  # file-recv --listen ADDR:, or every address
send_one() {  # TRANSPORT HOST FLAGS...
  local t=$1 host=$2
  shift 2
  rm -rf "$WORK/out" && mkdir -p "$WORK/out"
  local port
  port=$(free_port)
  "$BIN/file-recv" --listen "$LISTEN_AT$port" --output "$WORK/out" --transport "$t" --once \
    >"$WORK/recv.out" 2>"$WORK/recv.err" &
  local recv=$!
  PIDS+=("$recv")
  wait_for "$WORK/recv.err" "listening on port $port"
  timeout 50 "$BIN/file-send" --transport "$t" "$WORK/data.bin" --to "$host:$port" --json "$@" \
    >"$WORK/send.json" 2>"$WORK/send.err" || fail "[$t $host] file-send exit $?"
  wait "$recv" || fail "[$t $host] receiver exit status"
  [ "$(sha256sum <"$WORK/out/data.bin" | cut -d' ' -f1)" = "$want" ] || fail "[$t $host] sha256"
  grep -q '"verified":true' "$WORK/send.json" || fail "[$t $host] $(cat "$WORK/send.json")"
}
for t in udp kernel; do
  echo "--- [$t] file-send --to [::1]:PORT"
  loss=()
  [ "$t" = udp ] && loss=(--loss 2% --seed 3)
  send_one "$t" "[::1]" "${loss[@]}"
  grep -q "session from \[::1\]:" "$WORK/recv.err" || fail "[$t] sender not [::1]: $(cat "$WORK/recv.err")"
  [ "$t" = udp ] && { grep -q '"retransmits":[1-9]' "$WORK/send.json" || fail "no loss seen"; }
  echo "--- [$t] an IPv4 sender to the same kind of receiver ([::] takes both)"
  send_one "$t" 127.0.0.1
  grep -q "session from 127.0.0.1:" "$WORK/recv.err" || fail "[$t] sender not 127.0.0.1"
  echo "--- [$t] file-recv --listen [::1]:PORT: [::1] only"
  LISTEN_AT="[::1]:"
  send_one "$t" "[::1]"
  port=$(free_port)
  "$BIN/file-recv" --listen "[::1]:$port" --output "$WORK/out" --transport "$t" --once \
    >"$WORK/recv.out" 2>"$WORK/recv.err" &
  recv=$!
  PIDS+=("$recv")
  wait_for "$WORK/recv.err" "listening on port $port (address ::1"
  rc=0
  "$BIN/file-send" --transport "$t" "$WORK/data.bin" --to "127.0.0.1:$port" --connect-timeout 1 \
    >/dev/null 2>"$WORK/send.err" || rc=$?
  [ "$rc" = 5 ] || fail "[$t] an IPv4 sender to [::1]: exit $rc"
  kill "$recv"
  wait "$recv" 2>/dev/null || true
  LISTEN_AT=""
done

echo "--- malformed endpoints: one line, exit 1"
for bad in "::1:9" "[::1:9" "[::1]:99999" "[::zz]:9" "[::1]"; do
  rc=0
  "$BIN/file-recv" --listen "$bad" --output "$WORK" >/dev/null 2>"$WORK/bad.err" || rc=$?
  [ "$rc" = 1 ] && [ "$(wc -l <"$WORK/bad.err")" = 1 ] || fail "--listen $bad: $rc $(cat "$WORK/bad.err")"
  rc=0
  "$BIN/file-send" "$WORK/data.bin" --to "$bad" >/dev/null 2>"$WORK/bad.err" || rc=$?
  [ "$rc" = 1 ] || fail "--to $bad: exit $rc"
  [ "$(wc -l <"$WORK/bad.err")" = 1 ] || fail "--to $bad: $(cat "$WORK/bad.err")"
  grep -q "^file-send: " "$WORK/bad.err" || fail "--to $bad: $(cat "$WORK/bad.err")"
done

# ---------------------------------------------------------------- tt-perf
for t in udp kernel; do
  echo "--- [$t] tt-perf stream and rr over [::1]"
  port=$(free_port)
  "$BIN/tt-perf" server --listen "[::]:$port" --transport "$t" >"$WORK/perf-$t.out" \
    2>"$WORK/perf-$t.err" &
  PIDS+=($!)
  wait_for "$WORK/perf-$t.err" "tt-perf server on port"
  for mode in stream rr; do
    timeout 30 "$BIN/tt-perf" "$mode" --to "[::1]:$port" --transport "$t" --time 0.5 --json -q \
      >"$WORK/$mode-$t.json" 2>"$WORK/$mode-$t.err" || fail "tt-perf $mode $t: exit $?"
    python3 - "$mode" "$WORK/$mode-$t.json" <<'PY' || fail "tt-perf $mode $t: $(cat "$WORK/$mode-$t.json")"
import json, sys
mode, path = sys.argv[1:]
r = json.load(open(path))
ok = r["verified"] and r["bytes_delivered"] > 0 if mode == "stream" else r["transactions"] > 10
print(f"  {mode}: {r.get('bits_per_second', r.get('transactions_per_second'))}")
sys.exit(0 if ok else 1)
PY
  done
done

# ---------------------------------------------------------------- tt-tunnel
echo_port=$(free_port)
socat TCP6-LISTEN:"$echo_port",bind='[::1]',reuseaddr,fork EXEC:cat 2>"$WORK/echo.err" &
ECHO_PID=$!
PIDS+=("$ECHO_PID")
for t in udp kernel; do
  echo "--- [$t] tt-tunnel [::1] -> [::1] -> echo on [::1]"
  tunnel_port=$(free_port)
  client_port=$(free_port)
  "$BIN/tt-tunnel" server --listen "$tunnel_port" --forward "[::1]:$echo_port" --transport "$t" \
    >"$WORK/ts-$t.out" 2>"$WORK/ts-$t.err" &
  server=$!
  PIDS+=("$server")
  wait_for "$WORK/ts-$t.err" "tunnel server on port"
  "$BIN/tt-tunnel" client --listen "[::1]:$client_port" --to "[::1]:$tunnel_port" --transport "$t" \
    >"$WORK/tc-$t.out" 2>"$WORK/tc-$t.err" &
  client=$!
  PIDS+=("$client")
  wait_for "$WORK/tc-$t.err" "tunnel client on \[::1\]:$client_port"
  timeout 30 socat -t 10 TCP6:"[::1]:$client_port" - <"$WORK/data.bin" >"$WORK/echo-$t.bin" ||
    fail "[$t] socat exit $?"
  cmp -s "$WORK/data.bin" "$WORK/echo-$t.bin" || fail "[$t] the echo differs"
  kill "$client" "$server"
  wait "$client" || fail "[$t] client exit status"
  wait "$server" || fail "[$t] server exit status"
done
echo "PASS"
