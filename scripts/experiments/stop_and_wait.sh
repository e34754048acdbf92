#!/usr/bin/env bash
# Experiment 2 of issue 18 (docs/experiments.md): stop-and-wait against a
# sliding window. The client sends COUNT messages of SIZE bytes to the server
# (tt-perf messages: time until the server holds the last byte), over
#   veth        client namespace C --veth-- server namespace S
#   tinyrouter  C --tap-- tinyrouter (namespace R) --tap-- S
# at 0% and 1% random loss (iptables statistic drops in C's and S's INPUT, so
# every arm loses the same way), with these arms:
#   flood       raw UDP datagrams as fast as python sends them (the floor;
#               seconds = the sender's time, received counted at S)
#   fixed:N     tinytcp in the UDP tunnel with a window of N segments
#               (fixed:1 is stop-and-wait)
#   default     tinytcp in the UDP tunnel with its default congestion control
#   kernel      kernel TCP (cubic)
# Packets on the wire are counted by iptables where they arrive (the client's
# at S, the server's at C; raw PREROUTING, GRO off), and by each sender itself
# (tt-perf's JSON: tinytcp's Host counters, kernel TCP_INFO segments); both go
# into the CSV.
#
# Usage: stop_and_wait.sh [--quick] [--bin DIR] [--out CSV] [--trials N] [--no-delayed-ack]
#   --no-delayed-ack  tinytcp's client and server ACK every segment at once
#             (without it a window of 1 waits out the receiver's delayed-ACK
#             timer on every segment; kernel TCP keeps its own behaviour)
#   --quick   1000 messages of 1460 bytes, windows 1 and 4, one trial (CI)
#   default   20000 messages of 1460 and of 160 bytes, windows 1-6, 8, 10,
#             12, 16, 20, 25, 30, one trial each (--trials for more)
# Needs root (namespaces, TAP devices, iptables); exits 77 without it.
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=build/release/bin
OUT=docs/data/stop_and_wait.csv
quick=0
trials=1
tt_ack=()
while [ $# -gt 0 ]; do
  case $1 in
    --quick) quick=1 ;;
    --bin) BIN=$2; shift ;;
    --out) OUT=$2; shift ;;
    --trials) trials=$2; shift ;;
    --no-delayed-ack) tt_ack=(--no-delayed-ack) ;;
    *) echo "stop_and_wait.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
BIN=$(cd "$BIN" && pwd)
. tests/integration/lib.sh
tt_require ip iptables ethtool python3
[ -x "$BIN/tt-perf" ] && [ -x "$BIN/tinyrouter" ] || { echo "stop_and_wait.sh: no tt-perf/tinyrouter in $BIN" >&2; exit 1; }

if [ "$quick" = 1 ]; then
  count=1000; sizes="1460"; windows="1 4"; losses="0 1"
else
  count=20000; sizes="1460 160"; windows="1 2 3 4 5 6 8 10 12 16 20 25 30"; losses="0 1"
fi

suffix=$(printf '%04x' $((RANDOM ^ $$ & 0xffff)))
NC=ttsC$suffix
NS=ttsS$suffix
NR=ttsR$suffix
TC=tsc$suffix
TS=tss$suffix
work=$(mktemp -d /tmp/tt-saw.XXXXXX)
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  for ns in "$NC" "$NS" "$NR"; do ip netns del "$ns" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
die() { echo "stop_and_wait.sh: $*" >&2; for f in "$work"/*.err; do [ -f "$f" ] && tail -n 5 "$f" >&2; done; exit 1; }

for ns in "$NC" "$NS" "$NR"; do ip netns add "$ns"; ip -n "$ns" link set lo up; done
# veth path: 10.78.0.1 (C) - 10.78.0.2 (S)
ip -n "$NC" link add vc type veth peer name vs netns "$NS"
ip -n "$NC" addr add 10.78.0.1/24 dev vc
ip -n "$NS" addr add 10.78.0.2/24 dev vs
ip -n "$NC" link set vc up
ip -n "$NS" link set vs up
# tinyrouter path: 10.79.0.2 (C) - [10.79.0.1 R 10.79.1.1] - 10.79.1.2 (S)
ip -n "$NR" tuntap add dev "$TC" mode tap
ip -n "$NR" tuntap add dev "$TS" mode tap
ip netns exec "$NR" "$BIN/tinyrouter" --if "$TC=10.79.0.1/24" --if "$TS=10.79.1.1/24" --json \
  >"$work/router.json" 2>"$work/router.err" &
pids+=($!)
for _ in $(seq 100); do grep -q "tinyrouter forwarding" "$work/router.err" 2>/dev/null && break; sleep 0.05; done
ip -n "$NR" link set "$TC" netns "$NC"
ip -n "$NR" link set "$TS" netns "$NS"
ip -n "$NC" addr add 10.79.0.2/24 dev "$TC"
ip -n "$NS" addr add 10.79.1.2/24 dev "$TS"
ip -n "$NC" link set "$TC" up
ip -n "$NS" link set "$TS" up
ip -n "$NC" route add 10.79.1.0/24 via 10.79.0.1
ip -n "$NS" route add 10.79.0.0/24 via 10.79.1.1
# No offloads: a veth hands GSO batches across whole, and GRO merges on
# receipt; without them one count is one packet of at most the MTU (the
# kernel splits TCP and UDP GSO batches before the device).
for end in "$NC:vc" "$NS:vs"; do
  IFS=: read -r ns dev <<<"$end"
  ip netns exec "$ns" ethtool -K "$dev" tso off gso off gro off tx-udp-segmentation off >/dev/null
done
ip netns exec "$NC" ethtool -K "$TC" gro off >/dev/null 2>&1 || true
ip netns exec "$NS" ethtool -K "$TS" gro off >/dev/null 2>&1 || true
ip netns exec "$NC" ping -c 1 -W 2 10.79.1.2 >/dev/null || die "no path through tinyrouter"
ip netns exec "$NC" ping -c 1 -W 2 10.78.0.2 >/dev/null || die "no path over veth"

# Wire packets, counted where they arrive (raw PREROUTING: before the loss
# rule, after GRO, which is off): what the client sent at S, what it received
# at C. Rules without a target only count.
for pair in 10.78.0.1:10.78.0.2 10.79.0.2:10.79.1.2; do
  IFS=: read -r client server <<<"$pair"
  ip netns exec "$NS" iptables -t raw -A PREROUTING -s "$client"
  ip netns exec "$NC" iptables -t raw -A PREROUTING -s "$server"
done
counted() {  # NS SOURCE
  # Rows: pkts bytes [target] prot opt in out source destination.
  ip netns exec "$1" iptables -t raw -L PREROUTING -v -x -n | awk -v s="$2" '$(NF-1) == s {print $1; exit}'
}
counters() {  # CLIENT SERVER -> "out in"
  echo "$(counted "$NS" "$1") $(counted "$NC" "$2")"
}
loss_rule=""
set_loss() {  # PERCENT
  local ns
  for ns in "$NC" "$NS"; do
    if [ -n "$loss_rule" ]; then
      ip netns exec "$ns" iptables -D INPUT -m statistic --mode random --probability "$loss_rule" -j DROP
    fi
    if [ "$1" != 0 ]; then
      ip netns exec "$ns" iptables -I INPUT -m statistic --mode random --probability "$(python3 -c "print($1/100)")" -j DROP
    fi
  done
  loss_rule=$([ "$1" != 0 ] && python3 -c "print($1/100)" || true)
}

ip netns exec "$NS" "$BIN/tt-perf" server --listen 7100 --transport udp "${tt_ack[@]}" -q \
  2>"$work/server-udp.err" &
pids+=($!)
ip netns exec "$NS" "$BIN/tt-perf" server --listen 7101 --transport kernel -q 2>"$work/server-kernel.err" &
pids+=($!)
# The flood's receiver: counts datagrams on UDP 7102 until told to report.
cat >"$work/flood.py" <<'PY'
import socket, sys, time
mode, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
if mode == "recv":
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    s.bind((host, port))
    n = 0
    while True:
        data = s.recv(65536)
        if data == b"report":
            s.sendto(str(n).encode(), (sys.argv[4], int(sys.argv[5])))
            n = 0
        else:
            n += 1
else:
    count, size = int(sys.argv[4]), int(sys.argv[5])
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("0.0.0.0", 7103))
    payload = b"f" * size
    start = time.monotonic()
    for _ in range(count):
        s.sendto(payload, (host, port))
    seconds = time.monotonic() - start
    time.sleep(0.2)
    s.settimeout(2)
    received = "?"
    for _ in range(5):
        s.sendto(b"report", (host, port))
        try:
            received = s.recv(100).decode()
            break
        except socket.timeout:
            pass
    print(f"{seconds:.6f} {received}")
PY
for server in 10.78.0.2 10.79.1.2; do
  ip netns exec "$NS" python3 "$work/flood.py" recv "$server" 7102 \
    "$( [ "$server" = 10.78.0.2 ] && echo 10.78.0.1 || echo 10.79.0.2 )" 7103 2>"$work/flood-$server.err" &
  pids+=($!)
done
sleep 0.5

mkdir -p "$(dirname "$OUT")"
echo "path,loss_pct,size,arm,window,trial,seconds,client_packets_out,client_packets_in,stack_packets_sent,stack_packets_received,delivered_bytes,verified" >"$OUT"
run_arm() {  # PATH SERVER LOSS SIZE ARM WINDOW TRIAL
  local path=$1 server=$2 loss=$3 size=$4 arm=$5 window=$6 trial=$7
  local client
  client=$([ "$server" = 10.78.0.2 ] && echo 10.78.0.1 || echo 10.79.0.2)
  ip netns exec "$NC" iptables -t raw -Z
  ip netns exec "$NS" iptables -t raw -Z
  local line seconds sent received delivered verified
  if [ "$arm" = flood ]; then
    read -r seconds received < <(ip netns exec "$NC" python3 "$work/flood.py" send "$server" 7102 "$count" "$size")
    sent=$count
    delivered=$((received * size))
    verified=$([ "$received" = "$count" ] && echo true || echo false)
  else
    local flags=(--transport udp --to "$server:7100" "${tt_ack[@]}")
    case $arm in
      fixed) flags+=(--cc "fixed:$window") ;;
      kernel) flags=(--transport kernel --to "$server:7101") ;;
    esac
    ip netns exec "$NC" "$BIN/tt-perf" messages "${flags[@]}" --count "$count" --size "$size" \
      --json -q >"$work/run.json" 2>"$work/run.err" || die "$path $arm $window: $(cat "$work/run.err")"
    read -r seconds sent received delivered verified < <(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print(r["seconds"], r["packets"]["sent"], r["packets"]["received"], r["bytes_delivered"], str(r["verified"]).lower())' "$work/run.json")
  fi
  read -r out in < <(counters "$client" "$server")
  echo "$path,$loss,$size,$arm,$window,$trial,$seconds,$out,$in,$sent,$received,$delivered,$verified" >>"$OUT"
  printf '%-10s loss %s%% size %4s %-7s %-3s  %8.3f s  packets out %6s in %6s\n' \
    "$path" "$loss" "$size" "$arm" "$window" "$seconds" "$out" "$in"
}

for loss in $losses; do
  set_loss "$loss"
  for path in veth tinyrouter; do
    server=$([ "$path" = veth ] && echo 10.78.0.2 || echo 10.79.1.2)
    for size in $sizes; do
      for trial in $(seq "$trials"); do
        run_arm "$path" "$server" "$loss" "$size" flood 0 "$trial"
        for w in $windows; do
          run_arm "$path" "$server" "$loss" "$size" fixed "$w" "$trial"
        done
        run_arm "$path" "$server" "$loss" "$size" default 0 "$trial"
        run_arm "$path" "$server" "$loss" "$size" kernel 0 "$trial"
      done
    done
  done
done
set_loss 0
echo "wrote $OUT"
