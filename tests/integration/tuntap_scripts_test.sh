#!/usr/bin/env bash
# scripts/tun.sh and scripts/tap.sh: idempotent start/stop, the device and
# address they promise, nothing else touched. Runs only inside a throwaway
# network namespace (deleted by the trap), so the host is never changed.
# Needs root and iproute2: skips (77) without them, fails under CI=true.
set -euo pipefail
cd "$(dirname "$0")/../.."

. tests/integration/lib.sh  # after the cd to the repository root
tt_require ip

ns="tt-scripts-$$-$RANDOM"
cleanup() { ip netns del "$ns" 2>/dev/null || true; }
trap cleanup EXIT
ip netns add "$ns"
in_ns() { ip netns exec "$ns" "$@"; }

failures=0
check() {  # check DESCRIPTION COMMAND...
  local what=$1
  shift
  if "$@"; then
    echo "ok   $what"
  else
    echo "FAIL $what" >&2
    failures=$((failures + 1))
  fi
}
fails() { ! "$@" >/dev/null 2>&1; }

expect_device() {  # expect_device MODE N
  local dev="$1$2"
  local link addrs
  link=$(ip -n "$ns" -d link show dev "$dev")
  addrs=$(ip -n "$ns" -4 -o addr show dev "$dev")
  [[ "$link" == *"tun type $1"* ]] || { echo "not a $1: $link" >&2; return 1; }
  [[ "$link" == *"qlen 10000"* ]] || { echo "txqueuelen: $link" >&2; return 1; }
  [[ "$link" == *",UP"* || "$link" == *"<UP"* ]] || { echo "not up: $link" >&2; return 1; }
  [ "$(grep -c . <<<"$addrs")" -eq 1 ] || { echo "addresses: $addrs" >&2; return 1; }
  [[ "$addrs" == *"inet 169.254.$2.1/24"* ]] || { echo "address: $addrs" >&2; return 1; }
}
absent() { ! ip -n "$ns" link show dev "$1" >/dev/null 2>&1; }
forwarding_off() { [ "$(in_ns cat /proc/sys/net/ipv4/ip_forward)" = 0 ]; }

for mode in tun tap; do
  n=$([ "$mode" = tun ] && echo 201 || echo 202)
  script="scripts/$mode.sh"
  check "$mode: start" "$script" start "$n" --netns "$ns"
  check "$mode: start again" "$script" start "$n" --netns "$ns"
  check "$mode: device, address, qlen, up" expect_device "$mode" "$n"
  check "$mode: status" "$script" status "$n" --netns "$ns"
  check "$mode: forwarding still off" forwarding_off
  check "$mode: stop" "$script" stop "$n" --netns "$ns"
  check "$mode: device gone" absent "$mode$n"
  check "$mode: stop again" "$script" stop "$n" --netns "$ns"
  check "$mode: status reports absence" fails "$script" status "$n" --netns "$ns"

  # The same from inside the namespace, without --netns.
  check "$mode: start inside the netns" in_ns "$script" start 203
  check "$mode: start inside again" in_ns "$script" start 203
  check "$mode: device inside the netns" expect_device "$mode" 203
  check "$mode: stop inside the netns" in_ns "$script" stop 203
  check "$mode: gone inside" absent "${mode}203"
done

# tun204 and tap204 would share 169.254.204.0/24: the second is refused.
check "tap204 starts" scripts/tap.sh start 204 --netns "$ns"
check "tun204 on the same subnet is refused" fails scripts/tun.sh start 204 --netns "$ns"
check "no tun204 made" absent tun204
scripts/tap.sh stop 204 --netns "$ns" >/dev/null
# A device called tun206 that is really a TAP is not taken over.
ip -n "$ns" tuntap add dev tun206 mode tap
check "a TAP named like our TUN is refused" fails scripts/tun.sh start 206 --netns "$ns"
ip -n "$ns" link del tun206
# A subnet already routed through another interface is refused, and the
# script makes no device.
ip -n "$ns" link add tt-veth0 type veth peer name tt-veth1
ip -n "$ns" addr add 169.254.205.1/24 dev tt-veth0
ip -n "$ns" link set tt-veth0 up
check "a subnet in use elsewhere is refused" fails scripts/tun.sh start 205 --netns "$ns"
check "no device made for it" absent tun205
check "bad N refused" fails scripts/tun.sh start 256 --netns "$ns"
check "non-numeric N refused" fails scripts/tap.sh start x --netns "$ns"
check "unknown action refused" fails scripts/tun.sh frobnicate 1 --netns "$ns"
check "missing N refused" fails scripts/tun.sh start

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "all checks passed"
