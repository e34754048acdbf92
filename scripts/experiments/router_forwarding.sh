#!/usr/bin/env bash
# tinyrouter against kernel forwarding between the same two namespaces, in
# one run (issue 18): A and B are joined three times: through namespace K (two
# veths, Linux forwarding, offloads as the kernel sets them), through
# tinyrouter in namespace R (two TAP devices with offloads: IFF_VNET_HDR,
# checksum and TSO, GSO super-frames forwarded whole) and through a second
# tinyrouter in R started with --no-offload (one MTU frame per read and
# write). Over each path, interleaved per round, kernel TCP from A to B:
# tt-perf stream (throughput; packets/s counted by iptables at B, GRO off
# there, so a GSO super-packet counts once, on both kernel and tinyrouter
# paths) and tt-perf rr (1-byte transactions/s and latency). Medians of the
# rounds go to the CSV; the routers' counters (super-frames forwarded whole)
# are printed at the end.
#
# Usage: router_forwarding.sh [--quick] [--bin DIR] [--out CSV] [--rounds N] [--seconds S]
#   --quick   1 round of 1 s (CI); default 3 rounds of 3 s
# Needs root; exits 77 without it.
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=build/release/bin
OUT=docs/data/router_forwarding.csv
rounds=3
seconds=3
while [ $# -gt 0 ]; do
  case $1 in
    --quick) rounds=1; seconds=1 ;;
    --bin) BIN=$2; shift ;;
    --out) OUT=$2; shift ;;
    --rounds) rounds=$2; shift ;;
    --seconds) seconds=$2; shift ;;
    *) echo "router_forwarding.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
BIN=$(cd "$BIN" && pwd)
. tests/integration/lib.sh
tt_require ip iptables ethtool python3

suffix=$(printf '%04x' $((RANDOM ^ $$ & 0xffff)))
NA=ttfA$suffix
NB=ttfB$suffix
NK=ttfK$suffix
NR=ttfR$suffix
TA=tfa$suffix
TB=tfb$suffix
PA=tpa$suffix
PB=tpb$suffix
work=$(mktemp -d /tmp/tt-fwd.XXXXXX)
pids=()
routers=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  for ns in "$NA" "$NB" "$NK" "$NR"; do ip netns del "$ns" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
die() { echo "router_forwarding.sh: $*" >&2; for f in "$work"/*.err; do [ -f "$f" ] && tail -n 5 "$f" >&2; done; exit 1; }

for ns in "$NA" "$NB" "$NK" "$NR"; do ip netns add "$ns"; ip -n "$ns" link set lo up; done
# Kernel path: A 10.82.0.2 - [K 10.82.0.1 | 10.82.1.1] - B 10.82.1.2
ip -n "$NA" link add ka type veth peer name ak netns "$NK"
ip -n "$NB" link add kb type veth peer name bk netns "$NK"
ip -n "$NA" addr add 10.82.0.2/24 dev ka
ip -n "$NK" addr add 10.82.0.1/24 dev ak
ip -n "$NK" addr add 10.82.1.1/24 dev bk
ip -n "$NB" addr add 10.82.1.2/24 dev kb
for end in "$NA:ka" "$NK:ak" "$NK:bk" "$NB:kb"; do
  IFS=: read -r ns dev <<<"$end"
  ip -n "$ns" link set "$dev" up
done
ip netns exec "$NK" sysctl -qw net.ipv4.ip_forward=1
ip -n "$NA" route add 10.82.1.0/24 via 10.82.0.1
ip -n "$NB" route add 10.82.0.0/24 via 10.82.1.1
# tinyrouter paths: A 10.8N.0.2 - [R 10.8N.0.1 | 10.8N.1.1] - B 10.8N.1.2,
# N = 3 with offloads, 4 without.
start_router() {  # NAME NET TAP_A TAP_B [FLAGS]
  local name=$1 net=$2 ta=$3 tb=$4
  shift 4
  ip -n "$NR" tuntap add dev "$ta" mode tap
  ip -n "$NR" tuntap add dev "$tb" mode tap
  ip netns exec "$NR" "$BIN/tinyrouter" --if "$ta=10.$net.0.1/24" --if "$tb=10.$net.1.1/24" \
    --json "$@" >"$work/$name.json" 2>"$work/$name.err" &
  pids+=($!)
  routers+=($!)
  for _ in $(seq 100); do grep -q "tinyrouter forwarding" "$work/$name.err" 2>/dev/null && break; sleep 0.05; done
  ip -n "$NR" link set "$ta" netns "$NA"
  ip -n "$NR" link set "$tb" netns "$NB"
  ip -n "$NA" addr add "10.$net.0.2/24" dev "$ta"
  ip -n "$NB" addr add "10.$net.1.2/24" dev "$tb"
  ip -n "$NA" link set "$ta" up
  ip -n "$NB" link set "$tb" up
  ip -n "$NA" route add "10.$net.1.0/24" via "10.$net.0.1"
  ip -n "$NB" route add "10.$net.0.0/24" via "10.$net.1.1"
  ip netns exec "$NB" ethtool -K "$tb" gro off >/dev/null 2>&1 || true
}
start_router tinyrouter 83 "$TA" "$TB"
start_router tinyrouter-plain 84 "$PA" "$PB" --no-offload
ip netns exec "$NA" ping -c 1 -W 2 10.82.1.2 >/dev/null || die "no kernel path"
ip netns exec "$NA" ping -c 1 -W 2 10.83.1.2 >/dev/null || die "no tinyrouter path"
ip netns exec "$NA" ping -c 1 -W 2 10.84.1.2 >/dev/null || die "no tinyrouter-plain path"
# Count packets at B one by one (GRO off: what arrives is what was sent).
ip netns exec "$NB" ethtool -K kb gro off >/dev/null
for src in 10.82.0.2 10.83.0.2 10.84.0.2; do ip netns exec "$NB" iptables -t raw -A PREROUTING -s "$src"; done
counted() { ip netns exec "$NB" iptables -t raw -L PREROUTING -v -x -n | awk -v s="$1" '$(NF-1) == s {print $1; exit}'; }

ip netns exec "$NB" "$BIN/tt-perf" server --listen 7200 --transport kernel -q 2>"$work/server.err" &
pids+=($!)
sleep 0.3

mkdir -p "$(dirname "$OUT")"
echo "round,path,test,seconds,bits_per_second,packets_per_second,transactions_per_second,latency_p50_us,latency_p99_us" >"$OUT"
for round in $(seq "$rounds"); do
  for path in kernel tinyrouter tinyrouter-plain; do
    case $path in
      kernel) net=82 ;;
      tinyrouter) net=83 ;;
      *) net=84 ;;
    esac
    server=10.$net.1.2
    client=10.$net.0.2
    for test in stream rr; do
      ip netns exec "$NB" iptables -t raw -Z
      ip netns exec "$NA" "$BIN/tt-perf" "$test" --transport kernel --to "$server:7200" \
        --time "$seconds" --json -q >"$work/run.json" 2>"$work/run.err" || die "$path $test failed"
      packets=$(counted "$client")
      line=$(python3 - "$work/run.json" "$packets" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
s = r["seconds"]
lat = r.get("latency_us", {})
print(f'{s:.3f},{r["bits_per_second"]:.0f},{int(sys.argv[2]) / s:.0f},'
      f'{r["transactions_per_second"]:.1f},{lat.get("p50", 0):.1f},{lat.get("p99", 0):.1f}')
PY
)
      echo "$round,$path,$test,$line" >>"$OUT"
      echo "round $round $path $test: $line"
    done
  done
done
python3 - "$OUT" <<'PY'
import csv, statistics, sys
from collections import defaultdict
runs = defaultdict(list)
for row in csv.DictReader(open(sys.argv[1])):
    runs[(row["path"], row["test"])].append(row)
for (path, test), rows in sorted(runs.items()):
    med = lambda k: statistics.median(float(r[k]) for r in rows)
    if test == "stream":
        print(f"median {path:10} stream: {med('bits_per_second') / 1e6:8.1f} Mbit/s, {med('packets_per_second'):8.0f} packets/s A->B")
    else:
        print(f"median {path:10} rr:     {med('transactions_per_second'):8.1f} transactions/s, p50 {med('latency_p50_us'):.0f} us, p99 {med('latency_p99_us'):.0f} us")
PY
# The routers' counters: did the offload path carry the stream?
for p in "${routers[@]}"; do kill -TERM "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
for name in tinyrouter tinyrouter-plain; do
  python3 - "$work/$name.json" "$name" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"{sys.argv[2]}: forwarded {r['forwarded']}, GSO whole {r.get('gso_forwarded', 0)}, "
      f"segmented {r.get('gso_segmented', 0)}, checksums completed {r.get('checksums_completed', 0)}, "
      f"offload errors {r.get('offload_errors', {})}, drops {r['drops']}, "
      f"offload {[i.get('offload') for i in r['interfaces']]}")
PY
done
