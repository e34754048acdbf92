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
# Each target runs the IPv4 cases (crafted/cases.py) and then the IPv6 ones
# (crafted/cases6.py) from fd00:7474:N::2 to fd00:7474:N::9. On the veth the
# client namespace has IPv6 off (disable_ipv6), so its kernel neither answers
# neighbor solicitations for ::2 nor anything sent to it; the server namespace
# has a permanent neighbor entry for ::2, so it never solicits, and no ICMPv6
# rate limit (the cases provoke a dozen errors to one address in seconds).
# Usage: crafted_test.sh BIN_DIR. CRAFTED_TARGETS="linux tinytcp" (default both),
# CRAFTED_FAMILIES="4 6" (default both) and CRAFTED_CASES="name ..." narrow a
# run; CRAFTED_PCAP=FILE has tt-serve write what it sends and receives to
# FILE.4 and FILE.6.
# Skips (77) without root outside CI.
set -euo pipefail
BIN=$(cd "${1:?usage: $0 BIN_DIR}" && pwd)
cd "$(dirname "$0")/../.."
HERE=$(pwd)/tests/integration/crafted

. tests/integration/lib.sh  # after the cd to the repository root
tt_require ethtool
/usr/bin/python3 -c "import scapy.layers.inet" 2>/dev/null || tt_skip "needs python3-scapy"

targets=${CRAFTED_TARGETS:-linux tinytcp}
families=${CRAFTED_FAMILIES:-4 6}
has_family() { case " $families " in *" $1 "*) return 0 ;; esac; return 1; }
case_args=()
for c in ${CRAFTED_CASES:-}; do case_args+=(--case "$c"); done

ns_tt="tt-crafted-$$-$RANDOM-tt"
ns_c="tt-crafted-$$-$RANDOM-c"
ns_l="tt-crafted-$$-$RANDOM-l"
work=$(mktemp -d /tmp/tt-crafted.XXXXXX)
serve_pid=""
echo_pid=""
echo6_pid=""
http_pid=""
cleanup() {
  [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null || true
  [ -n "$echo_pid" ] && kill "$echo_pid" 2>/dev/null || true
  [ -n "$echo6_pid" ] && kill "$echo6_pid" 2>/dev/null || true
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
      # IPv6: fd00:7474:152::9 on the server side; the client kernel takes no
      # IPv6 at all, and fd00:7474:152::2 (the crafted client) is a permanent
      # neighbor of the server.
      ip netns exec "$ns_c" sysctl -qw net.ipv6.conf.vc.disable_ipv6=1
      ip netns exec "$ns_l" sysctl -qw net.ipv6.conf.vl.disable_ipv6=0 net.ipv6.icmp.ratelimit=0
      ip -n "$ns_l" -6 addr add fd00:7474:152::9/64 dev vl nodad
      for a in fd00:7474:152::2 fd00:7474:152::3; do
        ip -n "$ns_l" -6 neigh replace "$a" lladdr 02:00:00:00:98:01 dev vl nud permanent
      done
      ip netns exec "$ns_l" /usr/bin/python3 "$HERE/linux_echo.py" 169.254.152.9 7 \
        >"$work/echo.out" 2>"$work/echo.err" &
      echo_pid=$!
      ip netns exec "$ns_l" /usr/bin/python3 "$HERE/linux_echo.py" fd00:7474:152::9 7 \
        >"$work/echo6.out" 2>"$work/echo6.err" &
      echo6_pid=$!
      ip netns exec "$ns_l" /usr/bin/python3 -m http.server 80 --bind 169.254.152.9 \
        --directory "$work/www" >"$work/http.out" 2>"$work/http.err" &
      http_pid=$!
      for _ in $(seq 100); do grep -q "echo on" "$work/echo.out" && break; sleep 0.05; done
      grep -q "echo on" "$work/echo.out" || fail "the kernel echo server did not start"
      for _ in $(seq 100); do grep -q "echo on" "$work/echo6.out" && break; sleep 0.05; done
      grep -q "echo on" "$work/echo6.out" || fail "the kernel IPv6 echo server did not start"
      for _ in $(seq 100); do
        ip netns exec "$ns_l" ss -Hltn "sport = :80" | grep -q LISTEN && break
        sleep 0.05
      done
      if has_family 4; then
        ip netns exec "$ns_c" /usr/bin/python3 "$HERE/run.py" --target linux --iface vc \
          --ethernet 02:00:00:00:98:01 02:00:00:00:98:09 --src 169.254.152.2 \
          --dst 169.254.152.9 --flood-src 169.254.152.3 "${case_args[@]}" || status=1
      fi
      if has_family 6; then
        ip netns exec "$ns_c" /usr/bin/python3 "$HERE/run.py" --target linux --iface vc \
          --ethernet 02:00:00:00:98:01 02:00:00:00:98:09 --src fd00:7474:152::2 \
          --dst fd00:7474:152::9 --flood-src fd00:7474:152::3 "${case_args[@]}" || status=1
      fi
      kill "$echo_pid" "$echo6_pid" "$http_pid"
      wait "$echo_pid" "$echo6_pid" "$http_pid" 2>/dev/null || true
      echo_pid=""
      echo6_pid=""
      http_pid=""
      ip netns del "$ns_c"
      ip netns del "$ns_l"
      ;;
    tinytcp)
      # One tt-serve per family: its listener takes both, so the IPv4 SYN
      # flood's half-open connections would otherwise put the IPv6 cases
      # behind SYN cookies (and the IPv6 flood the IPv4 ones).
      ./scripts/tun.sh start 151 --netns "$ns_tt" >/dev/null
      for family in $families; do
        case "$family" in
          4) addrs=(--src 169.254.151.2 --dst 169.254.151.9 --flood-src 169.254.151.3) ;;
          6) addrs=(--src fd00:7474:151::2 --dst fd00:7474:151::9 --flood-src fd00:7474:151::3) ;;
          *) fail "unknown family $family (4 or 6)" ;;
        esac
        pcap=()
        [ -n "${CRAFTED_PCAP:-}" ] && pcap=(--pcap "$CRAFTED_PCAP.$family")
        : >"$work/serve.err"
        ip netns exec "$ns_tt" "$BIN/tt-serve" --dev tun151 --echo 7 --http "$work/www" \
          "${pcap[@]}" >"$work/serve.out" 2>"$work/serve.err" &
        serve_pid=$!
        for _ in $(seq 200); do grep -q "serving on" "$work/serve.err" && break; sleep 0.05; done
        grep -q "serving on" "$work/serve.err" || fail "tt-serve did not start"
        ip netns exec "$ns_tt" /usr/bin/python3 "$HERE/run.py" --target tinytcp --iface tun151 \
          "${addrs[@]}" "${case_args[@]}" || status=1
        kill -0 "$serve_pid" 2>/dev/null || fail "tt-serve died during the suite"
        kill "$serve_pid"
        wait "$serve_pid" || fail "tt-serve exit status"
        serve_pid=""
        cat "$work/serve.out"
      done
      ip netns del "$ns_tt"
      ;;
    *) fail "unknown target $target (linux or tinytcp)" ;;
  esac
done
exit "$status"
