#!/usr/bin/env bash
# IPv6 on the real devices (issue 20), against the kernel, on TUN in offload
# mode (tun+offload: TSO6 both ways, checksum completion), plain TUN
# (tun+nooffload) and TAP (NDP, DAD):
#   - scripts/tun.sh and tap.sh give the kernel fd00:7474:N::1/64 (nodad);
#   - tt-serve answers ping -6 on fd00:7474:N::9, and IPv4 ping in the same run;
#   - curl -6 downloads and uploads 8 MiB, sha256 checked;
#   - in offload mode that traffic went as TCPv6 super-packets both ways;
#   - tt-serve's --pcap opens in tshark with no malformed packet, holds IPv6
#     TCP, and has the link type of the device (raw IP on TUN, Ethernet on TAP);
#   - webget fetches 2 MiB over IPv6 from python's http.server bound to ::.
# Everything runs inside a throwaway network namespace.
# Usage: ipv6_devices_test.sh BIN_DIR. Skips (77) without root, fails under CI=true.
set -euo pipefail
BIN=$(cd "${1:?usage: $0 BIN_DIR}" && pwd)
cd "$(dirname "$0")/../.."

. tests/integration/lib.sh  # after the cd to the repository root
tt_require curl tshark ping

ns="tt-ipv6dev-$$-$RANDOM"
work=$(mktemp -d /tmp/tt-ipv6dev.XXXXXX)
serve_pid=""
http_pid=""
cleanup() {
  [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null || true
  [ -n "$http_pid" ] && kill "$http_pid" 2>/dev/null || true
  ip netns del "$ns" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
ip netns add "$ns"
ip -n "$ns" link set lo up
in_ns() { ip netns exec "$ns" "$@"; }
fail() {
  echo "FAIL: $*" >&2
  [ -f "$work/serve.err" ] && tail -5 "$work/serve.err" >&2
  exit 1
}
hash_of() { sha256sum <"$1" | cut -d' ' -f1; }

mkdir -p "$work/www" "$work/up"
head -c $((8 * 1024 * 1024)) /dev/urandom >"$work/www/big.bin"
head -c $((2 * 1024 * 1024)) /dev/urandom >"$work/www/medium.bin"
want=$(hash_of "$work/www/big.bin")

# Started directly (not through the in_ns function) so that $! is the
# server's own PID and kill ends it.
ip netns exec "$ns" /usr/bin/python3 -u -m http.server 8080 --bind :: --directory "$work/www" \
  >"$work/http.log" 2>&1 &
http_pid=$!

for dev in tun211+offload tun211+nooffload tap212; do
  base=${dev%+*}
  n=${base#tun}
  n=${n#tap}
  kind=${base%%[0-9]*}
  ours=fd00:7474:$n::9
  kernel=fd00:7474:$n::1
  "./scripts/$kind.sh" start "$n" --netns "$ns" >"$work/script.out"
  grep -q "fd00:7474:$n::1/64" "$work/script.out" || fail "$kind.sh does not print the IPv6 address"
  in_ns ip -6 addr show dev "$base" | grep -q "inet6 $kernel/64 scope global nodad" ||
    fail "$base: no fd00:7474:$n::1/64 nodad on the kernel side"

  rm -f "$work/serve.err" "$work/up/big.bin"
  ip netns exec "$ns" "$BIN/tt-serve" --dev "$dev" --http "$work/www" --allow-put --pcap "$work/$base.pcap" \
    >"$work/serve.out" 2>"$work/serve.err" &
  serve_pid=$!
  for _ in $(seq 200); do
    grep -q "serving on" "$work/serve.err" && break
    sleep 0.05
  done
  grep -q "serving on 169.254.$n.9 and $ours " "$work/serve.err" ||
    fail "$dev: tt-serve did not start on both families"

  echo "--- $dev: ping -6 (on TAP after duplicate address detection, ~1 s) and ping"
  in_ns ping -6 -c 2 -i 0.2 -w 10 -q "$ours" >/dev/null || fail "$dev: ping -6"
  in_ns ping -4 -c 1 -w 5 -q "169.254.$n.9" >/dev/null || fail "$dev: IPv4 ping in the same run"

  echo "--- $dev: curl -6 downloads and uploads 8 MiB"
  in_ns curl -6 -g -sS --max-time 30 -o "$work/dl.bin" "http://[$ours]/big.bin" ||
    fail "$dev: curl -6 download"
  [ "$(hash_of "$work/dl.bin")" = "$want" ] || fail "$dev: download differs"
  in_ns curl -6 -g -sS --max-time 30 -T "$work/www/big.bin" -o /dev/null "http://[$ours]/up.bin" ||
    fail "$dev: curl -6 upload"
  [ "$(hash_of "$work/www/up.bin")" = "$want" ] || fail "$dev: upload differs"
  rm -f "$work/www/up.bin"

  kill "$serve_pid"
  status=0
  wait "$serve_pid" || status=$?
  [ "$status" = 0 ] || fail "$dev: tt-serve exit status $status: $(cat "$work/serve.out")"
  serve_pid=""
  # At least ping's 2 (on TAP more: the kernel queued those sent before DAD ended).
  pings=$(sed -n "s/.*IPv6 on $ours: \([0-9]*\) pings answered.*/\1/p" "$work/serve.out")
  [ "${pings:-0}" -ge 2 ] || fail "$dev: $(grep IPv6 "$work/serve.out")"
  if [ "$dev" = tun211+offload ]; then
    # Only IPv6 TCP went through: both counts are TCPv6 GSO.
    read -r sp_in sp_out < <(sed -n 's/.*offload: \([0-9]*\) super-packets in, \([0-9]*\) out.*/\1 \2/p' \
      "$work/serve.out")
    [ "${sp_in:-0}" -gt 0 ] || fail "$dev: no TCPv6 super-packet from the kernel (TSO6 in)"
    [ "${sp_out:-0}" -gt 0 ] || fail "$dev: no TCPv6 super-packet to the kernel (TSO6 out)"
    echo "TCPv6 super-packets: $sp_in in, $sp_out out"
  fi

  echo "--- $dev: the pcap"
  pcap=$work/$base.pcap
  malformed=$(tshark -r "$pcap" -Y _ws.malformed 2>/dev/null | head -3)
  [ -z "$malformed" ] || fail "$dev: malformed packets in the pcap: $malformed"
  tcp6=$(tshark -r "$pcap" -Y "ipv6 && tcp" 2>/dev/null | wc -l)
  [ "$tcp6" -gt 10 ] || fail "$dev: only $tcp6 IPv6 TCP packets in the pcap"
  link=$(tshark -r "$pcap" -c 1 -T fields -e frame.protocols 2>/dev/null)
  case "$kind:$link" in
    tun:raw:* | tap:eth:*) ;;
    *) fail "$dev: pcap link type is '$link'" ;;
  esac

  echo "--- $dev: webget over IPv6 from http.server on ::"
  grep -q "Serving HTTP" "$work/http.log" || fail "http.server did not start: $(cat "$work/http.log")"
  in_ns "$BIN/webget" -q --dev "$dev" --timeout 20 -o "$work/got.bin" \
    "http://[$kernel]:8080/medium.bin" || fail "$dev: webget over IPv6"
  cmp -s "$work/got.bin" "$work/www/medium.bin" || fail "$dev: webget body differs"

  "./scripts/$kind.sh" stop "$n" --netns "$ns" >/dev/null
done

echo "1 passed, 0 failed"
