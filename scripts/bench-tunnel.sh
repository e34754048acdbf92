#!/usr/bin/env bash
# Issue 17, "under loss": a kernel TCP stream (socat to socat, 10 MiB) between two
# namespaces with iptables random loss on INPUT each way, carried
#   tt-tunnel  through tt-tunnel over udp (client in A, server in B),
#   kcptun     through Debian's kcptun (fast3, 4096/4096 windows, no crypt, no compression),
#   direct     by kernel TCP across the veth,
# one trial of each per round (interleaved), rounds x loss levels. Goodput is
# payload / (sender start -> receiving socat exit after the forwarded EOF, file
# compared). Wire bytes are the tx_bytes of both veth ends over the trial (everything
# sent, including what the loss rule then drops), divided by the payload.
#
#   bench-tunnel.sh [--quick] [--loss "0 1 5 10 20 30"] [--trials 5] [--size 10M]
#                   [--systems "tt-tunnel kcptun direct"] [--timeout 120] [--out FILE]
#                   [--stats-dir DIR] [--no-lock]
#
# --quick: loss "0 10", 1 trial, 2 MiB. The build lock (/tmp/locks/build) is taken
# around each round (one trial of each system) unless --no-lock (when the caller holds
# it). TT_BIN=DIR picks the tt-tunnel binary directory (default build/release/bin).
# --stats-dir keeps tt-tunnel's --json counters and kcptun's log per loss level.
# Columns: system,loss_percent,trial,size_bytes,seconds,goodput_MBps,completed,wire_bytes,wire_per_useful
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/bench/lib.sh
source scripts/bench/lib.sh

losses="0 1 5 10 20 30"
trials=5
size=10M
systems="tt-tunnel kcptun direct"
timeout_s=120
out=""
stats_dir=""
lock=1
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) losses="0 10"; trials=1; size=2M; shift ;;
    --loss) losses=$2; shift 2 ;;
    --trials) trials=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --systems) systems=$2; shift 2 ;;
    --timeout) timeout_s=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --stats-dir) stats_dir=$2; shift 2 ;;
    --no-lock) lock=0; shift ;;
    *) echo "bench-tunnel: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" -eq 0 ] || { echo "bench-tunnel: needs root (network namespaces)" >&2; exit 1; }
BIN=${TT_BIN:-build/release/bin}
[ -x "$BIN/tt-tunnel" ] || { echo "bench-tunnel: no $BIN/tt-tunnel (build the release preset)" >&2; exit 1; }
for tool in socat kcptun-client kcptun-server ss; do
  command -v "$tool" >/dev/null || { echo "bench-tunnel: $tool missing (scripts/install-deps.sh)" >&2; exit 1; }
done

TAG="b17$$"
TAG=${TAG:0:8}
NS_A="tt-$TAG-a"
NS_B="tt-$TAG-b"
VETH_A="ttv$TAG-a"
VETH_B="ttv$TAG-b"
B_ADDR=169.254.77.2
SINK_PORT=7001 TT_PORT=7002 KCP_PORT=7003 TT_LOCAL=7101 KCP_LOCAL=7102
WORK=$(mktemp -d /tmp/tt-bench-tunnel.XXXXXX)
PIDS=()
stop_pids() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  PIDS=()
}
cleanup() {
  stop_pids
  ./scripts/netns-loss.sh down "$TAG"
  rm -rf "$WORK"
}
trap cleanup EXIT
./scripts/netns-loss.sh up "$TAG" 0
[ -n "$stats_dir" ] && mkdir -p "$stats_dir"

exec 3>&1
if [ -n "$out" ]; then
  mkdir -p "$(dirname "$out")"
  exec 3>"$out"
fi
echo "system,loss_percent,trial,size_bytes,seconds,goodput_MBps,completed,wire_bytes,wire_per_useful" >&3

bytes=$(numfmt --from=iec "$size")
payload="$WORK/payload.bin"
head -c "$bytes" /dev/urandom >"$payload"

tx_total() {
  echo $(($(ip netns exec "$NS_A" cat "/sys/class/net/$VETH_A/statistics/tx_bytes") +
    $(ip netns exec "$NS_B" cat "/sys/class/net/$VETH_B/statistics/tx_bytes")))
}

start_carriers() {  # LOSS: the tunnels, fresh for each loss level
  local loss=$1
  if [[ " $systems " == *" tt-tunnel "* ]]; then
    ip netns exec "$NS_B" "$BIN/tt-tunnel" server --listen "$TT_PORT" \
      --forward "127.0.0.1:$SINK_PORT" --json >"$WORK/tt-server-$loss.json" 2>"$WORK/tt-server-$loss.err" &
    PIDS+=($!)
    listening "$NS_B" udp "$TT_PORT"
    ip netns exec "$NS_A" "$BIN/tt-tunnel" client --listen "127.0.0.1:$TT_LOCAL" \
      --to "$B_ADDR:$TT_PORT" --json >"$WORK/tt-client-$loss.json" 2>"$WORK/tt-client-$loss.err" &
    PIDS+=($!)
    listening "$NS_A" tcp "$TT_LOCAL"
  fi
  if [[ " $systems " == *" kcptun "* ]]; then
    local kcp_flags=(--mode fast3 --sndwnd 4096 --rcvwnd 4096 --crypt none --nocomp --quiet)
    ip netns exec "$NS_B" kcptun-server --listen ":$KCP_PORT" --target "127.0.0.1:$SINK_PORT" \
      "${kcp_flags[@]}" >"$WORK/kcp-server-$loss.log" 2>&1 &
    PIDS+=($!)
    listening "$NS_B" udp "$KCP_PORT"
    ip netns exec "$NS_A" kcptun-client --localaddr "127.0.0.1:$KCP_LOCAL" \
      --remoteaddr "$B_ADDR:$KCP_PORT" "${kcp_flags[@]}" >"$WORK/kcp-client-$loss.log" 2>&1 &
    PIDS+=($!)
    listening "$NS_A" tcp "$KCP_LOCAL"
  fi
}
stop_carriers() {  # LOSS
  stop_pids
  if [ -n "$stats_dir" ]; then
    for f in "$WORK"/tt-*-"$1".* "$WORK"/kcp-*-"$1".log; do
      [ -e "$f" ] && cp "$f" "$stats_dir/"
    done
  fi
  return 0
}

trial() {  # SYSTEM LOSS N
  local system=$1 loss=$2 n=$3 dest_host dest_port
  case "$system" in
    tt-tunnel) dest_host=127.0.0.1; dest_port=$TT_LOCAL ;;
    kcptun) dest_host=127.0.0.1; dest_port=$KCP_LOCAL ;;
    direct) dest_host=$B_ADDR; dest_port=$SINK_PORT ;;
    *) echo "bench-tunnel: unknown system $system" >&2; exit 2 ;;
  esac
  rm -f "$WORK/out.bin"
  timeout "$timeout_s" ip netns exec "$NS_B" socat -u \
    "TCP-LISTEN:$SINK_PORT,reuseaddr" "CREATE:$WORK/out.bin" 2>"$WORK/sink.err" &
  local sink=$!
  listening "$NS_B" tcp "$SINK_PORT"
  local w0 t0 t1 w1 rc
  w0=$(tx_total)
  t0=$(date +%s.%N)
  timeout "$timeout_s" ip netns exec "$NS_A" socat -u "OPEN:$payload" \
    "TCP:$dest_host:$dest_port" 2>"$WORK/send.err" &
  local sender=$!
  set +e
  wait "$sink"
  rc=$?
  t1=$(date +%s.%N)
  kill "$sender" 2>/dev/null
  wait "$sender" 2>/dev/null
  set -e
  w1=$(tx_total)
  local completed=0
  [ "$rc" = 0 ] && cmp -s "$payload" "$WORK/out.bin" && completed=1
  python3 - "$system" "$loss" "$n" "$bytes" "$t0" "$t1" "$completed" "$((w1 - w0))" >&3 <<'PY'
import sys
system, loss, n, size, t0, t1, completed, wire = sys.argv[1:]
seconds = float(t1) - float(t0)
size, completed, wire = int(size), int(completed), int(wire)
goodput = size / seconds / 1e6 if completed else 0.0
print(f"{system},{loss},{n},{size},{seconds:.3f},{goodput:.3f},{completed},{wire},{wire / size:.4f}")
PY
}

for loss in $losses; do
  ./scripts/netns-loss.sh loss "$TAG" "$loss"
  start_carriers "$loss"
  for n in $(seq "$trials"); do
    [ "$lock" = 1 ] && { exec 9>/tmp/locks/build; flock 9; }
    for system in $systems; do
      trial "$system" "$loss" "$n"
    done
    [ "$lock" = 1 ] && { flock -u 9; exec 9>&-; }
    echo "bench-tunnel: loss $loss% round $n done" >&2
  done
  stop_carriers "$loss"
done
