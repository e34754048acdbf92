#!/usr/bin/env bash
# One TCP connection through a TUN device, both directions, against kernel TCP
# over a veth pair (offloads off) measured in the same run for the ratio.
#
#   bench-tun.sh [--bytes 1G] [--mtu "1500 9000"] [--trials 3] [--modes "plain offload"]
#                [--family "4 6"] [--loss 1%] [--cc reno|cubic|bbr|...] [--pin] [--out FILE.csv]
#                [--bin DIR] [--syscalls]
#
#   tinytcp receives: socat (kernel) -> tt-serve --discard on tun144
#   tinytcp sends:    curl (kernel) downloads a file from tt-serve --http on tun144
#   kernel baseline:  socat -> socat across a veth pair between two namespaces
# Modes: plain (--dev tun144+nooffload+nouring: one read() or write() per
# packet, path "tinytcp") and offload (--dev tun144+offload: IFF_VNET_HDR, GSO
# super-packets in, TSO out, path "offload"; what a plain tun144 gets by
# default where the kernel has it) and uring (--dev tun144+uring: plain
# packets, each loop pass's writes in one io_uring_enter and reads up to 64
# per io_uring_enter, path "uring"; what tun144+nooffload does by default).
# --loss drops that share of the packets each way at random: on
# the kernel side by iptables (statistic match on INPUT of tun144 and of both
# veth ends), on ours by the impairment stage on what we receive
# (--impair-in loss=P), so every direction loses P once. In offload mode a
# super-packet is one packet to both. Everything runs in throwaway
# namespaces. --family: 4 (the default), 6, or "4 6": the tinytcp runs over
# IPv4 (169.254.144.9), IPv6 (fd00:7474:144::9) or both, interleaved within
# one tt-serve per trial, and the summary then gives the IPv6/IPv4 ratio per
# mode and direction (the kernel's veth baseline stays IPv4); the order of the
# families alternates from trial to trial, and the ratio is the median of the
# per-trial ratios. --pin: tt-serve (and the kernel sink) on CPU 0, the
# kernel peer (socat, curl) on CPU 1, so the scheduler's placement does not
# add its own spread to a ratio (needs 2 CPUs). --bin DIR: the tt-serve of
# DIR (e.g. a copy of an older build, for before and after) instead of
# building build/release. --syscalls: `perf stat` counts tt-serve's system
# calls during each transfer (raw_syscalls:sys_enter, a tracepoint count;
# io_uring_enter is one of them) and the summary gives them per MiB. Needs root.
# Prints Gbit/s per trial and the median; CSV columns:
# path,direction,mtu,trial,bytes,seconds,gbps,loss,family,serve_cpu_ns_per_mib,
# serve_syscalls_per_mib
set -euo pipefail
cd "$(dirname "$0")/.."

bytes=1G
mtus="1500 9000"
trials=3
modes="plain offload"
families="4"
loss=""
cc=""
out=""
pin_serve=()
pin_peer=()
bin=""
syscalls=0
while [ $# -gt 0 ]; do
  case "$1" in
    --bytes) bytes=$2; shift 2 ;;
    --mtu) mtus=$2; shift 2 ;;
    --trials) trials=$2; shift 2 ;;
    --modes) modes=$2; shift 2 ;;
    --family) families=$2; shift 2 ;;
    --loss) loss=$2; shift 2 ;;
    --cc) cc=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --pin) pin_serve=(taskset -c 0); pin_peer=(taskset -c 1); shift ;;
    --bin) bin=$2; shift 2 ;;
    --syscalls) syscalls=1; shift ;;
    *) echo "bench-tun: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" -eq 0 ] || { echo "bench-tun: needs root" >&2; exit 1; }
n_bytes=$(numfmt --from=iec "$bytes")
for mode in $modes; do
  case "$mode" in
    plain | offload | uring) ;;
    *) echo "bench-tun: unknown mode $mode (plain, offload, uring)" >&2; exit 2 ;;
  esac
done
for family in $families; do
  case "$family" in
    4 | 6) ;;
    *) echo "bench-tun: unknown family $family (4, 6)" >&2; exit 2 ;;
  esac
done
impair=()
if [ -n "$loss" ]; then
  probability=$(python3 -c "
s = '$loss'
p = float(s[:-1]) / 100 if s.endswith('%') else float(s)
assert 0 <= p < 1
print(p)") || { echo "bench-tun: bad --loss $loss (e.g. 1% or 0.01)" >&2; exit 2; }
  impair=(--impair-in "loss=$loss")
fi

if [ -n "$bin" ]; then
  BIN=$(cd "$bin" && pwd)
else
  cmake --preset release >/dev/null
  cmake --build --preset release --target tt-serve >/dev/null
  BIN=$(pwd)/build/release/bin
fi
NS="tt-bt-$$"
NS2="tt-bt2-$$"
WORK=$(mktemp -d /tmp/tt-bench-tun.XXXXXX)
SERVE=""
PERF=""
cleanup() {
  [ -n "$PERF" ] && kill "$PERF" 2>/dev/null || true
  [ -n "$SERVE" ] && kill "$SERVE" 2>/dev/null || true
  ip netns del "$NS" 2>/dev/null || true
  ip netns del "$NS2" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
ip netns add "$NS"
ip netns add "$NS2"
ip -n "$NS" link set lo up
ip -n "$NS2" link set lo up
ip link add ttbt-a netns "$NS" type veth peer name ttbt-b netns "$NS2"
ip -n "$NS" addr add 169.254.78.1/24 dev ttbt-a
ip -n "$NS2" addr add 169.254.78.2/24 dev ttbt-b
for pair in "$NS:ttbt-a" "$NS2:ttbt-b"; do
  ip netns exec "${pair%%:*}" ethtool -K "${pair#*:}" tso off gso off gro off >/dev/null 2>&1 || true
  ip -n "${pair%%:*}" link set "${pair#*:}" up
done
./scripts/tun.sh start 144 --netns "$NS" >/dev/null
if [ -n "$loss" ]; then
  # Only inside the throwaway namespaces; gone with them.
  for rule in "$NS:tun144" "$NS:ttbt-a" "$NS2:ttbt-b"; do
    ip netns exec "${rule%%:*}" iptables -A INPUT -i "${rule#*:}" \
      -m statistic --mode random --probability "$probability" -j DROP
  done
  if [[ " $families " == *" 6 "* ]]; then
    ip netns exec "$NS" ip6tables -A INPUT -i tun144 \
      -m statistic --mode random --probability "$probability" -j DROP
  fi
fi
head -c "$n_bytes" /dev/zero >"$WORK/file.bin"

csv="path,direction,mtu,trial,bytes,seconds,gbps,loss,family,serve_cpu_ns_per_mib,serve_syscalls_per_mib"
record() {  # path direction mtu trial seconds [family [serve_cpu_ns [serve_syscalls]]]
  local gbps per_mib="" calls_per_mib=""
  gbps=$(python3 -c "print(f'{$n_bytes*8/$5/1e9:.3f}')")
  [ -n "${7:-}" ] && per_mib=$(( $7 * 1048576 / n_bytes ))
  [ -n "${8:-}" ] && calls_per_mib=$(python3 -c "print(f'{$8 * 1048576 / $n_bytes:.1f}')")
  csv+=$'\n'"$1,$2,$3,$4,$n_bytes,$5,$gbps,${loss:-0},${6:-4},$per_mib,$calls_per_mib"
  printf '%-8s %-8s mtu %-5s trial %s IPv%s: %s Gbit/s\n' "$1" "$2" "$3" "$4" "${6:-4}" "$gbps"
}
start_serve() {  # mode
  local dev=tun144+nooffload+nouring
  [ "$1" = offload ] && dev=tun144+offload
  [ "$1" = uring ] && dev=tun144+uring
  ip netns exec "$NS" "${pin_serve[@]}" "$BIN/tt-serve" -q --dev "$dev" "${impair[@]}" ${cc:+--cc "$cc"} --discard 9 \
    --http "$WORK" >"$WORK/serve.out" 2>&1 &
  SERVE=$!
  sleep 0.5
}
stop_serve() {
  kill "$SERVE"
  wait "$SERVE" || true
  SERVE=""
}
elapsed() { python3 -c "print(f'{$2 - $1:.4f}')"; }
# tt-serve's time on a CPU so far, in ns (the first field of schedstat):
# the work per byte, which the scheduler's placement does not change as it
# changes a transfer's wall-clock time.
serve_cpu() { cut -d' ' -f1 "/proc/$SERVE/schedstat"; }
# With --syscalls: perf stat counts tt-serve's system calls from here to
# count_stop, which leaves the count in CALLS (empty without --syscalls).
CALLS=""
count_start() {
  [ "$syscalls" = 1 ] || return 0
  perf stat -x, -e raw_syscalls:sys_enter -p "$SERVE" -o "$WORK/perf.out" &
  PERF=$!
  sleep 0.2
}
count_stop() {
  CALLS=""
  [ "$syscalls" = 1 ] || return 0
  kill -INT "$PERF"
  wait "$PERF" || true
  PERF=""
  CALLS=$(awk -F, '/raw_syscalls/ {print $1}' "$WORK/perf.out")
}

echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) CPUs)"
for mtu in $mtus; do
  ip -n "$NS" link set tun144 mtu "$mtu"
  ip -n "$NS" link set ttbt-a mtu "$mtu"
  ip -n "$NS2" link set ttbt-b mtu "$mtu"
  for trial in $(seq "$trials"); do
    for mode in $modes; do
      path=tinytcp
      [ "$mode" = offload ] && path=offload
      [ "$mode" = uring ] && path=uring
      start_serve "$mode"
      order=$families
      if [ $((trial % 2)) -eq 0 ]; then
        order=$(echo "$families" | tr ' ' '\n' | tac | tr '\n' ' ')
      fi
      for family in $order; do
        socat_to=TCP4:169.254.144.9:9
        url=http://169.254.144.9/file.bin
        if [ "$family" = 6 ]; then
          socat_to=TCP6:[fd00:7474:144::9]:9
          url=http://[fd00:7474:144::9]/file.bin
        fi
        count_start
        c0=$(serve_cpu)
        t0=$(date +%s.%N)
        ip netns exec "$NS" "${pin_peer[@]}" socat -b 262144 -u OPEN:"$WORK/file.bin" "$socat_to"
        t1=$(date +%s.%N)
        c1=$(serve_cpu)
        count_stop
        record "$path" receive "$mtu" "$trial" "$(elapsed "$t0" "$t1")" "$family" \
          $((c1 - c0)) $CALLS
        count_start
        c0=$(serve_cpu)
        t0=$(date +%s.%N)
        ip netns exec "$NS" "${pin_peer[@]}" curl -sS -g -o /dev/null "$url"
        t1=$(date +%s.%N)
        c1=$(serve_cpu)
        count_stop
        record "$path" send "$mtu" "$trial" "$(elapsed "$t0" "$t1")" "$family" $((c1 - c0)) \
          $CALLS
      done
      stop_serve
    done
    ip netns exec "$NS2" "${pin_serve[@]}" socat -b 262144 -u TCP-LISTEN:5009,reuseaddr OPEN:/dev/null &
    sink=$!
    sleep 0.2
    t0=$(date +%s.%N)
    ip netns exec "$NS" "${pin_peer[@]}" socat -b 262144 -u OPEN:"$WORK/file.bin" TCP:169.254.78.2:5009
    wait "$sink"
    t1=$(date +%s.%N)
    record kernel veth "$mtu" "$trial" "$(elapsed "$t0" "$t1")"
  done
done

echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
python3 - "$csv" <<'PY'
import csv, io, statistics, sys
rows = list(csv.DictReader(io.StringIO(sys.argv[1])))
groups = {}
for r in rows:
    key = (r["mtu"], r["path"], r["direction"], r["family"])
    groups.setdefault(key, []).append(float(r["gbps"]))
lossy = f"  loss {rows[0]['loss']}" if rows[0]["loss"] != "0" else ""
for mtu in sorted({k[0] for k in groups}, key=int):
    kernel = statistics.median(groups.get((mtu, "kernel", "veth", "4"), [0]))
    for (m, path, direction, family), v in sorted(groups.items()):
        if m != mtu:
            continue
        med = statistics.median(v)
        ratio = f"  ({med / kernel:.2f} of kernel over veth)" if kernel and path != "kernel" else ""
        print(f"median mtu {mtu:>5} {path:8} {direction:8} IPv{family} {med:7.2f} Gbit/s{ratio}{lossy}")
    # Paired: IPv6 over IPv4 within each trial (one tt-serve), then the median.
    by_trial = {}
    for r in rows:
        if r["mtu"] == mtu and r["path"] != "kernel":
            key = (r["path"], r["direction"], r["trial"])
            by_trial.setdefault(key, {})[r["family"]] = float(r["gbps"])
    ratios = {}
    for (path, direction, _), v in by_trial.items():
        if "4" in v and "6" in v:
            ratios.setdefault((path, direction), []).append(v["6"] / v["4"])
    for (path, direction), v in sorted(ratios.items()):
        r = statistics.median(v)
        print(f"IPv6/IPv4 mtu {mtu:>5} {path:8} {direction:8} {r:.3f} ({(r - 1) * 100:+.1f} %)"
              f"  median of {len(v)} trials, {min(v):.3f}-{max(v):.3f}")
    # tt-serve's CPU time per MiB (schedstat), the same pairing: IPv4's over
    # IPv6's, so above 1 is IPv6 cheaper, as for the throughput ratio.
    cpu = {}
    for r in rows:
        if r["mtu"] == mtu and r["serve_cpu_ns_per_mib"]:
            key = (r["path"], r["direction"], r["trial"])
            cpu.setdefault(key, {})[r["family"]] = float(r["serve_cpu_ns_per_mib"])
    cpu_ratios = {}
    for (path, direction, _), v in cpu.items():
        cpu_ratios.setdefault((path, direction, "4"), []).append(v.get("4"))
        cpu_ratios.setdefault((path, direction, "6"), []).append(v.get("6"))
        if "4" in v and "6" in v:
            cpu_ratios.setdefault((path, direction, "r"), []).append(v["4"] / v["6"])
    for (path, direction, what), v in sorted(cpu_ratios.items()):
        v = [x for x in v if x is not None]
        if what == "r":
            print(f"IPv4/IPv6 tt-serve CPU per MiB mtu {mtu:>5} {path:8} {direction:8} "
                  f"{statistics.median(v):.3f}  median of {len(v)} trials, {min(v):.3f}-{max(v):.3f}")
        elif v:
            print(f"tt-serve CPU per MiB mtu {mtu:>5} {path:8} {direction:8} IPv{what} "
                  f"{statistics.median(v) / 1000:.0f} us")
    calls = {}
    for r in rows:
        if r["mtu"] == mtu and r.get("serve_syscalls_per_mib"):
            calls.setdefault((r["path"], r["direction"], r["family"]), []).append(
                float(r["serve_syscalls_per_mib"]))
    for (path, direction, family), v in sorted(calls.items()):
        print(f"tt-serve system calls per MiB mtu {mtu:>5} {path:8} {direction:8} IPv{family} "
              f"{statistics.median(v):.0f}  median of {len(v)}")
PY
if [ -n "$out" ]; then
  mkdir -p "$(dirname "$out")"
  echo "$csv" >"$out"
fi
