#!/usr/bin/env bash
# tt-tunnel keeps an interactive session alive across real link failures
# between two namespaces (A: the program and tt-tunnel client; B: tt-tunnel
# server and a socat echo server), where direct kernel TCP is shown to break
# (which proves each fault real):
#   blackhole  every packet dropped both ways for 3 s (iptables)
#   linkdown   A's veth down for 2 s, then up
#   rst        --transport kernel: every carrier segment answered with a RST
#              for 1 s (iptables REJECT --reject-with tcp-reset); direct
#              kernel TCP to the echo server under the same rule breaks
#   address    A's address replaced by another while traffic flows (the path
#              is back at once); direct kernel TCP from the old address breaks
# In each, the echo of every byte comes back complete and in order
# (echo_session.py), and the first echo after the path returns arrives within
# 1 s (within 3 s for the address change: the dead carrier is noticed by its
# 2 s heartbeat timeout first).
# Usage: tt_tunnel_robust_test.sh BIN_DIR. Skips (77) without root, fails under CI=true.
set -euo pipefail
BIN=$(cd "${1:?usage: $0 BIN_DIR}" && pwd)
cd "$(dirname "$0")/../.."

. tests/integration/lib.sh
tt_require iptables socat

PY=/usr/bin/python3
tag="ttr$$"
nsa="$tag-a"
nsb="$tag-b"
work=$(mktemp -d /tmp/tt-robust.XXXXXX)
pids=()
echo_pid=""
cleanup() {
  # socat's forked children (one per echo connection) first.
  [ -n "$echo_pid" ] && pkill -P "$echo_pid" 2>/dev/null || true
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  ip netns del "$nsa" 2>/dev/null || true
  ip netns del "$nsb" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  for f in "$work"/*.err; do [ -f "$f" ] && { echo "--- $f" >&2; tail -n 15 "$f" >&2; }; done
  exit 1
}
mono() { $PY -c 'import time; print(f"{time.monotonic():.4f}")'; }

ip netns add "$nsa"
ip netns add "$nsb"
ip link add "$tag-va" type veth peer name "$tag-vb"
ip link set "$tag-va" netns "$nsa"
ip link set "$tag-vb" netns "$nsb"
A=10.213.0.1
A2=10.213.0.3
B=10.213.0.2
ip -n "$nsa" addr add "$A/24" dev "$tag-va"
ip -n "$nsb" addr add "$B/24" dev "$tag-vb"
ip netns exec "$nsa" sysctl -qw "net.ipv4.conf.$tag-va.promote_secondaries=1"
for ns in "$nsa" "$nsb"; do
  ip -n "$ns" link set lo up
done
ip -n "$nsa" link set "$tag-va" up
ip -n "$nsb" link set "$tag-vb" up
ip netns exec "$nsa" ethtool -K "$tag-va" tso off gso off gro off >/dev/null
ip netns exec "$nsb" ethtool -K "$tag-vb" tso off gso off gro off >/dev/null

echo_port=7007
tunnel_port=9400
ip netns exec "$nsb" socat TCP-LISTEN:$echo_port,reuseaddr,fork EXEC:cat 2>"$work/echo.err" &
echo_pid=$!
pids+=("$echo_pid")

server_pid=""
client_pid=""
client_port=7100
start_tunnel() {  # NAME FLAGS...
  local name=$1
  shift
  ip netns exec "$nsb" "$BIN/tt-tunnel" server --listen $tunnel_port \
    --forward 127.0.0.1:$echo_port "$@" >/dev/null 2>"$work/$name-server.err" &
  server_pid=$!
  pids+=("$server_pid")
  for _ in $(seq 100); do grep -qs "tunnel server on" "$work/$name-server.err" && break; sleep 0.05; done
  ip netns exec "$nsa" "$BIN/tt-tunnel" client --listen 127.0.0.1:$client_port \
    --to $B:$tunnel_port "$@" >/dev/null 2>"$work/$name-client.err" &
  client_pid=$!
  pids+=("$client_pid")
  for _ in $(seq 100); do grep -qs "tunnel client on" "$work/$name-client.err" && break; sleep 0.05; done
  grep -q "tunnel client on" "$work/$name-client.err" || fail "$name: the tunnel did not start"
}
stop_tunnel() {
  kill "$client_pid" "$server_pid" 2>/dev/null || true
  wait "$client_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
}

# fault NAME on|off: what each case does to the path.
fault() {
  case "$1:$2" in
    blackhole:on)
      ip netns exec "$nsa" iptables -I INPUT -i "$tag-va" -j DROP
      ip netns exec "$nsb" iptables -I INPUT -i "$tag-vb" -j DROP ;;
    blackhole:off)
      ip netns exec "$nsa" iptables -D INPUT -i "$tag-va" -j DROP
      ip netns exec "$nsb" iptables -D INPUT -i "$tag-vb" -j DROP ;;
    linkdown:on) ip -n "$nsa" link set "$tag-va" down ;;
    linkdown:off)
      ip -n "$nsa" link set "$tag-va" up
      # Until the veth carries packets again (carrier up on both ends).
      for _ in $(seq 50); do
        ip netns exec "$nsa" ping -c1 -W0.1 $B >/dev/null 2>&1 && break
      done ;;
    rst:on)
      ip netns exec "$nsb" iptables -I INPUT -i "$tag-vb" -p tcp -m multiport \
        --dports $tunnel_port,$echo_port -j REJECT --reject-with tcp-reset ;;
    rst:off)
      ip netns exec "$nsb" iptables -D INPUT -i "$tag-vb" -p tcp -m multiport \
        --dports $tunnel_port,$echo_port -j REJECT --reject-with tcp-reset ;;
    address:on)
      ip -n "$nsa" addr add "$A2/24" dev "$tag-va"
      ip -n "$nsa" addr del "$A/24" dev "$tag-va" ;;
    address:off) ;;  # the new address works at once: the path is back
  esac
}

# run_case NAME OUTAGE_S LIMIT_S DIRECT TUNNEL_FLAGS...: traffic through the
# tunnel (and, with DIRECT=yes, a direct kernel connection to the echo
# server beside it); the fault after 2 s, undone after OUTAGE_S.
run_case() {
  local name=$1 outage=$2 limit=$3 direct=$4
  shift 4
  echo "--- $name: $outage s"
  start_tunnel "$name" "$@"
  ip netns exec "$nsa" $PY tests/integration/echo_session.py 127.0.0.1 $client_port \
    $((outage + 6)) "$work/$name-tunnel.json" 2>"$work/$name-tunnel-py.err" &
  local tpid=$!
  pids+=("$tpid")
  local dpid=""
  if [ "$direct" = yes ]; then
    ip netns exec "$nsa" $PY tests/integration/echo_session.py $B $echo_port \
      $((outage + 6)) "$work/$name-direct.json" 2>"$work/$name-direct-py.err" &
    dpid=$!
    pids+=("$dpid")
  fi
  sleep 2
  fault "$name" on
  sleep "$outage"
  # The path has returned once the fault is undone: for linkdown, once the
  # veth carries packets again (a ping), not when `ip link set up` returns.
  fault "$name" off
  local back
  back=$(mono)
  wait "$tpid" || fail "$name: the session through the tunnel broke: $(cat "$work/$name-tunnel.json")"
  local resumed
  resumed=$($PY -c '
import json, sys
arrivals = json.load(open(sys.argv[1]))["arrivals"]
after = [t for t in arrivals if t >= float(sys.argv[2])]
print(f"{after[0] - float(sys.argv[2]):.3f}" if after else "never")' "$work/$name-tunnel.json" "$back")
  echo "    tunnel: every byte echoed in order; first echo $resumed s after the path returned"
  [ "$resumed" != never ] || fail "$name: no echo after the path returned"
  $PY -c 'import sys; sys.exit(0 if float(sys.argv[1]) <= float(sys.argv[2]) else 1)' \
    "$resumed" "$limit" || fail "$name: resumed after $resumed s (limit $limit s)"
  if [ -n "$dpid" ]; then
    if wait "$dpid"; then
      fail "$name: direct kernel TCP survived the fault (so it was no fault)"
    fi
    echo "    direct kernel TCP: broke ($($PY -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(d["error"] or "%d of %d bytes echoed" % (d["received"], d["sent"]))' "$work/$name-direct.json"))"
  fi
  stop_tunnel
  grep -h "resumes" "$work/$name-client.err" | tail -n 1 | sed 's/^/    client: /'
}

# file-send --robust to file-recv --robust (udp) across a 3 s black hole in
# the middle of the transfer: it finishes, verified, without starting over.
file_case() {
  echo "--- file-send --robust across a 3 s black hole"
  head -c 200000000 /dev/urandom >"$work/big.bin"
  mkdir -p "$work/out"
  ip netns exec "$nsb" "$BIN/file-recv" --listen 9500 --output "$work/out" --robust --once \
    >/dev/null 2>"$work/file-recv.err" &
  local rpid=$!
  pids+=("$rpid")
  for _ in $(seq 100); do grep -q "listening on port" "$work/file-recv.err" && break; sleep 0.05; done
  ip netns exec "$nsa" "$BIN/file-send" --robust "$work/big.bin" --to $B:9500 --json \
    >"$work/file-send.out" 2>"$work/file-send.err" &
  local spid=$!
  pids+=("$spid")
  sleep 0.5
  fault blackhole on
  kill -0 "$spid" 2>/dev/null || fail "file-send finished before the outage (make the file bigger)"
  sleep 3
  fault blackhole off
  wait "$spid" || fail "file-send --robust: $(cat "$work/file-send.err")"
  wait "$rpid" || fail "file-recv --robust: exit status"
  cmp -s "$work/big.bin" "$work/out/big.bin" || fail "file-send --robust: the file differs"
  echo "    200 MB verified after the outage in one session"
}

file_case
run_case blackhole 3 1 no
run_case linkdown 2 1 no
run_case rst 1 1 yes --transport kernel --robust
run_case address 0 3 yes
echo "1 passed, 0 failed"
