#!/usr/bin/env bash
# Issue 17, the paper's three (Ekwall, Urbán, Schiper): the cost of a robust session
# against a plain carrier, through tt-tunnel, in one run:
#   RR      1-byte ping-pong on one connection (scripts/bench/rr_crr.py), transactions/s
#   STREAM  sockperf throughput, 8 KiB messages over TCP, MB/s (sockperf's sender summary)
#   CRR     connect, 64-byte request, 8 KiB reply, close (scripts/bench/rr_crr.py), transactions/s
# Arms: direct (no tunnel, the reference), kernel-plain, kernel-robust (tt-tunnel
# --transport kernel --no-robust/--robust), udp-plain, udp-robust (tinytcp in the UDP
# tunnel). Everything runs on the loopback of one throwaway namespace (no loss, no other
# program's ports). Rounds are interleaved: each round runs every arm and every test once.
# A fresh tunnel pair forwards to each test's server.
#
#   bench-session-overhead.sh [--quick] [--rounds 7] [--seconds 3] [--arms "..."]
#                             [--tests "RR STREAM CRR"] [--out FILE] [--no-lock]
#
# --quick: 1 round of 1 s tests. The build lock (/tmp/locks/build) is taken around each
# round unless --no-lock (when the caller holds it). TT_BIN=DIR picks the tt-tunnel binary
# directory (default build/release/bin). Before/after in one run: an arm ARM-before (e.g.
# kernel-robust-before) runs ARM with the tt-tunnel of TT_BIN_BEFORE=DIR (a copy of an
# older build).
# Columns: round,arm,test,value,unit
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/bench/lib.sh
source scripts/bench/lib.sh

rounds=7
seconds=3
arms="direct kernel-plain kernel-robust udp-plain udp-robust"
tests="RR STREAM CRR"
out=""
lock=1
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) rounds=1; seconds=1; shift ;;
    --rounds) rounds=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --arms) arms=$2; shift 2 ;;
    --tests) tests=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --no-lock) lock=0; shift ;;
    *) echo "bench-session-overhead: unknown argument $1" >&2; exit 2 ;;
  esac
done
for test in $tests; do
  case "$test" in
    RR | STREAM | CRR) ;;
    *) echo "bench-session-overhead: unknown test $test (RR, STREAM, CRR)" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" -eq 0 ] || { echo "bench-session-overhead: needs root (a network namespace)" >&2; exit 1; }
BIN=${TT_BIN:-build/release/bin}
[ -x "$BIN/tt-tunnel" ] || { echo "bench-session-overhead: no $BIN/tt-tunnel (build the release preset)" >&2; exit 1; }
for tool in sockperf python3 ss; do
  command -v "$tool" >/dev/null || { echo "bench-session-overhead: $tool missing (scripts/install-deps.sh)" >&2; exit 1; }
done
DRIVER=scripts/bench/rr_crr.py

NS="ttb17o-$$"
RR_PORT=7201 CRR_PORT=7202 STREAM_PORT=7203 TUNNEL_PORT=7301 LOCAL_PORT=7401
WORK=$(mktemp -d /tmp/tt-bench-overhead.XXXXXX)
SERVER_PIDS=()
TUNNEL_PIDS=()
stop() {  # array name
  local -n pids=$1
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  pids=()
}
cleanup() {
  stop TUNNEL_PIDS
  stop SERVER_PIDS
  ip netns del "$NS" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
ip netns add "$NS"
ip -n "$NS" link set lo up
in_ns() { ip netns exec "$NS" "$@"; }

exec 3>&1
if [ -n "$out" ]; then
  mkdir -p "$(dirname "$out")"
  exec 3>"$out"
fi
echo "round,arm,test,value,unit" >&3

ip netns exec "$NS" python3 "$DRIVER" serve-rr --port "$RR_PORT" >/dev/null 2>"$WORK/serve-rr.err" &
SERVER_PIDS+=($!)
ip netns exec "$NS" python3 "$DRIVER" serve-crr --port "$CRR_PORT" >/dev/null 2>"$WORK/serve-crr.err" &
SERVER_PIDS+=($!)
ip netns exec "$NS" sockperf sr --tcp -i 127.0.0.1 -p "$STREAM_PORT" >"$WORK/sockperf-server.out" 2>&1 &
SERVER_PIDS+=($!)
listening "$NS" tcp "$RR_PORT"
listening "$NS" tcp "$CRR_PORT"
listening "$NS" tcp "$STREAM_PORT"

# Starts the arm's tunnel to TARGET_PORT and prints the port the test connects to.
start_arm() {  # ARM TARGET_PORT
  local arm=$1 target=$2 flags bin=$BIN
  if [ "${arm%-before}" != "$arm" ]; then
    bin=${TT_BIN_BEFORE:?"bench-session-overhead: $arm needs TT_BIN_BEFORE=DIR"}
    arm=${arm%-before}
  fi
  case "$arm" in
    direct) echo "$target"; return 0 ;;
    kernel-plain) flags=(--transport kernel --no-robust) ;;
    kernel-robust) flags=(--transport kernel --robust) ;;
    udp-plain) flags=(--transport udp --no-robust) ;;
    udp-robust) flags=(--transport udp --robust) ;;
    *) echo "bench-session-overhead: unknown arm $arm" >&2; exit 2 ;;
  esac
  local proto=tcp
  [ "${arm%%-*}" = udp ] && proto=udp
  ip netns exec "$NS" "$bin/tt-tunnel" server --listen "$TUNNEL_PORT" --forward "127.0.0.1:$target" \
    --max-connections 100000 "${flags[@]}" >"$WORK/server.out" 2>"$WORK/server.err" &
  TUNNEL_PIDS+=($!)
  listening "$NS" "$proto" "$TUNNEL_PORT" >&2
  ip netns exec "$NS" "$bin/tt-tunnel" client --listen "127.0.0.1:$LOCAL_PORT" --to "127.0.0.1:$TUNNEL_PORT" \
    --max-connections 100000 "${flags[@]}" >"$WORK/client.out" 2>"$WORK/client.err" &
  TUNNEL_PIDS+=($!)
  listening "$NS" tcp "$LOCAL_PORT" >&2
  echo "$LOCAL_PORT"
}

run_test() {  # ROUND ARM TEST
  local round=$1 arm=$2 test=$3 target port value unit
  case "$test" in
    RR) target=$RR_PORT; unit=trans_per_s ;;
    CRR) target=$CRR_PORT; unit=trans_per_s ;;
    STREAM) target=$STREAM_PORT; unit=MBps ;;
  esac
  # start_arm runs in this shell (not $(...)) so the tunnel PIDs are recorded here.
  start_arm "$arm" "$target" >"$WORK/port"
  port=$(cat "$WORK/port")
  set +e
  case "$test" in
    RR | CRR)
      value=$(timeout $((seconds * 4 + 30)) ip netns exec "$NS" python3 "$DRIVER" \
        "$(tr '[:upper:]' '[:lower:]' <<<"$test")" --port "$port" --seconds "$seconds" 2>"$WORK/driver.err")
      ;;
    STREAM)
      value=$(timeout $((seconds * 4 + 30)) ip netns exec "$NS" sockperf tp --tcp -i 127.0.0.1 \
        -p "$port" -m 8192 -t "$seconds" 2>&1 | sed -n 's/.*BandWidth is \([0-9.]*\) MBps.*/\1/p')
      ;;
  esac
  set -e
  [ -n "$value" ] || { value=0; echo "bench-session-overhead: $arm $test round $round failed" >&2; }
  stop TUNNEL_PIDS
  echo "$round,$arm,$test,$value,$unit" >&3
}

for round in $(seq "$rounds"); do
  [ "$lock" = 1 ] && { exec 9>/tmp/locks/build; flock 9; }
  for arm in $arms; do
    for test in $tests; do
      run_test "$round" "$arm" "$test"
    done
  done
  [ "$lock" = 1 ] && { flock -u 9; exec 9>&-; }
  echo "bench-session-overhead: round $round done" >&2
done
