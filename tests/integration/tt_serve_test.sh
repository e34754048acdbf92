#!/usr/bin/env bash
# tt-serve over TUN (plain and in offload mode) and TAP with kernel clients: ping answered, curl downloads
# and uploads 100 MiB (sha256 checked), half-close and RST from the kernel
# side, 1,000 concurrent kernel connections to the echo server each echoing
# 10 KiB, and a teardown that leaves no process, device or namespace behind.
# Usage: tt_serve_test.sh BIN_DIR. Skips (77) without root, fails under CI=true.
set -euo pipefail
BIN=$(cd "${1:?usage: $0 BIN_DIR}" && pwd)
cd "$(dirname "$0")/../.."
HERE=$(pwd)/tests/integration

. tests/integration/lib.sh  # after the cd to the repository root
tt_require curl

ns="tt-serve-$$-$RANDOM"
work=$(mktemp -d /tmp/tt-serve.XXXXXX)
serve_pid=""
cleanup() {
  [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null || true
  ip netns del "$ns" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
ip netns add "$ns"
fail() { echo "FAIL: $*" >&2; [ -f "$work/serve.err" ] && tail -5 "$work/serve.err" >&2; exit 1; }

mkdir -p "$work/www"
head -c $((100 * 1024 * 1024)) /dev/urandom >"$work/big.bin"
cp "$work/big.bin" "$work/www/big.bin"
want=$(sha256sum <"$work/big.bin" | cut -d' ' -f1)

# tun144 (offload by default: IFF_VNET_HDR, GSO super-packets in, TSO out),
# tun144+nooffload (one READ or WRITE per packet, up to 64 per io_uring_enter),
# tun144+nooffload+nouring (one read() or write() per packet) and tap10.
for dev in tun144 tun144+nooffload tun144+nooffload+nouring tap10; do
  base=${dev%%+*}
  n=${base#tun}
  n=${n#tap}
  kind=${base%%[0-9]*}
  ip=169.254.$n.9
  "./scripts/$kind.sh" start "$n" --netns "$ns" >/dev/null
  # The background job truncates serve.err only once it runs: the previous
  # device's "serving on" must not satisfy the wait below.
  rm -f "$work/serve.err"
  ip netns exec "$ns" "$BIN/tt-serve" --dev "$dev" --echo 7 --discard 9 --http "$work/www" --allow-put \
    >"$work/serve.out" 2>"$work/serve.err" &
  serve_pid=$!
  for _ in $(seq 200); do
    grep -q "serving on" "$work/serve.err" && break
    sleep 0.05
  done
  grep -q "serving on" "$work/serve.err" || fail "$dev: tt-serve did not start"

  echo "--- $dev: ping"
  ip netns exec "$ns" ping -c 3 -i 0.2 -W 2 -q "$ip" >/dev/null || fail "$dev: ping"

  echo "--- $dev: curl downloads 100 MiB"
  ip netns exec "$ns" curl -sS --max-time 120 -o "$work/dl.bin" "http://$ip/big.bin" ||
    fail "$dev: download"
  [ "$(sha256sum <"$work/dl.bin" | cut -d' ' -f1)" = "$want" ] || fail "$dev: download differs"

  echo "--- $dev: curl uploads 100 MiB"
  rm -f "$work/www/up.bin"
  ip netns exec "$ns" curl -sS --max-time 120 -T "$work/big.bin" "http://$ip/up.bin" \
    >"$work/put.out" || fail "$dev: upload"
  [ "$(sha256sum <"$work/www/up.bin" | cut -d' ' -f1)" = "$want" ] || fail "$dev: upload differs"
  code=$(ip netns exec "$ns" curl -s -o /dev/null -w '%{http_code}' "http://$ip/nope")
  [ "$code" = 404 ] || fail "$dev: missing file gave $code"
  code=$(ip netns exec "$ns" curl -s -o /dev/null -w '%{http_code}' "http://$ip/../etc/passwd" \
    --path-as-is)
  [ "$code" = 404 ] || fail "$dev: path traversal gave $code"

  echo "--- $dev: half-close, RST, 1000 concurrent echo connections"
  ip netns exec "$ns" /usr/bin/python3 "$HERE/echo_clients.py" "$ip" 7 halfclose ||
    fail "$dev: half-close"
  ip netns exec "$ns" /usr/bin/python3 "$HERE/echo_clients.py" "$ip" 7 reset || fail "$dev: reset"
  ip netns exec "$ns" /usr/bin/python3 "$HERE/echo_clients.py" "$ip" 7 many 1000 10240 ||
    fail "$dev: 1000 connections"

  kill "$serve_pid"
  wait "$serve_pid" || fail "$dev: tt-serve exit status"
  serve_pid=""
  cat "$work/serve.out"
  grep -q "connections" "$work/serve.out" || fail "$dev: no summary line"
  "./scripts/$kind.sh" stop "$n" --netns "$ns" >/dev/null
done

ip netns exec "$ns" ip link show | grep -qE 'tun144|tap10' && fail "a device outlived the test"
pgrep -f "tt-serve .*$work" >/dev/null && fail "a tt-serve outlived the test"
echo "1 passed, 0 failed"
