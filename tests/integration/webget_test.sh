#!/usr/bin/env bash
# webget through tinytcp over TUN and over TAP (ARP) to python's http.server on
# the kernel side: a small page and a 100 MiB file with sha256 checked, SYN
# options negotiated both ways in the pcap, no malformed packet, the kernel's
# neighbour table learning our MAC over TAP, and clean errors for a refused
# port and a bad URL. Everything runs inside a throwaway network namespace.
# Usage: webget_test.sh BIN_DIR. Skips (77) without root, fails under CI=true.
set -euo pipefail
BIN=$(cd "${1:?usage: $0 BIN_DIR}" && pwd)
cd "$(dirname "$0")/../.."

. tests/integration/lib.sh  # after the cd to the repository root
tt_require tshark

ns="tt-webget-$$-$RANDOM"
work=$(mktemp -d /tmp/tt-webget.XXXXXX)
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
  ip netns del "$ns" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
ip netns add "$ns"
in_ns() { ip netns exec "$ns" "$@"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

mkdir -p "$work/www"
echo "<html>tinytcp</html>" >"$work/www/index.html"
head -c $((100 * 1024 * 1024)) /dev/urandom >"$work/www/big.bin"
head -c $((4 * 1024 * 1024)) /dev/urandom >"$work/www/medium.bin"
want=$(sha256sum <"$work/www/big.bin" | cut -d' ' -f1)

for dev in tun144 tap10; do
  n=${dev#tun}
  n=${n#tap}
  kind=${dev%%[0-9]*}
  kernel_ip=169.254.$n.1
  "./scripts/$kind.sh" start "$n" --netns "$ns" >/dev/null
  # Started directly (not through a shell function) so that $! is python's own
  # PID and the kill below really ends it.
  ip netns exec "$ns" /usr/bin/python3 -u -m http.server 8000 --bind "$kernel_ip" \
    --directory "$work/www" >"$work/http-$dev.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 200); do
    grep -q "Serving HTTP" "$work/http-$dev.log" 2>/dev/null && break
    sleep 0.05
  done
  grep -q "Serving HTTP" "$work/http-$dev.log" || fail "http.server did not start: $(cat "$work/http-$dev.log")"

  echo "--- $dev: small page"
  page=$(in_ns "$BIN/webget" -q --dev "$dev" "http://$kernel_ip:8000/index.html")
  [ "$page" = "<html>tinytcp</html>" ] || fail "$dev: page was '$page'"

  echo "--- $dev: 100 MiB"
  in_ns "$BIN/webget" -q --dev "$dev" -o "$work/got-$dev.bin" "http://$kernel_ip:8000/big.bin" &
  webget_pid=$!
  if [ "$kind" = tap ]; then
    # The kernel must learn our MAC by ARP (looked at while the stack runs:
    # closing the device flushes the neighbour table).
    learned=""
    for _ in $(seq 200); do
      learned=$(in_ns ip neigh show dev "$dev" 169.254.$n.9 | grep lladdr || true)
      [ -n "$learned" ] && break
      sleep 0.01
    done
    [ -n "$learned" ] || fail "$dev: the kernel has no neighbour entry for 169.254.$n.9"
    echo "kernel neighbour entry: $learned"
  fi
  wait "$webget_pid" || fail "$dev: webget of the 100 MiB file failed"
  got=$(sha256sum <"$work/got-$dev.bin" | cut -d' ' -f1)
  [ "$got" = "$want" ] || fail "$dev: sha256 differs"

  echo "--- $dev: 4 MiB with pcap"
  in_ns "$BIN/webget" -q --dev "$dev" --pcap "$work/$dev.pcap" -o "$work/got-$dev.bin" \
    "http://$kernel_ip:8000/medium.bin"
  cmp -s "$work/got-$dev.bin" "$work/www/medium.bin" || fail "$dev: 4 MiB file differs"

  syns=$(tshark -r "$work/$dev.pcap" -Y 'tcp.flags.syn==1' -T fields -e ip.src \
    -e tcp.options.mss_val -e tcp.options.wscale.shift -e tcp.options.sack_perm \
    -e tcp.options.timestamp.tsval 2>/dev/null)
  echo "$syns"
  [ "$(echo "$syns" | wc -l)" = 2 ] || fail "$dev: expected SYN and SYN-ACK"
  while read -r src mss ws sackp ts; do
    [ -n "$mss" ] && [ -n "$ws" ] && [ -n "$sackp" ] && [ -n "$ts" ] ||
      fail "$dev: $src's SYN lacks an option: mss=$mss ws=$ws sack=$sackp ts=$ts"
  done <<<"$syns"
  bad=$(tshark -r "$work/$dev.pcap" -o tcp.check_checksum:TRUE -o ip.check_checksum:TRUE \
    -Y '_ws.malformed || tcp.checksum.status == "Bad" || ip.checksum.status == "Bad"' \
    2>/dev/null | wc -l)
  [ "$bad" = 0 ] || fail "$dev: $bad malformed or bad-checksum packets"

  echo "--- $dev: refused port and bad input"
  set +e
  in_ns "$BIN/webget" -q --dev "$dev" --timeout 10 "http://$kernel_ip:8001/" 2>"$work/err"
  rc=$?
  set -e
  [ "$rc" = 2 ] || fail "$dev: refused port: exit $rc ($(cat "$work/err"))"
  grep -qi refused "$work/err" || fail "$dev: message: $(cat "$work/err")"
  set +e
  in_ns "$BIN/webget" -q --dev "$dev" "http://$kernel_ip:8000/missing" >/dev/null 2>"$work/err"
  rc=$?
  set -e
  [ "$rc" = 5 ] || fail "$dev: 404: exit $rc ($(cat "$work/err"))"
  kill "$server_pid"
  wait "$server_pid" 2>/dev/null || true
  server_pid=""
done

for bad in "ftp://x/" "http://example.com/" "http://1.2.3.4:99999/"; do
  set +e
  "$BIN/webget" --dev tun144 "$bad" 2>"$work/err"
  rc=$?
  set -e
  [ "$rc" = 1 ] && [ "$(wc -l <"$work/err")" = 1 ] || fail "'$bad': exit $rc: $(cat "$work/err")"
done
pgrep -f "http.server 8000 --bind 169.254" >/dev/null && fail "an http.server outlived the test"
echo "1 passed, 0 failed"
