#!/usr/bin/env bash
# What one forwarded connection costs tt-tunnel (issue 17, CRR): N back-to-back
# connections (connect, 64-byte request, 8 KiB reply, close) through a tunnel pair
# on the loopback of a throwaway namespace, per arm: latency per connection (p50, p90)
# and, for each tunnel process, CPU time and system calls per connection.
#
#   crr_cost.sh [--count 3000] [--arms "kernel-plain kernel-robust udp-plain udp-robust"]
#               [--out FILE]
#
# CPU comes from /proc/PID/stat (utime + stime), system calls from
# `perf stat -e raw_syscalls:sys_enter` (blank without perf). Unlike the throughput
# benchmark (bench-session-overhead.sh) these figures hardly depend on what else the
# machine runs. TT_BIN=DIR picks the tt-tunnel binary (default build/release/bin); an arm
# ARM-before (e.g. kernel-robust-before) runs ARM with TT_BIN_BEFORE=DIR's (an older build).
# Columns: arm,connections,p50_us,p90_us,client_cpu_us,server_cpu_us,client_syscalls,server_syscalls
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/bench/lib.sh
source scripts/bench/lib.sh

count=3000
arms="kernel-plain kernel-robust udp-plain udp-robust"
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --count) count=$2; shift 2 ;;
    --arms) arms=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "crr_cost: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" -eq 0 ] || { echo "crr_cost: needs root (a network namespace)" >&2; exit 1; }
BIN=${TT_BIN:-build/release/bin}
[ -x "$BIN/tt-tunnel" ] || { echo "crr_cost: no $BIN/tt-tunnel (build the release preset)" >&2; exit 1; }
DRIVER=scripts/bench/rr_crr.py
have_perf=0
command -v perf >/dev/null && perf stat -e raw_syscalls:sys_enter true >/dev/null 2>&1 && have_perf=1

NS="ttcrr-$$"
TARGET=7501 TUNNEL=7502 LOCAL=7503
WORK=$(mktemp -d /tmp/tt-crr-cost.XXXXXX)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  ip netns del "$NS" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
ip netns add "$NS"
ip -n "$NS" link set lo up
in_ns() { ip netns exec "$NS" "$@"; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

exec 3>&1
[ -n "$out" ] && { mkdir -p "$(dirname "$out")"; exec 3>"$out"; }
echo "arm,connections,p50_us,p90_us,client_cpu_us,server_cpu_us,client_syscalls,server_syscalls" >&3

ip netns exec "$NS" python3 "$DRIVER" serve-crr --port "$TARGET" >/dev/null 2>"$WORK/serve.err" &
PIDS+=($!)
listening "$NS" tcp "$TARGET"
hz=$(getconf CLK_TCK)
for arm in $arms; do
  bin=$BIN base=$arm
  if [ "${arm%-before}" != "$arm" ]; then
    bin=${TT_BIN_BEFORE:?"crr_cost: $arm needs TT_BIN_BEFORE=DIR"}
    base=${arm%-before}
  fi
  case "$base" in
    kernel-plain) flags=(--transport kernel --no-robust); proto=tcp ;;
    kernel-robust) flags=(--transport kernel --robust); proto=tcp ;;
    udp-plain) flags=(--transport udp --no-robust); proto=udp ;;
    udp-robust) flags=(--transport udp --robust); proto=udp ;;
    *) echo "crr_cost: unknown arm $arm" >&2; exit 2 ;;
  esac
  ip netns exec "$NS" "$bin/tt-tunnel" server --listen "$TUNNEL" --forward "127.0.0.1:$TARGET" \
    --max-connections 100000 "${flags[@]}" -q >/dev/null 2>"$WORK/server.err" &
  server=$!
  listening "$NS" "$proto" "$TUNNEL"
  ip netns exec "$NS" "$bin/tt-tunnel" client --listen "127.0.0.1:$LOCAL" --to "127.0.0.1:$TUNNEL" \
    --max-connections 100000 "${flags[@]}" -q >/dev/null 2>"$WORK/client.err" &
  client=$!
  listening "$NS" tcp "$LOCAL"
  stats=()
  if [ "$have_perf" = 1 ]; then
    # perf stat counts until its command (a sleep) ends: background jobs of a
    # script ignore SIGINT, and perf prints nothing on SIGTERM.
    for who in client server; do
      perf stat -x, -e raw_syscalls:sys_enter -p "${!who}" -o "$WORK/$who.perf" -- sleep 3600 2>/dev/null &
      stats+=($!)
    done
    sleep 0.3
  fi
  c0=$(cpu_ticks "$client") s0=$(cpu_ticks "$server")
  read -r p50 p90 < <(in_ns python3 "$DRIVER" crr-each --port "$LOCAL" --count "$count")
  c1=$(cpu_ticks "$client") s1=$(cpu_ticks "$server")
  for p in "${stats[@]}"; do
    pkill -P "$p" sleep || true
    wait "$p" 2>/dev/null || true
  done
  calls() {  # FILE
    [ -f "$1" ] || return 0
    awk -F, -v n="$count" '/raw_syscalls/ {printf "%.0f", $1 / n}' "$1"
  }
  per_conn() {  # TICKS
    awk -v t="$1" -v hz="$hz" -v n="$count" 'BEGIN {printf "%.0f", t * 1e6 / hz / n}'
  }
  echo "$arm,$count,$p50,$p90,$(per_conn $((c1 - c0))),$(per_conn $((s1 - s0))),$(calls "$WORK/client.perf"),$(calls "$WORK/server.perf")" >&3
  kill "$client" "$server"
  wait "$client" "$server" 2>/dev/null || true
  rm -f "$WORK"/*.perf
done
