#!/usr/bin/env bash
# tinyrouter forwarding real packets (issue 18): two kernel hosts in
# namespaces A and B reach each other only through tinyrouter, which runs in a
# third namespace R on two TAP devices whose kernel sides were moved into A
# and B:
#
#   A 10.77.0.2 --tap-- [R: tinyrouter 10.77.0.1 | 10.77.1.1] --tap (MTU 1280)-- B 10.77.1.2
#
# Checked: A pings B and the router's own address (ARP both ways, echo
# replies from the router); a 2 MiB socat transfer A -> B arrives intact
# (sha256); TTL 1 gets ICMP time exceeded from 10.77.0.1; a destination with
# no route gets ICMP net unreachable; a 1400-byte DF datagram towards the
# 1280-byte link gets fragmentation needed (mtu 1280); --impair loss=100% on
# what the router sends towards B cuts the path; --pcap captures per interface; the counters
# (--json at SIGTERM) agree; with offloads (no --pcap) 8 MiB cross intact both
# ways as TCP super-frames forwarded whole (gso_forwarded), no offload errors. Usage: tinyrouter_test.sh BIN_DIR. Skips (77)
# without root, fails under CI=true.
set -euo pipefail
BIN=$(cd "${1:?usage: $0 BIN_DIR}" && pwd)
cd "$(dirname "$0")/../.."

. tests/integration/lib.sh
tt_require ip ping socat sha256sum tcpdump

suffix=$(printf '%04x' $((RANDOM ^ $$ & 0xffff)))
NA=ttrA$suffix
NB=ttrB$suffix
NR=ttrR$suffix
TA=tra$suffix
TB=trb$suffix
work=$(mktemp -d /tmp/tt-tinyrouter.XXXXXX)
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  for ns in "$NA" "$NB" "$NR"; do ip netns del "$ns" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  for f in "$work"/*.err "$work"/*.log; do [ -f "$f" ] && { echo "--- $f" >&2; tail -n 20 "$f" >&2; }; done
  exit 1
}
wait_for() {  # FILE TEXT
  for _ in $(seq 100); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done
  fail "'$2' never appeared in $1"
}

for ns in "$NA" "$NB" "$NR"; do ip netns add "$ns"; done
# Persistent devices made in R first, so B's link can have the small MTU the
# router reads when it opens it.
ip -n "$NR" tuntap add dev "$TA" mode tap
ip -n "$NR" tuntap add dev "$TB" mode tap
ip -n "$NR" link set "$TB" mtu 1280

router_pid=""
start_router() {  # NAME EXTRA_FLAGS...
  local name=$1
  shift
  ip netns exec "$NR" "$BIN/tinyrouter" --if "$TA=10.77.0.1/24" --if "$TB=10.77.1.1/24" \
    --json "$@" >"$work/$name.json" 2>"$work/$name.err" &
  router_pid=$!
  pids+=("$router_pid")
  wait_for "$work/$name.err" "tinyrouter forwarding"
}
stop_router() {
  kill -TERM "$router_pid"
  wait "$router_pid" || fail "tinyrouter exited with $?"
}

start_router router --pcap "$work/r.pcap"
# The kernel sides into the hosts' namespaces (the router keeps its fds), and
# back into R between runs (so the next router opens the same devices).
attach() {
  ip -n "$NR" link set "$TA" netns "$NA"
  ip -n "$NR" link set "$TB" netns "$NB"
  ip -n "$NA" addr add 10.77.0.2/24 dev "$TA"
  ip -n "$NB" addr add 10.77.1.2/24 dev "$TB"
  local pair ns dev gw
  for pair in "$NA:$TA:10.77.0.1" "$NB:$TB:10.77.1.1"; do
    IFS=: read -r ns dev gw <<<"$pair"
    ip -n "$ns" link set lo up
    ip -n "$ns" link set "$dev" up
    ip -n "$ns" route add default via "$gw"
  done
}
detach() {
  ip -n "$NA" link set "$TA" netns "$NR"
  ip -n "$NB" link set "$TB" netns "$NR"
}
attach

ip netns exec "$NA" ping -c 3 -i 0.2 -W 2 10.77.1.2 >"$work/ping.log" || fail "A cannot ping B"
ip netns exec "$NB" ping -c 2 -i 0.2 -W 2 10.77.0.2 >>"$work/ping.log" || fail "B cannot ping A"
ip netns exec "$NA" ping -c 1 -W 2 10.77.0.1 >>"$work/ping.log" || fail "no echo from the router"
# B's TTL as it arrives: one less than A's 64.
grep -q "from 10.77.1.2: icmp_seq=1 ttl=63" "$work/ping.log" || fail "TTL not decremented"

head -c $((2 * 1024 * 1024)) /dev/urandom >"$work/in.bin"
ip netns exec "$NB" socat -u TCP-LISTEN:5001,bind=10.77.1.2,reuseaddr OPEN:"$work/out.bin",creat,trunc \
  2>"$work/socat-b.err" &
sink=$!
pids+=("$sink")
for _ in $(seq 50); do
  ip netns exec "$NB" ss -ltn | grep -q ":5001" && break
  sleep 0.05
done
timeout 30 ip netns exec "$NA" socat -u OPEN:"$work/in.bin" TCP:10.77.1.2:5001 ||
  fail "transfer A -> B failed"
wait "$sink" || fail "socat in B failed"
[ "$(sha256sum <"$work/in.bin")" = "$(sha256sum <"$work/out.bin")" ] || fail "transfer corrupted"

set +e
ip netns exec "$NA" ping -c 1 -t 1 -W 2 10.77.1.2 >"$work/ttl.log" 2>&1
ip netns exec "$NA" ping -c 1 -W 2 10.99.0.1 >"$work/unreach.log" 2>&1
ip netns exec "$NA" ping -c 1 -W 2 -M do -s 1400 10.77.1.2 >"$work/fragneeded.log" 2>&1
set -e
grep -q "From 10.77.0.1 .*Time to live exceeded" "$work/ttl.log" || fail "no time exceeded"
grep -q "From 10.77.0.1 .*Destination Net Unreachable" "$work/unreach.log" || fail "no net unreachable"
grep -qi "From 10.77.0.1 .*Frag needed and DF set (mtu = 1280)" "$work/fragneeded.log" ||
  fail "no fragmentation needed: $(cat "$work/fragneeded.log")"

stop_router
python3 - "$work/router.json" <<'PY' || fail "counters: $(cat "$work/router.json")"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["forwarded"] > 1000, r["forwarded"]          # the 2 MiB transfer, both ways
assert r["icmp_sent"] >= 4, r["icmp_sent"]            # echo reply + 3 errors
assert r["drops"].get("TTL expired") == 1, r["drops"]
assert r["drops"].get("no route") == 1, r["drops"]
assert r["drops"].get("too big for the link and DF set") == 1, r["drops"]
for i in r["interfaces"]:
    assert i["arp_learned"] >= 1 and i["frames_received"] > 0, i
PY
for dev in "$TA" "$TB"; do
  [ "$(tcpdump -nn -r "$work/r-$dev.pcap" 2>/dev/null | wc -l)" -gt 1000 ] || fail "no capture of $dev"
done

# B's side dropping everything: the path is cut, the router counts the drops.
detach
start_router impaired --impair "$TB:loss=100%"
attach
if ip netns exec "$NA" ping -c 2 -i 0.2 -W 1 10.77.1.2 >"$work/impaired.log" 2>&1; then
  fail "ping crossed a link that drops everything"
fi
stop_router
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); a,b=r["interfaces"]; sys.exit(0 if b["impaired_out"] >= 2 and a["frames_received"] >= 2 and r["forwarded"] >= 2 else 1)' \
  "$work/impaired.json" || fail "no impairment drops counted: $(cat "$work/impaired.json")"

# Offloads (the default without --pcap and --impair): TCP super-frames cross
# whole with their virtio-net header, intact both ways (B's MTU 1280 holds the
# segments: B advertises MSS 1240). Then B's port without offloads (an
# impairment stage that drops nothing): A's super-frames are segmented by the
# router, B's plain segments go to A as they are.
head -c $((8 * 1024 * 1024)) /dev/urandom >"$work/in.bin"
transfer_both_ways() {
  local dir from to addr
  for dir in "$NA:$NB:10.77.1.2" "$NB:$NA:10.77.0.2"; do
    IFS=: read -r from to addr <<<"$dir"
    ip netns exec "$to" socat -u TCP-LISTEN:5002,bind="$addr",reuseaddr \
      OPEN:"$work/out.bin",creat,trunc 2>"$work/socat-o.err" &
    sink=$!
    pids+=("$sink")
    for _ in $(seq 50); do
      ip netns exec "$to" ss -ltn | grep -q ":5002" && break
      sleep 0.05
  done
  timeout 30 ip netns exec "$from" socat -u OPEN:"$work/in.bin" TCP:"$addr":5002 ||
    fail "offload transfer to $addr failed"
  wait "$sink" || fail "socat at $addr failed"
  [ "$(sha256sum <"$work/in.bin")" = "$(sha256sum <"$work/out.bin")" ] ||
    fail "offload transfer to $addr corrupted"
  done
}
detach
start_router offload
attach
transfer_both_ways
stop_router
detach
start_router mixed --impair "$TB:loss=0%"
attach
transfer_both_ways
stop_router
python3 - "$work/offload.json" "$work/mixed.json" <<'PY' || fail "offload counters: $(cat "$work/offload.json" "$work/mixed.json")"
import json, sys
r = json.load(open(sys.argv[1]))
assert all(i["offload"] for i in r["interfaces"]), r["interfaces"]
assert r["gso_forwarded"] > 50, r["gso_forwarded"]  # super-frames, both ways
assert not r["offload_errors"], r["offload_errors"]
m = json.load(open(sys.argv[2]))
assert [i["offload"] for i in m["interfaces"]] == [True, False], m["interfaces"]
assert m["gso_segmented"] > 50 and m["segments_sent"] > m["gso_segmented"], m
assert not m["offload_errors"], m["offload_errors"]
PY
echo "PASS"
