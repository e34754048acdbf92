#!/usr/bin/env bash
# file-send and file-recv over IPv6 on a TUN device (issue 20), inside a
# throwaway network namespace; the kernel side has fd00:7474:N::1, the stack
# fd00:7474:N::9 (scripts/tun.sh, StackRuntime):
#  - tinytcp's file-recv on tunN, a kernel file-send to [fd00:7474:N::9]:PORT;
#  - a kernel file-recv on [::], tinytcp's file-send --transport tun to
#    [fd00:7474:N::1]:PORT (Host::connect over IPv6).
# Both files verified by SHA-256. Usage: ipv6_tun_transfer_test.sh BIN_DIR.
# Skips (77) without root, fails under CI=true.
set -euo pipefail
BIN=$(cd "${1:?usage: $0 BIN_DIR}" && pwd)
cd "$(dirname "$0")/../.."

. tests/integration/lib.sh  # after the cd to the repository root
tt_require

ns="tt-v6tun-$$-$RANDOM"
work=$(mktemp -d /tmp/tt-v6tun.XXXXXX)
recv_pid=""
cleanup() {
  [ -n "$recv_pid" ] && kill "$recv_pid" 2>/dev/null || true
  ip netns del "$ns" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
ip netns add "$ns"
in_ns() { ip netns exec "$ns" "$@"; }
fail() {
  echo "FAIL: $*" >&2
  tail -n 5 "$work"/*.err >&2 || true
  exit 1
}
wait_listen() {
  for _ in $(seq 200); do
    grep -q "listening on port" "$work/recv.err" 2>/dev/null && return 0
    sleep 0.05
  done
  fail "file-recv did not start"
}

n=163
./scripts/tun.sh start "$n" --netns "$ns" >/dev/null
stack6="fd00:7474:$n::9"
kernel6="fd00:7474:$n::1"
port=9000
mkdir -p "$work/out" "$work/in"
head -c 5000000 /dev/urandom >"$work/in/a.bin"

echo "--- kernel file-send -> tinytcp file-recv on tun$n at [$stack6]:$port"
in_ns "$BIN/file-recv" --listen "$port" --output "$work/out" --transport tun --dev "tun$n" --once \
  >"$work/recv.out" 2>"$work/recv.err" &
recv_pid=$!
wait_listen
in_ns timeout 40 "$BIN/file-send" --transport kernel "$work/in/a.bin" --to "[$stack6]:$port" \
  --connect-timeout 10 >/dev/null 2>"$work/send1.err" || fail "kernel sender exit $?"
wait "$recv_pid" || fail "tinytcp receiver exit status"
recv_pid=""
cmp -s "$work/in/a.bin" "$work/out/a.bin" || fail "file differs (tinytcp receiver)"
grep -q "session from \[$kernel6\]:" "$work/recv.err" || fail "sender not [$kernel6]"

echo "--- tinytcp file-send on tun$n -> kernel file-recv at [$kernel6]:$port"
rm -rf "$work/out" && mkdir -p "$work/out"
in_ns "$BIN/file-recv" --listen "$port" --output "$work/out" --transport kernel --once \
  >"$work/recv.out" 2>"$work/recv.err" &
recv_pid=$!
wait_listen
in_ns timeout 40 "$BIN/file-send" --transport tun --dev "tun$n" "$work/in/a.bin" \
  --to "[$kernel6]:$port" --connect-timeout 10 >/dev/null 2>"$work/send2.err" ||
  fail "tinytcp sender exit $?"
wait "$recv_pid" || fail "kernel receiver exit status"
recv_pid=""
cmp -s "$work/in/a.bin" "$work/out/a.bin" || fail "file differs (kernel receiver)"
grep -q "session from \[$stack6\]:" "$work/recv.err" || fail "sender not [$stack6]"
echo "PASS"
