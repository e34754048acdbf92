#!/usr/bin/env bash
# Experiment 1 of issue 18 (docs/experiments.md): a sliding window against the
# "sliding fence". Client namespace A, server namespace C, router B between
# them dropping P% of the packets it forwards (both directions):
#   kernel      B is a namespace with Linux forwarding and an iptables
#               FORWARD rule dropping at random
#   tinyrouter  B is tinyrouter dropping P% of what it sends out of either
#               device (--impair on both; ARP is never dropped)
# The client runs the echo workload: 1000 messages of 200-399 random bytes
# with random 2-19 ms gaps (tt-perf echo, a seed per run, in the CSV), the
# server echoes, the client checks the echo (SHA-256). Arms: tinytcp in the
# UDP tunnel with SACK (sack) and without (nosack), with SACK and Linux's 40 ms
# delayed ACK at both ends instead of the bulk profile's 5 ms (sack40), the same with Nagle's
# algorithm at both ends too (linux: Linux's defaults for both), the same with Nagle at the
# echo server only (nagle-server: the client sends each message at once), kernel TCP with cubic and
# bbr, and kcptun (Debian's kcptun-client/-server, fast3, no crypt, carrying
# kernel TCP from tt-perf). Packets the client sent: the TX counter of A's
# device towards B (offloads off, so one count is one packet), and the
# sender's own count (tt-perf's JSON) for tinytcp and kernel TCP; and the
# median and 99th percentile of the messages' echo latency.
#
# Usage: sliding_window.sh [--quick] [--bin DIR] [--out CSV] [--trials N]
#                          [--rates "10 20 ..."] [--arms "sack nosack sack40 linux nagle-server cubic bbr kcptun"]
#                          [--routers "kernel tinyrouter"]
#   --quick   100 messages, rates 10 and 50, arms sack and nosack (CI; kernel
#             TCP at high loss takes minutes: its RTO backs off)
# Needs root; exits 77 without it. A run that does not finish within 300 s
# is recorded as not completed.
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=build/release/bin
OUT=docs/data/sliding_window.csv
messages=1000
trials=1
rates="10 20 30 40 50 60"
arms="sack nosack cubic bbr kcptun"
routers="kernel tinyrouter"
while [ $# -gt 0 ]; do
  case $1 in
    --quick) messages=100; rates="10 50"; arms="sack nosack" ;;
    --bin) BIN=$2; shift ;;
    --out) OUT=$2; shift ;;
    --trials) trials=$2; shift ;;
    --rates) rates=$2; shift ;;
    --arms) arms=$2; shift ;;
    --routers) routers=$2; shift ;;
    *) echo "sliding_window.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
BIN=$(cd "$BIN" && pwd)
. tests/integration/lib.sh
tt_require ip iptables ethtool python3
if [[ " $arms " == *" kcptun "* ]]; then tt_require kcptun-client kcptun-server; fi

suffix=$(printf '%04x' $((RANDOM ^ $$ & 0xffff)))
NA=ttwA$suffix
NB=ttwB$suffix
NC=ttwC$suffix
NR=ttwR$suffix
TA=twa$suffix
TC=twc$suffix
work=$(mktemp -d /tmp/tt-sliding.XXXXXX)
pids=()
router_pid=""
cleanup() {
  local p
  for p in "${pids[@]}" $router_pid; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}" $router_pid; do wait "$p" 2>/dev/null || true; done
  for ns in "$NA" "$NB" "$NC" "$NR"; do ip netns del "$ns" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
die() { echo "sliding_window.sh: $*" >&2; for f in "$work"/*.err; do [ -f "$f" ] && tail -n 5 "$f" >&2; done; exit 1; }

for ns in "$NA" "$NB" "$NC" "$NR"; do ip netns add "$ns"; ip -n "$ns" link set lo up; done
# kernel router: A 10.84.0.2 - [B 10.84.0.1 | 10.84.1.1] - C 10.84.1.2
ip -n "$NA" link add ba type veth peer name ab netns "$NB"
ip -n "$NC" link add bc type veth peer name cb netns "$NB"
ip -n "$NA" addr add 10.84.0.2/24 dev ba
ip -n "$NB" addr add 10.84.0.1/24 dev ab
ip -n "$NB" addr add 10.84.1.1/24 dev cb
ip -n "$NC" addr add 10.84.1.2/24 dev bc
for end in "$NA:ba" "$NB:ab" "$NB:cb" "$NC:bc"; do
  IFS=: read -r ns dev <<<"$end"
  ip -n "$ns" link set "$dev" up
  ip netns exec "$ns" ethtool -K "$dev" tso off gso off gro off tx-udp-segmentation off >/dev/null
done
ip netns exec "$NB" sysctl -qw net.ipv4.ip_forward=1
ip -n "$NA" route add 10.84.1.0/24 via 10.84.0.1
ip -n "$NC" route add 10.84.0.0/24 via 10.84.1.1
# tinyrouter: A 10.85.0.2 - [R 10.85.0.1 | 10.85.1.1] - C 10.85.1.2
ip -n "$NR" tuntap add dev "$TA" mode tap
ip -n "$NR" tuntap add dev "$TC" mode tap
attach() {
  ip -n "$NR" link set "$TA" netns "$NA"
  ip -n "$NR" link set "$TC" netns "$NC"
  ip -n "$NA" addr add 10.85.0.2/24 dev "$TA"
  ip -n "$NC" addr add 10.85.1.2/24 dev "$TC"
  ip -n "$NA" link set "$TA" up
  ip -n "$NC" link set "$TC" up
  ip -n "$NA" route add 10.85.1.0/24 via 10.85.0.1
  ip -n "$NC" route add 10.85.0.0/24 via 10.85.1.1
}
detach() {
  ip -n "$NA" link set "$TA" netns "$NR"
  ip -n "$NC" link set "$TC" netns "$NR"
}
start_router() {  # LOSS (percent; 0: none)
  local impair=()
  [ "$1" != 0 ] && impair=(--impair "$TA:loss=$1%" --impair "$TC:loss=$1%" --seed "$RANDOM")
  # The previous router's log first: the redirection below truncates it only
  # once the child runs, after the wait may have read the old line.
  rm -f "$work/router.err"
  ip netns exec "$NR" "$BIN/tinyrouter" --if "$TA=10.85.0.1/24" --if "$TC=10.85.1.1/24" \
    "${impair[@]}" >"$work/router.out" 2>"$work/router.err" &
  router_pid=$!
  # Its devices are open once it says so; moving them before would leave it
  # making new ones.
  for _ in $(seq 100); do
    grep -q "tinyrouter forwarding" "$work/router.err" 2>/dev/null && return 0
    sleep 0.05
  done
  die "tinyrouter did not start"
}
stop_router() {
  [ -n "$router_pid" ] || return 0
  kill "$router_pid"
  wait "$router_pid" 2>/dev/null || true
  router_pid=""
}
start_router 0
attach
ip netns exec "$NA" ping -c 1 -W 2 10.84.1.2 >/dev/null || die "no path through the kernel router"
ip netns exec "$NA" ping -c 1 -W 2 10.85.1.2 >/dev/null || die "no path through tinyrouter"

ip netns exec "$NC" "$BIN/tt-perf" server --listen 7300 --transport udp -q 2>"$work/server-udp.err" &
pids+=($!)
ip netns exec "$NC" "$BIN/tt-perf" server --listen 7301 --transport kernel -q 2>"$work/server-kernel.err" &
pids+=($!)
if [[ " $arms " == *" sack40 "* ]]; then
  ip netns exec "$NC" "$BIN/tt-perf" server --listen 7305 --transport udp --delayed-ack-ms 40 -q \
    2>"$work/server-udp40.err" &
  pids+=($!)
fi
if [[ " $arms " == *" linux "* || " $arms " == *" nagle-server "* ]]; then
  ip netns exec "$NC" "$BIN/tt-perf" server --listen 7306 --transport udp --delayed-ack-ms 40 \
    --nagle -q 2>"$work/server-udp-linux.err" &
  pids+=($!)
fi
kcp_flags=(--mode fast3 --sndwnd 4096 --rcvwnd 4096 --crypt none --nocomp --quiet)
if [[ " $arms " == *" kcptun "* ]]; then
  ip netns exec "$NC" kcptun-server --listen ":7302" --target "127.0.0.1:7301" "${kcp_flags[@]}" \
    >"$work/kcp-server.err" 2>&1 &
  pids+=($!)
  ip netns exec "$NA" kcptun-client --localaddr "127.0.0.1:7303" --remoteaddr "10.84.1.2:7302" \
    "${kcp_flags[@]}" >"$work/kcp-client-kernel.err" 2>&1 &
  pids+=($!)
  ip netns exec "$NA" kcptun-client --localaddr "127.0.0.1:7304" --remoteaddr "10.85.1.2:7302" \
    "${kcp_flags[@]}" >"$work/kcp-client-tinyrouter.err" 2>&1 &
  pids+=($!)
fi
sleep 0.5

tx_packets() {  # DEV: packets A's device sent
  ip netns exec "$NA" cat "/sys/class/net/$1/statistics/tx_packets"
}
mkdir -p "$(dirname "$OUT")"
echo "router,loss_pct,arm,trial,seed,messages,completed,verified,seconds,client_packets,sender_packets,latency_p50_ms,latency_p99_ms" >"$OUT"
run_number=0
run_arm() {  # ROUTER LOSS ARM TRIAL
  local router=$1 loss=$2 arm=$3 trial=$4
  local server dev flags
  server=$([ "$router" = kernel ] && echo 10.84.1.2 || echo 10.85.1.2)
  dev=$([ "$router" = kernel ] && echo ba || echo "$TA")
  case $arm in
    sack) flags=(--transport udp --to "$server:7300") ;;
    nosack) flags=(--transport udp --to "$server:7300" --no-sack) ;;
    sack40) flags=(--transport udp --to "$server:7305" --delayed-ack-ms 40) ;;
    linux) flags=(--transport udp --to "$server:7306" --delayed-ack-ms 40 --nagle) ;;
    nagle-server) flags=(--transport udp --to "$server:7306" --delayed-ack-ms 40) ;;
    cubic | bbr) flags=(--transport kernel --to "$server:7301" --cc "$arm") ;;
    kcptun) flags=(--transport kernel --to "127.0.0.1:$([ "$router" = kernel ] && echo 7303 || echo 7304)") ;;
  esac
  # A seed per run: it draws the messages, and it also picks tinytcp's ports
  # inside the tunnel; the same inner ports from another address right after
  # a run ended its connection were answered as that old connection (seen
  # once: "connection closed: closed normally" at once).
  run_number=$((run_number + 1))
  local seed=$((trial * 100000 + run_number))
  local before after completed=true
  # SW_PCAP_DIR=DIR: tinytcp's packets of each run captured there (debugging).
  if [ -n "${SW_PCAP_DIR:-}" ] && [[ $arm == sack* || $arm == nosack || $arm == linux || $arm == nagle-server ]]; then
    flags+=(--pcap "$SW_PCAP_DIR/$router-$loss-$arm-$trial.pcap")
  fi
  before=$(tx_packets "$dev")
  if ! timeout 300 ip netns exec "$NA" "$BIN/tt-perf" echo "${flags[@]}" --messages "$messages" \
    --size 200-399 --gap 2-19ms --seed "$seed" --idle-timeout 290 --json -q \
    >"$work/run.json" 2>"$work/run.err"; then
    completed=false
    echo "  $router $loss% $arm: $(tail -n 1 "$work/run.err")" >&2
  fi
  after=$(tx_packets "$dev")
  local fields="false,,,,"
  if [ -s "$work/run.json" ]; then
    fields=$(python3 - "$work/run.json" "$arm" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
sent = r["packets"]["sent"] if sys.argv[2] != "kcptun" else ""
verified = str(r.get("verified", False)).lower()
lat = r.get("latency_us")
p50, p99 = (f'{lat["p50"] / 1000:.1f}', f'{lat["p99"] / 1000:.1f}') if lat else ("", "")
print(f'{verified},{r["seconds"]:.3f},{sent},{p50},{p99}')
PY
)
  fi
  IFS=, read -r verified seconds sent p50 p99 <<<"$fields"
  echo "$router,$loss,$arm,$trial,$seed,$messages,$completed,$verified,$seconds,$((after - before)),$sent,$p50,$p99" >>"$OUT"
  printf '%-10s %2s%% %-6s trial %s: %8s s, client packets %6s, latency p50/p99 %s/%s ms, verified %s\n' \
    "$router" "$loss" "$arm" "$trial" "$seconds" "$((after - before))" "$p50" "$p99" "$verified"
}

for loss in $rates; do
  for router in $routers; do
    if [ "$router" = kernel ]; then
      ip netns exec "$NB" iptables -F FORWARD
      ip netns exec "$NB" iptables -A FORWARD -m statistic --mode random \
        --probability "$(python3 -c "print($loss / 100)")" -j DROP
    else
      detach
      stop_router
      start_router "$loss"
      attach
      # The path must work again (pings may be lost at this rate: up to 20 tries).
      ip netns exec "$NA" ping -c 1 -i 0.05 -w 5 -q 10.85.1.2 >"$work/ping.out" 2>&1 ||
        { cat "$work/ping.out" "$work/router.err" >&2; die "no path through the restarted tinyrouter"; }
    fi
    for trial in $(seq "$trials"); do
      for arm in $arms; do
        run_arm "$router" "$loss" "$arm" "$trial"
      done
    done
  done
done
echo "wrote $OUT"
