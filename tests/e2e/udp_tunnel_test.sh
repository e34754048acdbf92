#!/usr/bin/env bash
# Two tinytcp processes talking TCP over the UDP tunnel on loopback (no
# privileges): webget fetches a file from tt-serve's HTTP server, first on a
# clean link, then with 5% loss each way from the impairment stage; sha256
# checked both times. Usage: udp_tunnel_test.sh BIN_DIR
set -euo pipefail
BIN=${1:?usage: $0 BIN_DIR}
WORK=$(mktemp -d /tmp/tt-e2e-udp.XXXXXX)
SERVE_PID=""
cleanup() {
  [ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
free_port() { python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

mkdir -p "$WORK/www"
head -c 5000000 /dev/urandom >"$WORK/www/f.bin"
p_serve=$(free_port)
p_get=$(free_port)
"$BIN/tt-serve" --dev "udp:127.0.0.1:$p_get@$p_serve" --address 169.254.0.1 \
  --http "$WORK/www" >"$WORK/serve.out" 2>"$WORK/serve.err" &
SERVE_PID=$!
for _ in $(seq 200); do grep -q "serving on" "$WORK/serve.err" && break; sleep 0.05; done
grep -q "serving on" "$WORK/serve.err" || fail "tt-serve did not start: $(cat "$WORK/serve.err")"

for impair in "" "loss=5%"; do
  echo "--- webget over the UDP tunnel${impair:+ with $impair each way}"
  rm -f "$WORK/got.bin"
  "$BIN/webget" -q --dev "udp:127.0.0.1:$p_serve@$p_get" ${impair:+--impair "$impair"} \
    --timeout 120 -o "$WORK/got.bin" http://169.254.0.1/f.bin || fail "webget ($impair)"
  cmp -s "$WORK/got.bin" "$WORK/www/f.bin" || fail "file differs ($impair)"
done

set +e
"$BIN/webget" -q --dev "udp:127.0.0.1:$p_serve@$p_get" --timeout 20 \
  http://169.254.0.1/missing >/dev/null 2>"$WORK/err"
rc=$?
set -e
[ "$rc" = 5 ] || fail "404 over the tunnel: exit $rc ($(cat "$WORK/err"))"
kill "$SERVE_PID"
wait "$SERVE_PID" || fail "tt-serve exit status"
SERVE_PID=""
grep -q "connections" "$WORK/serve.out" || fail "no tt-serve summary"
echo "1 passed, 0 failed"
