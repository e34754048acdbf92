#!/usr/bin/env bash
# The plain-TUN ceiling of issue 16, next to tinytcp and kernel TCP, in ONE
# run, interleaved trial by trial (medians of --trials):
#
#   bench-tun-ceiling.sh [--bytes 512M] [--trials 3] [--out docs/data/tun_ceiling.csv]
#
#   ceiling send:     tun_write_ceiling (one write(2) per 1460-byte segment,
#                     no stack) -> socat (kernel) on tun144
#   ceiling-uring send: the same WRITEs, each burst of up to 64 submitted in
#                     one io_uring_enter (tun_write_ceiling --io uring; left
#                     out when the build has no liburing)
#   ceiling receive:  socat (kernel) -> tun_read_ceiling (one read(2) per
#                     segment, ACK every second one, no stack)
#   ceiling-batch receive: the same, one ACK only when the device is empty
#                     (--ack-every 0: what tinytcp's ACK coalescing does, one
#                     ACK per event-loop pass)
#   ceiling-uring receive: one READ per segment as the ceiling row, but 64
#                     READs (RWF_NOWAIT) and the queued ACKs' WRITEs in one
#                     io_uring_enter (tun_read_ceiling --io uring, ACK every
#                     second segment; left out without liburing)
#   ceiling-uring-batch receive: the same, one ACK only when a batch found the
#                     device empty (--ack-every 0), as ceiling-batch
#   tinytcp plain:    tt-serve --dev tun144+nooffload+nouring (one read() or
#                     write() per packet, as the ceilings), as scripts/bench-tun.sh:
#                     receive socat -> --discard, send curl <- --http
#   tinytcp uring:    the same with --dev tun144+uring (io_uring reads and
#                     writes, a pass's writes and next reads in one enter: what
#                     tun144+nooffload does by default)
#   tinytcp offload:  the same with --dev tun144+offload
#   kernel:           socat -> socat over a veth pair (offloads off) between
#                     two namespaces
# MTU 1500 everywhere. Every row's seconds are the wall time of the command on
# the kernel side (or of tun_write_ceiling itself), as in bench-tun.sh; the
# ceiling tools also print their own timing and system time per packet, kept
# in the tool_gbps and sys_us_per_packet columns. A ceiling run that saw loss
# is void (empty gbps) and left out of the medians. Throwaway namespaces;
# needs root. CSV columns:
# path,direction,mtu,trial,bytes,seconds,gbps,tool_gbps,sys_us_per_packet
set -euo pipefail
cd "$(dirname "$0")/.."

bytes=512M
trials=3
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --bytes) bytes=$2; shift 2 ;;
    --trials) trials=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "bench-tun-ceiling: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" -eq 0 ] || { echo "bench-tun-ceiling: needs root" >&2; exit 1; }
n_bytes=$(numfmt --from=iec "$bytes") || { echo "bench-tun-ceiling: bad --bytes $bytes" >&2; exit 2; }
[[ "$trials" =~ ^[1-9][0-9]*$ ]] || { echo "bench-tun-ceiling: bad --trials $trials" >&2; exit 2; }

cmake --preset release >/dev/null
cmake --build --preset release --target tt-serve tun_write_ceiling tun_read_ceiling >/dev/null
BIN=$(pwd)/build/release/bin
NS="tt-btc-$$"
NS2="tt-btc2-$$"
WORK=$(mktemp -d /tmp/tt-bench-tun-ceiling.XXXXXX)
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  ip netns del "$NS" 2>/dev/null || true
  ip netns del "$NS2" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
ip netns add "$NS"
ip netns add "$NS2"
ip -n "$NS" link set lo up
ip -n "$NS2" link set lo up
ip link add ttbc-a netns "$NS" type veth peer name ttbc-b netns "$NS2"
ip -n "$NS" addr add 169.254.79.1/24 dev ttbc-a
ip -n "$NS2" addr add 169.254.79.2/24 dev ttbc-b
for pair in "$NS:ttbc-a" "$NS2:ttbc-b"; do
  ip netns exec "${pair%%:*}" ethtool -K "${pair#*:}" tso off gso off gro off >/dev/null 2>&1 || true
  ip -n "${pair%%:*}" link set "${pair#*:}" mtu 1500 up
done
./scripts/tun.sh start 144 --netns "$NS" >/dev/null
ip -n "$NS" link set tun144 mtu 1500
head -c "$n_bytes" /dev/zero >"$WORK/file.bin"

csv="path,direction,mtu,trial,bytes,seconds,gbps,tool_gbps,sys_us_per_packet"
now() { date +%s.%N; }
record() {  # path direction trial t0 t1 [tool_gbps sys_us]
  local seconds gbps
  seconds=$(python3 -c "print(f'{$5 - $4:.4f}')")
  gbps=$(python3 -c "print(f'{$n_bytes*8/$seconds/1e9:.3f}')")
  csv+=$'\n'"$1,$2,1500,$3,$n_bytes,$seconds,$gbps,${6:-},${7:-}"
  printf '%-19s %-8s trial %s: %s Gbit/s%s\n' "$1" "$2" "$3" "$gbps" "${6:+ (tool: $6 Gbit/s, $7 us system per packet)}"
}
record_void() {  # path direction trial reason
  csv+=$'\n'"$1,$2,1500,$3,$n_bytes,,,,"
  printf '%-19s %-8s trial %s: void (%s)\n' "$1" "$2" "$3" "$4"
}
field() { sed -n "s/.*\b$1=\([0-9.]*\).*/\1/p" "$2"; }  # key file

ceiling_send() {  # path io trial
  local path=$1 io=$2
  shift 2
  ip netns exec "$NS" socat -u TCP-LISTEN:5010,reuseaddr OPEN:/dev/null &
  local sink=$!
  PIDS+=("$sink")
  sleep 0.2
  local t0 t1 rc=0
  t0=$(now)
  ip netns exec "$NS" "$BIN/tun_write_ceiling" --dev tun144 --port 5010 --bytes "$n_bytes" \
    --io "$io" >"$WORK/ceil.out" 2>&1 || rc=$?
  t1=$(now)
  if [ "$rc" -ne 0 ]; then
    kill "$sink" 2>/dev/null || true
    wait "$sink" 2>/dev/null || true
    record_void "$path" send "$1" "$(tail -1 "$WORK/ceil.out")"
    return
  fi
  wait "$sink" || true
  record "$path" send "$1" "$t0" "$t1" "$(field gbps "$WORK/ceil.out")" \
    "$(field sys_us_per_write "$WORK/ceil.out")"
}
ceiling_receive() {  # path ack_every io trial
  local path=$1 ack_every=$2 io=$3
  shift 3
  ip netns exec "$NS" "$BIN/tun_read_ceiling" --dev tun144 --port 5011 --ack-every "$ack_every" \
    --io "$io" >"$WORK/ceil.out" 2>&1 &
  local tool=$!
  PIDS+=("$tool")
  sleep 0.2
  local t0 t1 rc=0
  t0=$(now)
  ip netns exec "$NS" socat -b 262144 -u OPEN:"$WORK/file.bin" TCP:169.254.144.9:5011,connect-timeout=5 || true
  t1=$(now)
  wait "$tool" || rc=$?
  if [ "$rc" -ne 0 ]; then
    record_void "$path" receive "$1" "$(tail -1 "$WORK/ceil.out")"
    return
  fi
  record "$path" receive "$1" "$t0" "$t1" "$(field gbps "$WORK/ceil.out")" \
    "$(field sys_us_per_read "$WORK/ceil.out")"
}
tinytcp() {  # mode trial
  local dev=tun144+nooffload+nouring path=tinytcp t0 t1
  [ "$1" = offload ] && dev=tun144+offload path=offload
  [ "$1" = uring ] && dev=tun144+uring path=uring
  ip netns exec "$NS" "$BIN/tt-serve" -q --dev "$dev" --discard 9 --http "$WORK" \
    >"$WORK/serve.out" 2>&1 &
  local serve=$!
  PIDS+=("$serve")
  sleep 0.5
  t0=$(now)
  ip netns exec "$NS" socat -b 262144 -u OPEN:"$WORK/file.bin" TCP:169.254.144.9:9
  t1=$(now)
  record "$path" receive "$2" "$t0" "$t1"
  t0=$(now)
  ip netns exec "$NS" curl -sS -o /dev/null http://169.254.144.9/file.bin
  t1=$(now)
  record "$path" send "$2" "$t0" "$t1"
  kill "$serve"
  wait "$serve" || true
}
kernel_veth() {  # trial
  ip netns exec "$NS2" socat -b 262144 -u TCP-LISTEN:5009,reuseaddr OPEN:/dev/null &
  local sink=$! t0 t1
  PIDS+=("$sink")
  sleep 0.2
  t0=$(now)
  ip netns exec "$NS" socat -b 262144 -u OPEN:"$WORK/file.bin" TCP:169.254.79.2:5009
  wait "$sink"
  t1=$(now)
  record kernel veth "$1" "$t0" "$t1"
}

uring=yes
if "$BIN/tun_write_ceiling" --io uring --dev '' 2>&1 | grep -q 'without liburing'; then
  uring=no
  echo "bench-tun-ceiling: built without liburing; no ceiling-uring row"
fi
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) CPUs)"
for trial in $(seq "$trials"); do
  ceiling_send ceiling write "$trial"
  if [ "$uring" = yes ]; then ceiling_send ceiling-uring uring "$trial"; fi
  ceiling_receive ceiling 2 read "$trial"
  if [ "$uring" = yes ]; then ceiling_receive ceiling-uring 2 uring "$trial"; fi
  ceiling_receive ceiling-batch 0 read "$trial"
  if [ "$uring" = yes ]; then ceiling_receive ceiling-uring-batch 0 uring "$trial"; fi
  tinytcp plain "$trial"
  if [ "$uring" = yes ]; then tinytcp uring "$trial"; fi
  tinytcp offload "$trial"
  kernel_veth "$trial"
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
python3 - "$csv" <<'PY'
import csv, io, statistics, sys
rows = list(csv.DictReader(io.StringIO(sys.argv[1])))
groups = {}
for r in rows:
    if r["gbps"]:
        groups.setdefault((r["path"], r["direction"]), []).append(float(r["gbps"]))
med = {k: statistics.median(v) for k, v in groups.items()}
kernel = med.get(("kernel", "veth"))
for (path, direction), m in sorted(med.items()):
    extra = ""
    if path != "kernel" and kernel:
        extra += f"  ({m / kernel:.2f} of kernel over veth)"
    for ceiling in ("ceiling", "ceiling-batch", "ceiling-uring", "ceiling-uring-batch"):
        if path in ("tinytcp", "uring") and med.get((ceiling, direction)):
            extra += f"  ({m / med[(ceiling, direction)]:.2f} of {ceiling})"
    print(f"median {path:19} {direction:8} {m:7.2f} Gbit/s"
          f" ({', '.join(f'{x:.2f}' for x in groups[(path, direction)])}){extra}")
PY
if [ -n "$out" ]; then
  mkdir -p "$(dirname "$out")"
  echo "$csv" >"$out"
fi
