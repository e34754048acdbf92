#!/usr/bin/env bash
# Path MTU (issue 15 item 4): a 20 MiB HTTP download through a path whose
# narrow link is one router away from the server, so neither end's MSS hides it:
#
#   server --1500-- R --1400-- M --1500-- C (curl, advertises MSS 1460)
#
# The server is tt-serve on tun156 in R (tinytcp 169.254.156.9, R's kernel
# 169.254.156.1), or, for the Linux phase, python's http.server in a fourth
# namespace S on a 1500-byte veth with the same addresses. R and M forward. The
# server's 1500-byte DF datagrams cannot enter the R-M link:
#   frag-needed - R's kernel answers each with ICMP fragmentation-needed
#                 (next-hop MTU 1400): the server must lower its MSS (RFC 1191);
#   blackhole   - R drops those ICMPs (iptables OUTPUT), big datagrams vanish
#                 silently: the server must find out by itself (RFC 4821/8899).
# Linux phase first, asserted, so the test checks the path and not our reading
# of it: frag-needed completes and S's kernel caches PMTU 1400; blackhole
# completes with net.ipv4.tcp_mtu_probing=1 and stalls with 0. Then tinytcp:
# both cases complete (sha256 checked) within their bounds. In both phases a
# capture of the server's own link shows how (see judge below): after a
# frag-needed the quoted data leaves again, smaller, faster than any RTO; in
# the black hole no ICMP arrives and the first big segment's data leaves again
# smaller. R's iptables counters show that R really sent (or dropped) ICMPs.
# Usage: pmtu_test.sh BIN_DIR. PMTU_TARGETS="linux tinytcp" (default both)
# narrows a run. Skips (77) without root, fails under CI=true.
set -euo pipefail
BIN=$(cd "${1:?usage: $0 BIN_DIR}" && pwd)
cd "$(dirname "$0")/../.."

. tests/integration/lib.sh  # after the cd to the repository root
tt_require curl ethtool iptables sha256sum
[ -x /usr/bin/python3 ] || tt_skip "needs /usr/bin/python3"

targets=${PMTU_TARGETS:-linux tinytcp}
N=156                   # server link 169.254.156.0/24 (tun156 for tinytcp)
RM=169.254.157          # R .1 <-> M .2, MTU 1400
MC=169.254.158          # M .1 <-> C .2, MTU 1500
server=169.254.$N.9
size=$((20 * 1024 * 1024))
fragneeded_bound=30     # seconds, curl --max-time
blackhole_bound=60
stall_bound=10          # Linux without black-hole detection must not finish in this

tag="tt-pmtu-$$-$RANDOM"
work=$(mktemp -d /tmp/tt-pmtu.XXXXXX)
namespaces=()
pids=()
cleanup() {
  local p ns
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  for ns in "${namespaces[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  for f in "$work"/*.err; do [ -s "$f" ] && { echo "--- $f" >&2; tail -5 "$f" >&2; }; done
  exit 1
}

mkdir -p "$work/www"
head -c "$size" /dev/urandom >"$work/www/big.bin"
want=$(sha256sum <"$work/www/big.bin" | cut -d' ' -f1)

mkns() {
  ip netns add "$1"
  namespaces+=("$1")
  ip -n "$1" link set lo up
}
# veth NS1 DEV1 ADDR1/LEN NS2 DEV2 ADDR2/LEN MTU: offloads off, so every
# datagram crosses the link at its own size.
veth() {
  local mtu=$7 side
  ip -n "$1" link add "$2" type veth peer name "$5" netns "$4"
  for side in "$1 $2 $3" "$4 $5 $6"; do
    set -- $side
    ip -n "$1" link set "$2" mtu "$mtu"
    ip -n "$1" addr add "$3" dev "$2"
    ip netns exec "$1" ethtool -K "$2" tso off gso off gro off >/dev/null
    ip -n "$1" link set "$2" up
  done
}

# path PHASE: fresh namespaces R, M, C (and S for Linux), so no PMTU cache or
# iptables rule carries over from one phase to the next. Sets ns_r ns_m ns_c ns_s.
path() {
  ns_r="$tag-$1-r" ns_m="$tag-$1-m" ns_c="$tag-$1-c" ns_s="$tag-$1-s"
  mkns "$ns_r"
  mkns "$ns_m"
  mkns "$ns_c"
  veth "$ns_r" vm "$RM.1/24" "$ns_m" vr "$RM.2/24" 1400
  veth "$ns_m" vc "$MC.1/24" "$ns_c" vm "$MC.2/24" 1500
  ip netns exec "$ns_r" sysctl -qw net.ipv4.ip_forward=1
  ip netns exec "$ns_m" sysctl -qw net.ipv4.ip_forward=1
  ip -n "$ns_r" route add "$MC.0/24" via "$RM.2"
  ip -n "$ns_m" route add "169.254.$N.0/24" via "$RM.1"
  ip -n "$ns_c" route add default via "$MC.1"
}

# icmp_rule ACTION: counts (ACCEPT) or drops (DROP) the fragmentation-needed
# messages R's kernel sends; icmp_count prints how many it did.
icmp_rule() {
  ip netns exec "$ns_r" iptables -A OUTPUT -p icmp --icmp-type fragmentation-needed -j "$1"
}
icmp_count() {
  ip netns exec "$ns_r" iptables -nvxL OUTPUT |
    awk '/icmptype 3 code 4|fragmentation-needed/ {print $1; exit}'
}

wait_listen() {  # NS: until something listens on port 80 there
  for _ in $(seq 200); do
    ip netns exec "$1" ss -Hltn "sport = :80" | grep -q LISTEN && return 0
    sleep 0.05
  done
  return 1
}

# linux_server PHASE: S with 169.254.N.9 on a 1500-byte veth to R, kernel HTTP.
linux_server() {
  mkns "$ns_s"
  veth "$ns_s" vr "$server/24" "$ns_r" vs "169.254.$N.1/24" 1500
  ip -n "$ns_s" route add default via "169.254.$N.1"
  ip netns exec "$ns_s" /usr/bin/python3 -m http.server 80 --bind "$server" \
    --directory "$work/www" >"$work/http-$1.out" 2>"$work/http-$1.err" &
  pids+=($!)
  wait_listen "$ns_s" || fail "$1: the kernel HTTP server did not start"
}

serve_pid=""
tinytcp_server() {  # PHASE: tt-serve on tun156 in R
  ./scripts/tun.sh start "$N" --netns "$ns_r" >/dev/null
  ip netns exec "$ns_r" "$BIN/tt-serve" --dev "tun$N+nooffload" --http "$work/www" \
    >"$work/serve-$1.out" 2>"$work/serve-$1.err" &
  serve_pid=$!
  pids+=("$serve_pid")
  for _ in $(seq 200); do
    grep -q "serving on" "$work/serve-$1.err" && break
    sleep 0.05
  done
  grep -q "serving on" "$work/serve-$1.err" || fail "$1: tt-serve did not start"
}
stop_tinytcp() {  # PHASE: stop tt-serve, show and keep its summary
  kill "$serve_pid"
  wait "$serve_pid" || fail "$1: tt-serve exit status"
  serve_pid=""
  sed 's/^/    /' "$work/serve-$1.out"
  grep -q "connections" "$work/serve-$1.out" || fail "$1: no tt-serve summary"
}

# download PHASE BOUND: curl from C; sets got (bytes), secs, ok (1 if complete and right).
download() {
  local out="$work/dl-$1.bin" rc=0 w
  rm -f "$out"
  w=$(ip netns exec "$ns_c" curl -sS --max-time "$2" -o "$out" -w '%{size_download} %{time_total}' \
    "http://$server/big.bin" 2>"$work/curl-$1.err") || rc=$?
  got=${w%% *} secs=${w##* }
  ok=0
  if [ "$rc" -eq 0 ] && [ -f "$out" ] && [ "$(sha256sum <"$out" | cut -d' ' -f1)" = "$want" ]; then
    ok=1
  fi
  rm -f "$out"
  echo "    $1: curl exit $rc, $got of $size bytes in ${secs}s, frag-needed sent by R: $(icmp_count)"
}

# capture NS DEV PHASE: tcpdump on the server's own link (headers only), so what
# the server sent and received is judged from the wire, not from its counters.
cap_pid=""
capture() {
  ip netns exec "$1" tcpdump -i "$2" -n -s 128 -B 8192 -U -w "$work/$3.pcap" \
    >/dev/null 2>"$work/tcpdump-$3.err" &
  cap_pid=$!
  pids+=("$cap_pid")
  for _ in $(seq 200); do
    grep -q "listening on" "$work/tcpdump-$3.err" && return 0
    sleep 0.05
  done
  fail "$3: tcpdump did not start"
}
stop_capture() {
  kill -INT "$cap_pid"
  wait "$cap_pid" || true
  cap_pid=""
}

# judge PHASE frag-needed|blackhole: reads the capture of the server's link.
#   frag-needed: every frag-needed the server got says next-hop MTU 1400, and
#     the data the first one quotes leaves again in a datagram of at most 1400
#     bytes within 100 ms of it: faster than any retransmission timeout (200 ms
#     minimum, Linux and tinytcp), so it was the ICMP that did it (RFC 1191);
#     no datagram over 1400 bytes leaves after that.
#   blackhole: the server got no frag-needed at all, sent datagrams over 1400
#     bytes, and the data of the first one left again in at most 1400 bytes.
judge() {
  /usr/bin/python3 - "$work/$1.pcap" "$2" "$server" <<'EOF'
import socket, struct, sys

path, mode, server = sys.argv[1], sys.argv[2], socket.inet_aton(sys.argv[3])
NARROW = 1400
with open(path, "rb") as f:
    data = f.read()
magic = struct.unpack("<I", data[:4])[0]
end = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
nano = struct.unpack(end + "I", data[:4])[0] in (0xA1B23C4D,)
linktype = struct.unpack(end + "I", data[20:24])[0] & 0x0FFFFFFF
off = {1: 14, 101: 0, 12: 0, 14: 0, 113: 16, 276: 20}[linktype]
icmps = []  # (time, next-hop mtu, quoted seq)
sent = []   # (time, ip total length, seq, payload length) of server data
pos = 24
while pos + 16 <= len(data):
    sec, frac, incl, _ = struct.unpack(end + "IIII", data[pos:pos + 16])
    pkt = data[pos + 16:pos + 16 + incl]
    pos += 16 + incl
    t = sec + frac / (1e9 if nano else 1e6)
    if linktype == 1 and pkt[12:14] != b"\x08\x00":
        continue
    ip = pkt[off:]
    if len(ip) < 20 or ip[0] >> 4 != 4:
        continue
    ihl = (ip[0] & 15) * 4
    total = struct.unpack("!H", ip[2:4])[0]
    proto, src, dst = ip[9], ip[12:16], ip[16:20]
    l4 = ip[ihl:]
    if proto == 1 and dst == server and len(l4) >= 8 and l4[0] == 3 and l4[1] == 4:
        inner = l4[8:]
        iihl = (inner[0] & 15) * 4
        seq = struct.unpack("!I", inner[iihl + 4:iihl + 8])[0]
        icmps.append((t, struct.unpack("!H", l4[6:8])[0], seq))
    elif proto == 6 and src == server and len(l4) >= 20:
        seq = struct.unpack("!I", l4[4:8])[0]
        length = total - ihl - (l4[12] >> 4) * 4
        if length > 0:
            sent.append((t, total, seq, length))

big = [s for s in sent if s[1] > NARROW]
print(f"    capture: {len(sent)} data datagrams sent, {len(big)} over {NARROW} bytes, "
      f"{len(icmps)} frag-needed received (next-hop MTU {sorted({i[1] for i in icmps})})")
def covers(s, q):
    return (q - s[2]) % 2**32 < s[3]
errors = []
if mode == "frag-needed":
    if not icmps:
        errors.append("the server received no frag-needed")
    elif any(i[1] != NARROW for i in icmps):
        errors.append(f"a frag-needed did not say {NARROW}")
    else:
        t1, _, q = icmps[0]
        again = [s for s in sent if s[0] >= t1 and s[1] <= NARROW and covers(s, q)]
        if not again:
            errors.append(f"the quoted data (seq {q}) never left again in <= {NARROW} bytes")
        else:
            delay = again[0][0] - t1
            print(f"    capture: quoted data sent again in {again[0][1]} bytes "
                  f"{delay * 1000:.1f} ms after the first frag-needed")
            if delay >= 0.1:
                errors.append(f"the quoted data left again only {delay * 1000:.0f} ms after the ICMP")
        late = [s for s in big if s[0] > t1 + 0.1]
        if late:
            errors.append(f"{len(late)} datagrams over {NARROW} bytes sent more than 100 ms after the first frag-needed")
elif mode == "blackhole":
    if icmps:
        errors.append(f"the server received {len(icmps)} frag-needed: no black hole")
    if not big:
        errors.append(f"the server never sent a datagram over {NARROW} bytes")
    else:
        t0, _, q, _ = big[0]
        again = [s for s in sent if s[0] > t0 and s[1] <= NARROW and covers(s, q)]
        if not again:
            errors.append(f"the data of the first big datagram (seq {q}) never left again "
                          f"in <= {NARROW} bytes")
        else:
            print(f"    capture: the data of the first big datagram sent again in "
                  f"{again[0][1]} bytes {(again[0][0] - t0) * 1000:.0f} ms after it")
for e in errors:
    print(f"    capture: {e}", file=sys.stderr)
sys.exit(1 if errors else 0)
EOF
}

# pmtu_cached: the PMTU S's kernel holds for C ("" if none).
pmtu_cached() {
  ip -n "$ns_s" route get "$MC.2" | grep -o 'mtu [0-9]*' | cut -d' ' -f2 || true
}

status=0
for target in $targets; do
  case "$target" in
    linux)
      echo "--- linux: frag-needed (kernel TCP honours ICMP, RFC 1191)"
      path lf
      linux_server lf
      icmp_rule ACCEPT
      capture "$ns_s" vr linux-fragneeded
      download linux-fragneeded "$fragneeded_bound"
      stop_capture
      judge linux-fragneeded frag-needed || fail "linux frag-needed: capture (above)"
      [ "$ok" = 1 ] || fail "linux frag-needed: the download did not complete"
      [ "$(icmp_count)" -gt 0 ] || fail "linux frag-needed: R sent no frag-needed: the path is not narrow"
      [ "$(pmtu_cached)" = 1400 ] ||
        fail "linux frag-needed: S's kernel did not learn PMTU 1400 ($(ip -n "$ns_s" route get "$MC.2"))"

      echo "--- linux: blackhole, tcp_mtu_probing=0 (no detection: must stall)"
      path l0
      linux_server l0
      ip netns exec "$ns_s" sysctl -qw net.ipv4.tcp_mtu_probing=0
      icmp_rule DROP
      download linux-blackhole-0 "$stall_bound"
      [ "$ok" = 0 ] || fail "linux blackhole without probing completed: the path is no black hole"
      [ "${got:-0}" -lt $((size / 2)) ] || fail "linux blackhole without probing moved $got bytes"
      [ "$(icmp_count)" -gt 0 ] || fail "linux blackhole: R dropped no frag-needed"
      [ -z "$(pmtu_cached)" ] || fail "linux blackhole: S learned a PMTU: an ICMP got through"

      echo "--- linux: blackhole, tcp_mtu_probing=1 (black-hole detection)"
      path l1
      linux_server l1
      ip netns exec "$ns_s" sysctl -qw net.ipv4.tcp_mtu_probing=1
      icmp_rule DROP
      capture "$ns_s" vr linux-blackhole-1
      download linux-blackhole-1 "$blackhole_bound"
      stop_capture
      judge linux-blackhole-1 blackhole || fail "linux blackhole: capture (above)"
      [ "$ok" = 1 ] || fail "linux blackhole with tcp_mtu_probing=1: the download did not complete"
      [ "$(icmp_count)" -gt 0 ] || fail "linux blackhole: R dropped no frag-needed"
      [ -z "$(pmtu_cached)" ] || fail "linux blackhole: S learned a PMTU: an ICMP got through"
      ;;
    tinytcp)
      echo "--- tinytcp: frag-needed"
      path tf
      tinytcp_server tf
      icmp_rule ACCEPT
      capture "$ns_r" "tun$N" tinytcp-fragneeded
      download tinytcp-fragneeded "$fragneeded_bound"
      frag_ok=$ok frag_icmp=$(icmp_count)
      stop_capture
      stop_tinytcp tf
      if [ "$frag_ok" != 1 ]; then
        echo "FAIL: tinytcp frag-needed: the download did not complete within ${fragneeded_bound}s" >&2
        status=1
      fi
      if ! judge tinytcp-fragneeded frag-needed; then
        echo "FAIL: tinytcp frag-needed: capture (above)" >&2
        status=1
      fi
      [ "$frag_icmp" -gt 0 ] || fail "tinytcp frag-needed: R sent no frag-needed: the path is not narrow"
      if ! grep -Eq "tt-serve: [1-9][0-9]* frag-needed ICMPs believed" "$work/serve-tf.out"; then
        echo "FAIL: tinytcp frag-needed: tt-serve believed no frag-needed ICMP" >&2
        status=1
      fi

      echo "--- tinytcp: blackhole"
      path tb
      tinytcp_server tb
      icmp_rule DROP
      capture "$ns_r" "tun$N" tinytcp-blackhole
      download tinytcp-blackhole "$blackhole_bound"
      hole_ok=$ok hole_icmp=$(icmp_count)
      stop_capture
      stop_tinytcp tb
      if [ "$hole_ok" != 1 ]; then
        echo "FAIL: tinytcp blackhole: the download did not complete within ${blackhole_bound}s" >&2
        status=1
      fi
      if ! judge tinytcp-blackhole blackhole; then
        echo "FAIL: tinytcp blackhole: capture (above)" >&2
        status=1
      fi
      [ "$hole_icmp" -gt 0 ] || fail "tinytcp blackhole: R dropped no frag-needed: no big datagrams"
      ;;
    *) fail "unknown target $target" ;;
  esac
done
[ "$status" -eq 0 ] || exit 1
echo "1 passed, 0 failed"
