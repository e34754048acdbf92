#!/usr/bin/env bash
# measure.sh BIN_DIR LABEL ROUTE PERF [tt-serve flags...]   (root; issue 15 item 2)
# A full-rate syn-flood (BIN_DIR/syn-flood, raw socket, 10 s) at tt-serve --echo 7 on
# tun145 in a throwaway namespace; from 3 s in, 5 s of `perf stat` (PERF=stat:
# task-clock, user and kernel instructions) or `perf record -g` (PERF=record,
# /tmp/syn-floor-perf-LABEL.data) on the server. Prints SYNs written and answered
# per second, the share dropped in the TUN queue, and CPU ns and instructions per
# SYN answered. SERVER="CMD" runs CMD instead of tt-serve (e.g. the floor
# prototype: gcc -O2 -o /tmp/synecho synecho.c; SERVER="/tmp/synecho tun145 uring 64";
# UR_FIXED=1 registers the fd). ROUTE: none (the namespace as the test makes it),
# host (a default route via a veth, forwarding off), away (the same, forwarding on),
# nodemux / host-nodemux (net.ipv4.tcp_early_demux=0). Run it under
# flock /tmp/locks/quiet flock /tmp/locks/build.
set -euo pipefail
BIN=$1; label=$2; route=${3:-none}; perfmode=${4:-stat}; shift 4 || true
n=145; ip=169.254.$n.9
ns="tt-flm-$$"; work=$(mktemp -d /tmp/tt-flm.XXXXXX)
serve=""; flood=""
cleanup() { for p in $flood $serve; do kill $p 2>/dev/null || true; done; sleep 0.2; ip netns del $ns 2>/dev/null || true; }
trap cleanup EXIT
ip netns add $ns
"$(dirname "$0")/../../scripts/tun.sh" start $n --netns $ns >/dev/null
case $route in
  away|host|host-nodemux|nodemux)
    if [ $route != nodemux ]; then
      ip -n $ns link add veth-away type veth peer name veth-void
      ip -n $ns addr add 10.99.0.1/30 dev veth-away
      ip -n $ns link set veth-away up
      ip -n $ns neigh add 10.99.0.2 lladdr 02:00:00:00:00:02 dev veth-away nud permanent
      ip -n $ns route add default via 10.99.0.2 dev veth-away onlink
    fi
    [ $route = away ] && ip netns exec $ns sysctl -qw net.ipv4.ip_forward=1
    case $route in *nodemux) ip netns exec $ns sysctl -qw net.ipv4.tcp_early_demux=0;; esac
    ;;
esac
if [ -n "${SERVER:-}" ]; then ip netns exec $ns $SERVER >$work/serve.out 2>$work/serve.err & else
ip netns exec $ns "$BIN/tt-serve" --dev tun$n --echo 7 "$@" >$work/serve.out 2>$work/serve.err & fi
serve=$!
for _ in $(seq 100); do grep -q "serving on\|ready" $work/serve.err && break; sleep 0.05; done
ip netns exec $ns "$BIN/syn-flood" --to $ip:7 --from 10.77.0.0/16 --seconds 10 -q >$work/flood.out 2>&1 &
flood=$!
sleep 3
st() { ip netns exec $ns cat /sys/class/net/tun$n/statistics/$1; }
r0=$(st rx_packets); t0=$(st tx_packets); d0=$(st tx_dropped)
if [ "$perfmode" = record ]; then
  perf record -g -o /tmp/syn-floor-perf-$label.data -p $serve -- sleep 5 2>/dev/null >/dev/null
else
  perf stat -x, -e task-clock,instructions:u,instructions:k,cycles -p $serve -- sleep 5 2>$work/perf.csv
fi
r1=$(st rx_packets); t1=$(st tx_packets); d1=$(st tx_dropped)
wait $flood || true; flood=""
kill -INT $serve; wait $serve || true; serve=""
ans=$((r1-r0)); wr=$((t1-t0+d1-d0)); dr=$((d1-d0))
if [ "$perfmode" = stat ]; then
  tc=$(awk -F, '/task-clock/ {print $1}' $work/perf.csv)   # ms
  iu=$(awk -F, '/instructions:u/ {print $1}' $work/perf.csv)
  ik=$(awk -F, '/instructions:k/ {print $1}' $work/perf.csv)
  awk -v l=$label -v ans=$ans -v wr=$wr -v dr=$dr -v tc=$tc -v iu=$iu -v ik=$ik 'BEGIN {
    printf "%s: written %.0f/s answered %.0f/s dropped %.1f%%  cpu %.0f%% %.0f ns/SYN  instr/SYN user %.0f kernel %.0f\n",
      l, wr/5, ans/5, 100*dr/wr, tc/50, tc*1e6/ans, iu/ans, ik/ans }'
else
  echo "$label: answered $((ans/5))/s written $((wr/5))/s"
fi
grep "^syn-flood:" $work/flood.out | tail -1
grep -h "cookies sent\|wake-ups\|synecho" $work/serve.out
rm -rf $work
