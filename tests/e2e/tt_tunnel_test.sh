#!/usr/bin/env bash
# tt-tunnel on loopback (no privileges): socat clients reach a socat echo
# server only through tt-tunnel client -> tt-tunnel server, over tinytcp in
# the UDP tunnel (plain and robust, with and without a pre-shared key, clean
# and at 5% loss each way) and over kernel TCP. Every byte comes back in order
# (cmp of what was sent and what was echoed, through half-close), several
# connections at once; a target that refuses, a wrong key and bad flags are
# refused with one line while the tunnel keeps serving. Resets cross the
# tunnel as resets (ABORT): a refused target or a target that resets gives the
# program ECONNRESET (direct kernel TCP: ECONNREFUSED / ECONNRESET), a program
# that resets makes the target see ECONNRESET.
# Usage: tt_tunnel_test.sh BIN_DIR
set -euo pipefail
BIN=${1:?usage: $0 BIN_DIR}
WORK=$(mktemp -d /tmp/tt-e2e-tunnel.XXXXXX)
PIDS=()
ECHO_PID=""
cleanup() {
  # socat's forked children (one per echo connection) first.
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
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_for() {  # FILE TEXT
  for _ in $(seq 200); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done
  fail "'$2' never appeared in $1"
}

echo_port=$(free_port)
socat TCP-LISTEN:"$echo_port",bind=127.0.0.1,reuseaddr,fork EXEC:cat 2>"$WORK/echo.err" &
ECHO_PID=$!
PIDS+=("$ECHO_PID")
for i in 1 2 3 4; do head -c $((1000000 * i + 17)) /dev/urandom >"$WORK/in$i.bin"; done
head -c 16 /dev/urandom >"$WORK/ok.key"
head -c 32 /dev/urandom >"$WORK/other.key"
head -c 8 /dev/urandom >"$WORK/short.key"

server_pid=""
client_pid=""
start_tunnel() {  # NAME TARGET_PORT SERVER_FLAGS CLIENT_FLAGS
  local name=$1 target=$2 sflags=$3 cflags=$4
  tunnel_port=$(free_port)
  client_port=$(free_port)
  # shellcheck disable=SC2086
  "$BIN/tt-tunnel" server --listen "$tunnel_port" --forward "127.0.0.1:$target" $sflags \
    >"$WORK/$name-server.out" 2>"$WORK/$name-server.err" &
  server_pid=$!
  PIDS+=("$server_pid")
  wait_for "$WORK/$name-server.err" "tunnel server on port"
  # shellcheck disable=SC2086
  "$BIN/tt-tunnel" client --listen "$client_port" --to "127.0.0.1:$tunnel_port" $cflags \
    >"$WORK/$name-client.out" 2>"$WORK/$name-client.err" &
  client_pid=$!
  PIDS+=("$client_pid")
  wait_for "$WORK/$name-client.err" "tunnel client on"
}
stop_tunnel() {  # NAME: SIGTERM, exit status 0, the summary line
  kill "$client_pid" "$server_pid"
  wait "$client_pid" || fail "$1: client exit status"
  wait "$server_pid" || fail "$1: server exit status"
  grep -q "finished" "$WORK/$1-client.err" || fail "$1: no client summary"
}
echo_through() {  # NAME FILE_NUMBER: sends the file, compares the echo
  timeout 120 socat -t 30 TCP:127.0.0.1:"$client_port" - <"$WORK/in$2.bin" >"$WORK/$1-out$2.bin" ||
    fail "$1: socat $2 exit $?"
  cmp -s "$WORK/in$2.bin" "$WORK/$1-out$2.bin" || fail "$1: echo $2 differs"
}

for mode in "plain-udp|--no-robust|--no-robust" \
            "kernel|--transport kernel|--transport kernel" \
            "robust-udp||" \
            "robust-key|--key-file $WORK/ok.key|--key-file $WORK/ok.key" \
            "robust-loss|--loss 5%|--loss 5%" \
            "robust-kernel|--transport kernel --robust|--transport kernel --robust"; do
  IFS='|' read -r name sflags cflags <<<"$mode"
  echo "--- $name"
  start_tunnel "$name" "$echo_port" "$sflags" "$cflags"
  echo_through "$name" 1
  jobs=()
  for i in 1 2 3 4; do echo_through "$name" "$i" & jobs+=($!); done
  for j in "${jobs[@]}"; do wait "$j" || fail "$name: a parallel echo failed"; done
  # The programs are done; each tunnelled connection closes within a few
  # round trips (a robust session once both ends acknowledged the other's FIN).
  for _ in $(seq 100); do
    [ "$(grep -c 'connection [0-9]* closed' "$WORK/$name-client.err")" = 5 ] && break
    sleep 0.1
  done
  stop_tunnel "$name"
  finished=$(sed -n 's/.*finished \([0-9]*\).*/\1/p' "$WORK/$name-client.err" | tail -n 1)
  [ "$finished" = 5 ] || fail "$name: $finished connections finished, 5 expected"
done

echo "--- passivation: an idle connection's carrier is closed; the next byte resumes it"
start_tunnel passive "$echo_port" "" "--passivate-after 0.5"
python3 - "$client_port" <<'PY' || fail "passivation: the echo after the idle time failed"
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=20)
def echo(data):
    s.sendall(data)
    got = b""
    while len(got) < len(data):
        chunk = s.recv(65536)
        if not chunk:
            raise SystemExit("EOF")
        got += chunk
    if got != data:
        raise SystemExit("echo differs")
echo(b"before" * 1000)
time.sleep(1.5)
echo(b"after" * 1000)
s.shutdown(socket.SHUT_WR)
if s.recv(1) != b"":
    raise SystemExit("no EOF")
PY
for _ in $(seq 50); do
  grep -q 'connection [0-9]* closed' "$WORK/passive-client.err" && break
  sleep 0.1
done
grep -q "carrier closed (passive" "$WORK/passive-client.err" || fail "passivation: never passivated"
stop_tunnel passive
grep -q "passivations 1" "$WORK/passive-client.err" || fail "passivation: $(tail -n 1 "$WORK/passive-client.err")"
grep -q "resumes 1" "$WORK/passive-client.err" || fail "passivation: not resumed once"

echo "--- resets: direct kernel TCP first, then the same through the tunnel (ABORT)"
dead_port=$(free_port)
probe() {  # PORT: connects, sends, reads; prints refused|reset|eof|data|timeout
  python3 - "$1" <<'PY'
import socket, sys
try:
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
except ConnectionRefusedError:
    print("refused"); sys.exit()
try:
    s.sendall(b"hello")
    print("data" if s.recv(100) else "eof")
except ConnectionResetError:
    print("reset")
except socket.timeout:
    print("timeout")
PY
}
got=$(probe "$dead_port")
[ "$got" = refused ] || fail "direct kernel TCP to a closed port: $got, refused expected"
for mode in "abort-udp||" "abort-key|--key-file $WORK/ok.key|--key-file $WORK/ok.key"; do
  IFS='|' read -r name sflags cflags <<<"$mode"
  start_tunnel "$name" "$dead_port" "$sflags --json" "$cflags"
  got=$(probe "$client_port")
  [ "$got" = reset ] || fail "$name: a refused target gave the program '$got', reset expected"
  grep -q "Connection refused" "$WORK/$name-server.err" || fail "$name: no log line"
  stop_tunnel "$name"
  python3 - "$WORK/$name-server.out" <<'PY' || fail "$name: server --json: $(cat "$WORK/$name-server.out")"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["aborts_sent"] == 1 and j["broken"] == 1, j
c = j["connections"][0]
assert c["end"] == "broken" and c["aborts_sent"] == 1 and c["resumes"] == 0, c
PY
done

# A target that accepts and then sees what the program did (reset|eof|timeout),
# or resets the connection itself after the first bytes.
target() {  # PORT MODE(watch|reset) OUT
  python3 - "$1" "$2" >"$3" <<'PY' &
import socket, struct, sys
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.1", int(sys.argv[1]))); l.listen(1); l.settimeout(20)
c, _ = l.accept(); c.settimeout(5)
print("ready", flush=True)
try:
    c.recv(100)
    if sys.argv[2] == "reset":
        c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)); c.close()
        print("did reset"); sys.exit()
    while True:
        if not c.recv(100):
            print("eof"); break
except ConnectionResetError:
    print("reset")
except socket.timeout:
    print("timeout")
PY
  PIDS+=($!)
}
target_port=$(free_port)
start_tunnel progreset "$target_port" "" ""
target "$target_port" watch "$WORK/target1.txt"
sleep 0.3
python3 - "$client_port" <<'PY' || fail "program reset: client side failed"
import socket, struct, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
s.sendall(b"hello")
time.sleep(0.5)
s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)); s.close()
PY
wait_for "$WORK/target1.txt" "reset\|eof\|timeout"
grep -q "^reset" "$WORK/target1.txt" || fail "program reset: the target saw $(tail -n 1 "$WORK/target1.txt")"
target "$target_port" reset "$WORK/target2.txt"
sleep 0.3
got=$(probe "$client_port")
[ "$got" = reset ] || fail "target reset: the program got '$got', reset expected"
stop_tunnel progreset

echo "--- a wrong key: refused, nothing forwarded"
start_tunnel wrongkey "$echo_port" "--key-file $WORK/ok.key" "--key-file $WORK/other.key --give-up 3"
set +e
timeout 30 socat -t 5 TCP:127.0.0.1:"$client_port" - <"$WORK/in1.bin" >"$WORK/wrongkey.out" 2>/dev/null
rc=$?
set -e
[ "$rc" != 124 ] || fail "wrong key: the program's connection hung"
[ ! -s "$WORK/wrongkey.out" ] || fail "wrong key: bytes came back"
kill "$client_pid" "$server_pid"
wait "$client_pid" || true
wait "$server_pid" || fail "wrong key: server exit status"

echo "--- bad flags: one line, exit 1"
check_refused() {  # EXPECTED_TEXT ARGS...
  local want=$1
  shift
  set +e
  "$BIN/tt-tunnel" "$@" >/dev/null 2>"$WORK/flags.err"
  local rc=$?
  set -e
  [ "$rc" != 0 ] || fail "tt-tunnel $* was accepted"
  grep -q -- "$want" "$WORK/flags.err" || fail "tt-tunnel $*: $(cat "$WORK/flags.err")"
}
check_refused "at least 16" client --listen 1 --to 127.0.0.1:9 --key-file "$WORK/short.key"
check_refused "needs --robust" client --listen 1 --to 127.0.0.1:9 --no-robust --key-file "$WORK/ok.key"
check_refused "choose one" server --listen 9 --forward 127.0.0.1:9 --robust --no-robust
check_refused "cannot listen" client --listen 127.0.0.1:"$echo_port" --to 127.0.0.1:9
echo "1 passed, 0 failed"
