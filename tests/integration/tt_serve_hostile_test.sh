#!/usr/bin/env bash
# tt-serve's HTTP server against a hostile client and a good one at once
# (issue 21 item 9): 4096 connections that send half a request head and
# nothing more (each one the server cuts is opened again at once) plus one
# that drips a header byte every 0.5 s, while curl fetches 1 MiB five times;
# every curl must get the whole file within 15 s. Then PUT is refused (no
# --allow-put), a symlink out of the directory and a FIFO are 404, and the
# summary shows the connections cut.
# TT_SERVE_ARGS adds tt-serve options (e.g. the limits off:
# "--header-timeout 3600 --idle-timeout 86400 --max-connections 100000" locks
# the good client out, as before the fix).
# Usage: tt_serve_hostile_test.sh BIN_DIR. Skips (77) without root, fails under CI=true.
set -euo pipefail
BIN=$(cd "${1:?usage: $0 BIN_DIR}" && pwd)
cd "$(dirname "$0")/../.."
HERE=$(pwd)/tests/integration

. tests/integration/lib.sh  # after the cd to the repository root
tt_require curl python3

ns="tt-hostile-$$-$RANDOM"
work=$(mktemp -d /tmp/tt-hostile.XXXXXX)
serve_pid=""
hostile_pid=""
cleanup() {
  [ -n "$hostile_pid" ] && kill "$hostile_pid" 2>/dev/null || true
  [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null || true
  ip netns del "$ns" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; [ -f "$work/serve.err" ] && tail -5 "$work/serve.err" >&2; exit 1; }

ip netns add "$ns"
n=146
ip=169.254.$n.9
./scripts/tun.sh start "$n" --netns "$ns" >/dev/null
mkdir -p "$work/www" "$work/outside"
head -c $((1024 * 1024)) /dev/urandom >"$work/www/file.bin"
want=$(sha256sum <"$work/www/file.bin" | cut -d' ' -f1)
echo secret >"$work/outside/secret"
ln -s "$work/outside/secret" "$work/www/link"
mkfifo "$work/www/fifo"

# shellcheck disable=SC2086
ip netns exec "$ns" "$BIN/tt-serve" --dev "tun$n${TT_DEV_SUFFIX:-}" --http "$work/www" ${TT_SERVE_ARGS:-} \
  >"$work/serve.out" 2>"$work/serve.err" &
serve_pid=$!
for _ in $(seq 200); do
  grep -q "serving on" "$work/serve.err" && break
  sleep 0.05
done
grep -q "serving on" "$work/serve.err" || fail "tt-serve did not start"

echo "--- 4096 half-sent requests and a slow drip for 25 s"
ip netns exec "$ns" bash -c "ulimit -n 20000 && exec python3 '$HERE/http_hostile_clients.py' \
  '$ip' 80 4096 25" >"$work/hostile.out" 2>&1 &
hostile_pid=$!
sleep 5  # the flood is in place

echo "--- meanwhile curl fetches 1 MiB five times"
for i in 1 2 3 4 5; do
  t=$(ip netns exec "$ns" curl -sS --max-time 15 -o "$work/dl.bin" -w '%{time_connect} %{time_total}' \
    "http://$ip/file.bin") || fail "good client $i was not served within 15 s"
  [ "$(sha256sum <"$work/dl.bin" | cut -d' ' -f1)" = "$want" ] || fail "download $i differs"
  echo "good client $i: connected in ${t% *} s, whole file in ${t#* } s"
  sleep 1
done

code=$(ip netns exec "$ns" curl -s --max-time 10 -o /dev/null -w '%{http_code}' -T "$work/www/file.bin" \
  "http://$ip/up.bin")
[ "$code" = 403 ] || fail "PUT without --allow-put gave $code"
[ -e "$work/www/up.bin" ] && fail "PUT stored a file without --allow-put"
for path in link fifo; do
  code=$(ip netns exec "$ns" curl -s --max-time 10 -o /dev/null -w '%{http_code}' "http://$ip/$path")
  [ "$code" = 404 ] || fail "GET /$path gave $code"
done

wait "$hostile_pid" || fail "hostile client failed"
hostile_pid=""
cat "$work/hostile.out"
kill "$serve_pid"
wait "$serve_pid" || fail "tt-serve exit status"
serve_pid=""
cat "$work/serve.out"
cut=$(sed -n 's/.*reset \([0-9]*\) at the header timeout, [0-9]* idle, \([0-9]*\) evicted.*/\1 \2/p' \
  "$work/serve.out")
[ -n "$cut" ] && [ "$(echo "$cut" | awk '{print $1 + $2}')" -gt 0 ] ||
  fail "no connection was cut ($cut)"
echo "1 passed, 0 failed"
