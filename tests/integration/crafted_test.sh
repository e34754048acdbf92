#!/usr/bin/env bash
# The crafted-packet suite (tests/integration/crafted/, docs/crafted-tests.md):
# hand-made segments from a raw socket against two echo servers, with the same
# cases and the same assertions:
#   linux   - a kernel echo server (crafted/linux_echo.py) in one namespace,
#             reached over a veth pair from a second namespace;
#   tinytcp - tt-serve --echo 7 on tun151 in a third namespace.
# Both also run an HTTP server on port 80 (python's http.server, tt-serve --http)
# for the cases that need the server to close first (TIME-WAIT).
# The crafted client uses an address the client namespace's kernel does not own
# (169.254.N.2), so that kernel never answers the servers' segments itself.
# Usage: crafted_test.sh BIN_DIR. CRAFTED_TARGETS="linux tinytcp" (default both)
# and CRAFTED_CASES="name ..." narrow a run. Skips (77) without root outside CI.
set -euo pipefail
BIN=$(cd "${1:?usage: $0 BIN_DIR}" && pwd)
cd "$(dirname "$0")/../.."
HERE=$(pwd)/tests/integration/crafted

. tests/integration/lib.sh  # after the cd to the repository root
tt_require ethtool
/usr/bin/python3 -c "import scapy.layers.inet" 2>/dev/null || tt_skip "needs python3-scapy"

targets=${CRAFTED_TARGETS:-linux tinytcp}
case_args=()
for c in ${CRAFTED_CASES:-}; do case_args+=(--case "$c"); done

ns_tt="tt-crafted-$$-$RANDOM-tt"
ns_c="tt-crafted-$$-$RANDOM-c"
ns_l="tt-crafted-$$-$RANDOM-l"
work=$(mktemp -d /tmp/tt-crafted.XXXXXX)
serve_pid=""
echo_pid=""
http_pid=""
cleanup() {
  [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null || true
  [ -n "$echo_pid" ] && kill "$echo_pid" 2>/dev/null || true
  [ -n "$http_pid" ] && kill "$http_pid" 2>/dev/null || true
  for ns in "$ns_tt" "$ns_c" "$ns_l"; do ip netns del "$ns" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; for f in "$work"/*.err; do [ -f "$f" ] && tail -5 "$f" >&2; done; exit 1; }
# An HTTP server closes first (HTTP/1.0), which puts it in TIME-WAIT.
mkdir -p "$work/www"
echo "crafted" >"$work/www/index.html"

status=0
for target in $targets; do
  case "$target" in
    linux)
      # 169.254.152.1 is the client namespace's own address on the veth, .2 the
      # crafted client's (not owned by any kernel), .3 the SYN flood's; the
      # server namespace knows their MAC statically, so nothing needs ARP.
      ip netns add "$ns_c"
      ip netns add "$ns_l"
      ip -n "$ns_c" link set lo up
      ip -n "$ns_l" link set lo up
      ip -n "$ns_c" link add vc address 02:00:00:00:98:01 type veth \
        peer name vl address 02:00:00:00:98:09 netns "$ns_l"
      ip -n "$ns_c" addr add 169.254.152.1/24 dev vc
      ip -n "$ns_l" addr add 169.254.152.9/24 dev vl
      for side in "$ns_c vc" "$ns_l vl"; do
        set -- $side
        ip netns exec "$1" ethtool -K "$2" tso off gso off gro off tx off rx off >/dev/null 2>&1 ||
          ip netns exec "$1" ethtool -K "$2" tso off gso off gro off >/dev/null
        ip -n "$1" link set "$2" up
      done
      for a in 169.254.152.2 169.254.152.3; do
        ip -n "$ns_l" neigh replace "$a" lladdr 02:00:00:00:98:01 dev vl nud permanent
      done
      ip netns exec "$ns_l" /usr/bin/python3 "$HERE/linux_echo.py" 169.254.152.9 7 \
        >"$work/echo.out" 2>"$work/echo.err" &
      echo_pid=$!
      ip netns exec "$ns_l" /usr/bin/python3 -m http.server 80 --bind 169.254.152.9 \
        --directory "$work/www" >"$work/http.out" 2>"$work/http.err" &
      http_pid=$!
      for _ in $(seq 100); do grep -q "echo on" "$work/echo.out" && break; sleep 0.05; done
      grep -q "echo on" "$work/echo.out" || fail "the kernel echo server did not start"
      for _ in $(seq 100); do
        ip netns exec "$ns_l" ss -Hltn "sport = :80" | grep -q LISTEN && break
        sleep 0.05
      done
      ip netns exec "$ns_c" /usr/bin/python3 "$HERE/run.py" --target linux --iface vc \
        --ethernet 02:00:00:00:98:01 02:00:00:00:98:09 --src 169.254.152.2 \
        --dst 169.254.152.9 --flood-src 169.254.152.3 "${case_args[@]}" || status=1
      kill "$echo_pid" "$http_pid"
      wait "$echo_pid" "$http_pid" 2>/dev/null || true
      echo_pid=""
      http_pid=""
      ip netns del "$ns_c"
      ip netns del "$ns_l"
      ;;
    tinytcp)
      ./scripts/tun.sh start 151 --netns "$ns_tt" >/dev/null
      ip netns exec "$ns_tt" "$BIN/tt-serve" --dev tun151 --echo 7 --http "$work/www" \
        >"$work/serve.out" 2>"$work/serve.err" &
      serve_pid=$!
      for _ in $(seq 200); do grep -q "serving on" "$work/serve.err" && break; sleep 0.05; done
      grep -q "serving on" "$work/serve.err" || fail "tt-serve did not start"
      ip netns exec "$ns_tt" /usr/bin/python3 "$HERE/run.py" --target tinytcp --iface tun151 \
        --src 169.254.151.2 --dst 169.254.151.9 --flood-src 169.254.151.3 "${case_args[@]}" ||
        status=1
      kill -0 "$serve_pid" 2>/dev/null || fail "tt-serve died during the suite"
      kill "$serve_pid"
      wait "$serve_pid" || fail "tt-serve exit status"
      serve_pid=""
      cat "$work/serve.out"
      ip netns del "$ns_tt"
      ;;
    *) fail "unknown target $target (linux or tinytcp)" ;;
  esac
done
exit "$status"
