#!/usr/bin/env bash
# Two throwaway network namespaces joined by a veth pair, with kernel-level
# random loss. Nothing in them routes off the machine.
#
#   netns-loss.sh up   TAG [LOSS_PERCENT]   create tt-TAG-a (169.254.77.1) and tt-TAG-b (169.254.77.2)
#   netns-loss.sh loss TAG LOSS_PERCENT     set the loss (each direction)
#   netns-loss.sh tun  TAG N                tunN in tt-TAG-a (169.254.N.1; tinytcp on it
#                                           uses 169.254.N.9), forwarded to tt-TAG-b
#   netns-loss.sh down TAG                  delete both namespaces
#
# Loss is applied with `iptables -m statistic --mode random` on INPUT at each
# receiving end, never on OUTPUT (a datagram dropped in OUTPUT makes sendto
# fail with EPERM instead of being lost), and on FORWARD in tt-TAG-a for what
# it forwards from the veth to a TUN device (the stack on it is a receiving
# end too). Segmentation offloads are off, so one drop is one packet.
# Forwarding is turned on only inside tt-TAG-a, and only by `tun`.
set -euo pipefail

A_ADDR=169.254.77.1
B_ADDR=169.254.77.2

usage() { echo "usage: $0 up TAG [LOSS%] | loss TAG LOSS% | tun TAG N | down TAG" >&2; exit 2; }
[ $# -ge 2 ] || usage
cmd=$1
tag=$2
[[ "$tag" =~ ^[A-Za-z0-9_-]{1,8}$ ]] || { echo "netns-loss: TAG must be 1-8 of [A-Za-z0-9_-]" >&2; exit 2; }
NS_A="tt-$tag-a"
NS_B="tt-$tag-b"
VETH_A="ttv$tag-a"
VETH_B="ttv$tag-b"

set_loss() {
  local percent=$1
  local p
  p=$(python3 -c "import sys; v=float(sys.argv[1]); assert 0 <= v < 100; print(v/100)" "$percent") ||
    { echo "netns-loss: loss must be a percentage in [0, 100)" >&2; exit 2; }
  for ns in "$NS_A" "$NS_B"; do
    ip netns exec "$ns" iptables -F INPUT
    ip netns exec "$ns" iptables -F FORWARD
    if [ "$percent" != 0 ] && [ "$p" != 0.0 ]; then
      for chain in INPUT FORWARD; do
        ip netns exec "$ns" iptables -A "$chain" -i "ttv$tag-${ns: -1}" \
          -m statistic --mode random --probability "$p" -j DROP
      done
    fi
  done
}

case "$cmd" in
  up)
    if ip netns list | grep -qw "$NS_A"; then
      echo "netns-loss: $NS_A exists; reusing" >&2
    else
      ip netns add "$NS_A"
      ip netns add "$NS_B"
      ip link add "$VETH_A" netns "$NS_A" type veth peer name "$VETH_B" netns "$NS_B"
      ip -n "$NS_A" addr add "$A_ADDR/24" dev "$VETH_A"
      ip -n "$NS_B" addr add "$B_ADDR/24" dev "$VETH_B"
      for pair in "$NS_A:$VETH_A" "$NS_B:$VETH_B"; do
        ns=${pair%%:*}
        dev=${pair#*:}
        ip -n "$ns" link set lo up
        ip -n "$ns" link set "$dev" up
        ip netns exec "$ns" ethtool -K "$dev" tso off gso off gro off >/dev/null 2>&1 || true
      done
    fi
    set_loss "${3:-0}"
    ;;
  loss)
    [ $# -eq 3 ] || usage
    set_loss "$3"
    ;;
  tun)
    [ $# -eq 3 ] && [[ "$3" =~ ^[0-9]{1,3}$ ]] && [ "$3" -ge 1 ] && [ "$3" -le 254 ] || usage
    "$(dirname "$0")/tun.sh" start "$3" --netns "$NS_A" >/dev/null
    ip netns exec "$NS_A" sysctl -qw net.ipv4.ip_forward=1
    ip -n "$NS_B" route replace "169.254.$3.0/24" via "$A_ADDR"
    ;;
  down)
    ip netns del "$NS_A" 2>/dev/null || true
    ip netns del "$NS_B" 2>/dev/null || true
    ;;
  *)
    usage
    ;;
esac
