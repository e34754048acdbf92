#!/usr/bin/env bash
# file-recv on tinytcp over TUN (--transport tun) serving several kernel TCP
# senders at once, one of them killed mid-transfer and rerun (it resumes at
# once: the new session from the same machine takes the file over), inside a
# throwaway network namespace.
# Usage: file_recv_tun_test.sh BIN_DIR. Skips (77) without root, fails under CI=true.
set -euo pipefail
BIN=$(cd "${1:?usage: $0 BIN_DIR}" && pwd)
cd "$(dirname "$0")/../.."

. tests/integration/lib.sh  # after the cd to the repository root
tt_require

ns="tt-frtun-$$-$RANDOM"
work=$(mktemp -d /tmp/tt-frtun.XXXXXX)
recv_pid=""
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  [ -n "$recv_pid" ] && kill "$recv_pid" 2>/dev/null || true
  ip netns del "$ns" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
ip netns add "$ns"
in_ns() { ip netns exec "$ns" "$@"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

n=146
./scripts/tun.sh start "$n" --netns "$ns" >/dev/null
stack_ip=169.254.$n.9
port=9000
mkdir -p "$work/out" "$work/in"
ip netns exec "$ns" "$BIN/file-recv" --listen "$port" --output "$work/out" --transport tun --dev "tun$n" \
  >"$work/recv.out" 2>"$work/recv.err" &
recv_pid=$!
for _ in $(seq 200); do
  grep -q "listening on port" "$work/recv.err" 2>/dev/null && break
  sleep 0.05
done
grep -q "listening on port" "$work/recv.err" || fail "file-recv did not start: $(cat "$work/recv.err")"

echo "--- 8 kernel senders at once to tinytcp on tun$n"
for i in $(seq 8); do
  head -c $((3000000 + i * 1000)) /dev/urandom >"$work/in/f$i.bin"
done
senders=()
for i in $(seq 8); do
  ip netns exec "$ns" "$BIN/file-send" --transport kernel "$work/in/f$i.bin" --to "$stack_ip:$port" \
    --connect-timeout 10 >/dev/null 2>"$work/send$i.err" &
  senders+=($!)
  pids+=($!)
done
for i in $(seq 8); do
  wait "${senders[$((i - 1))]}" || fail "sender $i: $(cat "$work/send$i.err")"
  cmp -s "$work/in/f$i.bin" "$work/out/f$i.bin" || fail "file $i differs"
done

echo "--- a sender killed mid-transfer, rerun at once"
head -c 300000000 /dev/zero | tr '\0' 'k' >"$work/in/big.bin"
ip netns exec "$ns" "$BIN/file-send" --transport kernel "$work/in/big.bin" --to "$stack_ip:$port" \
  >/dev/null 2>"$work/big1.err" &
big=$!
pids+=("$big")
part=""
for _ in $(seq 500); do
  part=$(find "$work/out" -name '.big.bin.*.part' -size +8M | head -1)
  [ -n "$part" ] && break
  sleep 0.02
done
[ -n "$part" ] || fail "no partial file appeared: $(cat "$work/recv.err")"
kill -9 "$big"
wait "$big" 2>/dev/null || true
start=$(date +%s)
in_ns "$BIN/file-send" --transport kernel "$work/in/big.bin" --to "$stack_ip:$port" --json \
  >"$work/big2.json" 2>"$work/big2.err" || fail "rerun: $(cat "$work/big2.err")"
took=$(($(date +%s) - start))
grep -q '"verified":true' "$work/big2.json" || fail "rerun summary: $(cat "$work/big2.json")"
grep -q '"resumed_from":[1-9]' "$work/big2.json" || fail "rerun did not resume: $(cat "$work/big2.json")"
[ "$took" -lt 20 ] || fail "the rerun took $took s (waited for the dead session?)"
cmp -s "$work/in/big.bin" "$work/out/big.bin" || fail "resumed file differs"
echo "rerun resumed and finished in $took s"
kill -0 "$recv_pid" || fail "file-recv died"
echo "1 passed, 0 failed"
