#!/usr/bin/env bash
# Plain-TUN receive, per transfer: how many system calls tt-serve makes per
# packet it reads, and its CPU time per packet, so a slow and a fast transfer
# at the same settings can be told apart by what tt-serve did.
#
#   bench-tun-syscalls.sh [--bytes 512M] [--trials 6] [--dev tun146+nooffload+nouring] [--bin DIR]
#                         [--out FILE.csv]
#
# socat (kernel, CPU 1) writes --bytes into `tt-serve --discard` (CPU 0) on
# tun146 in a throwaway namespace, one transfer per trial, all into one
# tt-serve. Per transfer `perf stat` counts tt-serve's read, write, writev and
# epoll_pwait2 calls (tracepoints: the counts, not a slowed-down strace), and
# the tun146 counters the packets; tt-serve's user and system time come from
# /proc/PID/stat (10 ms ticks), the time stolen from CPU 0 by the hypervisor
# from /proc/stat. Prints one line per transfer; CSV columns:
# trial,gbps,packets_in,packets_out,reads,epolls,writes,reads_per_packet,
# epolls_per_packet,packets_per_wakeup,cpu_ns_per_packet,user_ns_per_packet,
# sys_ns_per_packet,cpu0_steal_ms
# Needs root and perf. Hold /tmp/locks/quiet while it runs.
set -euo pipefail
cd "$(dirname "$0")/.."

bytes=512M
trials=6
dev=tun146+nooffload+nouring  # read() per packet: io_uring reads are not counted here
bin=$(pwd)/build/release/bin
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --bytes) bytes=$2; shift 2 ;;
    --trials) trials=$2; shift 2 ;;
    --dev) dev=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "bench-tun-syscalls: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" -eq 0 ] || { echo "bench-tun-syscalls: needs root" >&2; exit 1; }
n_bytes=$(numfmt --from=iec "$bytes")
NS="tt-bts-$$"
WORK=$(mktemp -d /tmp/tt-bts.XXXXXX)
SERVE=""
cleanup() {
  [ -n "$SERVE" ] && kill "$SERVE" 2>/dev/null || true
  ip netns del "$NS" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
./scripts/tun.sh start 146 --netns "$NS" >/dev/null
ip -n "$NS" link set lo up
head -c "$n_bytes" /dev/zero >"$WORK/file.bin"
ip netns exec "$NS" taskset -c 0 "$bin/tt-serve" -q --dev "$dev" --discard 9 \
  >"$WORK/serve.out" 2>&1 &
SERVE=$!
sleep 0.5

counter() { ip netns exec "$NS" cat "/sys/class/net/tun146/statistics/$1"; }
events=syscalls:sys_enter_read,syscalls:sys_enter_write,syscalls:sys_enter_writev
events+=,syscalls:sys_enter_epoll_pwait2
csv="trial,gbps,packets_in,packets_out,reads,epolls,writes,reads_per_packet,epolls_per_packet"
csv+=",packets_per_wakeup,cpu_ns_per_packet,user_ns_per_packet,sys_ns_per_packet,cpu0_steal_ms"
# utime and stime of tt-serve, in clock ticks (fields 14 and 15 of stat).
times() { sed 's/.*) //' "/proc/$SERVE/stat" | cut -d' ' -f12,13; }
steal() { awk '$1 == "cpu0" {print $9}' /proc/stat; }
hz=$(getconf CLK_TCK)
for trial in $(seq "$trials"); do
  # The kernel's tx is what tt-serve reads; its rx what tt-serve wrote.
  tx0=$(counter tx_packets)
  rx0=$(counter rx_packets)
  c0=$(cut -d' ' -f1 "/proc/$SERVE/schedstat")
  read -r u0 s0 <<<"$(times)"
  st0=$(steal)
  perf stat -x, -e "$events" -p "$SERVE" -o "$WORK/perf.txt" &
  perf_pid=$!
  sleep 0.2
  t0=$(date +%s.%N)
  ip netns exec "$NS" taskset -c 1 socat -b 262144 -u OPEN:"$WORK/file.bin" \
    TCP4:169.254.146.9:9
  t1=$(date +%s.%N)
  sleep 0.05
  kill -INT "$perf_pid"
  wait "$perf_pid" || true
  c1=$(cut -d' ' -f1 "/proc/$SERVE/schedstat")
  read -r u1 s1 <<<"$(times)"
  st1=$(steal)
  tx1=$(counter tx_packets)
  rx1=$(counter rx_packets)
  line=$(python3 - "$WORK/perf.txt" "$n_bytes" "$t0" "$t1" $((tx1 - tx0)) $((rx1 - rx0)) \
    $((c1 - c0)) "$trial" $((u1 - u0)) $((s1 - s0)) $((st1 - st0)) "$hz" <<'PY'
import sys
path, n, t0, t1, pin, pout, cpu, trial, user, system, steal, hz = sys.argv[1:]
tick_ns = 1e9 / int(hz)
n, pin, pout, cpu = int(n), int(pin), int(pout), int(cpu)
count = {}
for line in open(path):
    f = line.strip().split(",")
    if len(f) > 2 and f[2].startswith("syscalls:"):
        count[f[2].split("sys_enter_")[1]] = int(f[0]) if f[0].isdigit() else 0
reads = count.get("read", 0)
epolls = count.get("epoll_pwait2", 0)
writes = count.get("write", 0) + count.get("writev", 0)
gbps = n * 8 / (float(t1) - float(t0)) / 1e9
print(f"{trial},{gbps:.3f},{pin},{pout},{reads},{epolls},{writes},{reads / pin:.3f},"
      f"{epolls / pin:.3f},{pin / max(epolls, 1):.2f},{cpu / pin:.0f},"
      f"{int(user) * tick_ns / pin:.0f},{int(system) * tick_ns / pin:.0f},{int(steal) * tick_ns / 1e6:.0f}")
PY
)
  csv+=$'\n'"$line"
  IFS=, read -r _ gbps pin pout reads epolls writes rpp epp ppw cpp upp spp stl <<<"$line"
  printf 'trial %s: %s Gbit/s, %s packets in, %s out; per packet in: %s reads, %s epoll waits, %s writes; %s packets per wake-up; CPU per packet %s ns (user %s, system %s); CPU 0 stolen %s ms\n' \
    "$trial" "$gbps" "$pin" "$pout" "$rpp" "$epp" \
    "$(python3 -c "print(f'{$writes/$pin:.3f}')")" "$ppw" "$cpp" "$upp" "$spp" "$stl"
done
kill "$SERVE"
wait "$SERVE" || true
SERVE=""
tail -n 2 "$WORK/serve.out"
if [ -n "$out" ]; then
  mkdir -p "$(dirname "$out")"
  echo "$csv" >"$out"
fi
