#!/usr/bin/env bash
# Shared implementation of scripts/tun.sh and scripts/tap.sh (see there).
#   tuntap.sh tun|tap start|stop|status N [--netns NAME] [--user USER]
# Creates a persistent device <mode>N with 169.254.N.1/24 and fd00:7474:N::1/64
# on the kernel side (the stack uses 169.254.N.9 and fd00:7474:N::9),
# txqueuelen 10000, link up. In the IPv6 prefix N is written with its decimal
# digits (tun144: fd00:7474:144::/64, i.e. the group 0x144). The kernel's IPv6
# address is added with nodad, so it is usable at once. Idempotent. Touches
# only its own device and subnets; never enables forwarding or NAT.
set -euo pipefail

mode=${1:-}
shift || true
usage() {
  echo "usage: $(basename "$0" 2>/dev/null || echo "$mode.sh") start|stop|status N [--netns NAME] [--user USER]" >&2
  echo "  start: create ${mode}N (169.254.N.1/24, fd00:7474:N::1/64, txqueuelen 10000, up); stop: delete it" >&2
  exit 2
}
case "$mode" in tun | tap) ;; *) echo "tuntap.sh: mode must be tun or tap" >&2; exit 2 ;; esac

action=${1:-}
n=${2:-}
[ $# -ge 2 ] || usage
shift 2
netns=""
user=""
while [ $# -gt 0 ]; do
  case "$1" in
    --netns) netns=${2:-}; [ -n "$netns" ] || usage; shift 2 ;;
    --user) user=${2:-}; [ -n "$user" ] || usage; shift 2 ;;
    *) usage ;;
  esac
done
if ! [[ "$n" =~ ^[0-9]{1,3}$ ]] || [ "$n" -gt 255 ]; then
  echo "$mode.sh: N must be 0..255, got '$n'" >&2
  exit 2
fi

dev="$mode$n"
subnet="169.254.$n.0/24"
address="169.254.$n.1/24"
subnet6="fd00:7474:$n::/64"
address6="fd00:7474:$n::1/64"
ipn=(ip)
if [ -n "$netns" ]; then
  ipn=(ip -n "$netns")
fi

exists() { "${ipn[@]}" link show dev "$dev" >/dev/null 2>&1; }

start() {
  if [ -n "$netns" ] && ! ip netns list | awk '{print $1}' | grep -qx -- "$netns"; then
    ip netns add "$netns"
    "${ipn[@]}" link set lo up
  fi
  # Another interface already routing our subnet would make two paths to it.
  local other
  other=$("${ipn[@]}" -4 route show "$subnet" | grep -v " dev $dev " | grep -v " dev $dev\$" || true)
  if [ -n "$other" ]; then
    echo "$mode.sh: $subnet is already routed elsewhere: $other" >&2
    exit 1
  fi
  other=$("${ipn[@]}" -6 route show "$subnet6" 2>/dev/null | grep -v " dev $dev " | grep -v " dev $dev\$" || true)
  if [ -n "$other" ]; then
    echo "$mode.sh: $subnet6 is already routed elsewhere: $other" >&2
    exit 1
  fi
  if exists; then
    if ! "${ipn[@]}" -d link show dev "$dev" | grep -q "tun type $mode"; then
      echo "$mode.sh: $dev exists but is not a $mode device" >&2
      exit 1
    fi
  else
    "${ipn[@]}" tuntap add dev "$dev" mode "$mode" ${user:+user "$user"}
  fi
  # With the default txqueuelen of 500 the kernel drops packets towards a
  # busy reader even on an idle machine.
  "${ipn[@]}" link set dev "$dev" txqueuelen 10000 up
  "${ipn[@]}" addr replace "$address" dev "$dev"
  # IPv6 may be off on this device (a netns or host with disable_ipv6=1).
  if [ -n "$netns" ]; then
    ip netns exec "$netns" sysctl -qw "net.ipv6.conf.$dev.disable_ipv6=0" 2>/dev/null || true
  else
    sysctl -qw "net.ipv6.conf.$dev.disable_ipv6=0" 2>/dev/null || true
  fi
  # nodad: no duplicate address detection for the kernel's address (the link
  # holds only the kernel and the stack), so it is usable at once.
  "${ipn[@]}" -6 addr replace "$address6" dev "$dev" nodad
  echo "$dev: $address, $address6${netns:+ in netns $netns} (the stack uses 169.254.$n.9 and fd00:7474:$n::9)"
}

stop() {
  if exists; then
    "${ipn[@]}" link del dev "$dev"
    echo "$dev: deleted${netns:+ from netns $netns}"
  fi
}

status() {
  if exists; then
    "${ipn[@]}" -d addr show dev "$dev"
  else
    echo "$dev: absent${netns:+ in netns $netns}"
    return 1
  fi
}

case "$action" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) usage ;;
esac
