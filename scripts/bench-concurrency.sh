#!/usr/bin/env bash
# Many senders to one file-recv: aggregate goodput, fairness and memory per
# session, for tinytcp in the UDP tunnel and kernel TCP in the same run, as CSV.
#
#   bench-concurrency.sh [--senders "1 4 16 64"] [--loss "0 5"] [--size 10M]
#                        [--trials 3] [--transports "udp kernel"] [--out FILE]
#
# The senders run in one throwaway namespace and the receiver in another
# (scripts/netns-loss.sh: a veth pair, kernel-level random loss each way with
# iptables on INPUT). The receiver runs on CPU 0 and every sender on CPU 1
# (taskset), as if the senders were other machines: otherwise 64 user-space
# senders would take the receiver's CPU time away from it. A fresh receiver
# (no --once) serves the trials of each transport, loss and N; each trial
# starts N file-send processes at once, each with its own file, and ends when
# the last one exits.
# Columns: transport,loss_percent,senders,trial,seconds,aggregate_MBps,
#          min_MBps,max_MBps,jain,completed,receiver_rss_kib,rss_per_session_kib
#   seconds         first sender started to last sender finished
#   aggregate_MBps  senders x size / seconds
#   jain            Jain's fairness index of the senders' own goodputs
#                   ((sum x)^2 / (n sum x^2)); 1 is perfectly fair
#   receiver_rss    file-recv's peak RSS (VmHWM) so far, its trials of this
#                   transport, loss and N; per session: (peak - RSS at start) / N
set -euo pipefail
cd "$(dirname "$0")/.."

senders_list="1 4 16 64"
losses="0 5"
size=10M
trials=3
transports="udp kernel"
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --senders) senders_list=$2; shift 2 ;;
    --loss) losses=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --trials) trials=$2; shift 2 ;;
    --transports) transports=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "bench-concurrency: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" -eq 0 ] || { echo "bench-concurrency: needs root (network namespaces)" >&2; exit 1; }

BIN=${TT_BIN:-build/release/bin}
if [ -z "${TT_BIN:-}" ]; then
  [ -x "$BIN/file-send" ] || cmake --preset release >/dev/null
  cmake --build --preset release --target file-send file-recv >/dev/null
fi

TAG="bc$$"
TAG=${TAG:0:8}
WORK=$(mktemp -d /tmp/tt-bench-conc.XXXXXX)
RECV_PID=""
cleanup() {
  [ -n "$RECV_PID" ] && kill "$RECV_PID" 2>/dev/null || true
  ./scripts/netns-loss.sh down "$TAG"
  rm -rf "$WORK"
}
trap cleanup EXIT
./scripts/netns-loss.sh up "$TAG" 0
NS_A="tt-$TAG-a"
NS_B="tt-$TAG-b"
RECV_ADDR=169.254.77.2
PORT=9000
bytes=$(numfmt --from=iec "$size")
max_senders=0
for n in $senders_list; do [ "$n" -gt "$max_senders" ] && max_senders=$n; done
for i in $(seq "$max_senders"); do
  head -c "$bytes" /dev/urandom >"$WORK/in-$i.bin"
done

exec 3>&1
if [ -n "$out" ]; then
  mkdir -p "$(dirname "$out")"
  exec 3>"$out"
fi
echo "transport,loss_percent,senders,trial,seconds,aggregate_MBps,min_MBps,max_MBps,jain,completed,receiver_rss_kib,rss_per_session_kib" >&3

start_receiver() {  # transport
  rm -rf "$WORK/out"
  mkdir -p "$WORK/out"
  ip netns exec "$NS_B" taskset -c 0 "$BIN/file-recv" --listen "$PORT" --output "$WORK/out" \
    --transport "$1" --max-sessions 256 --idle-timeout 60 -q \
    >"$WORK/recv.out" 2>"$WORK/recv.err" &
  RECV_PID=$!
  sleep 0.5
  kill -0 "$RECV_PID" || { echo "file-recv did not start: $(cat "$WORK/recv.err")" >&2; exit 1; }
  base_rss=$(awk '/VmRSS/ {print $2}' "/proc/$RECV_PID/status")
}
stop_receiver() {
  kill "$RECV_PID"
  wait "$RECV_PID" 2>/dev/null || true
  RECV_PID=""
}

for transport in $transports; do
  for loss in $losses; do
    ./scripts/netns-loss.sh loss "$TAG" "$loss"
    for n in $senders_list; do
      start_receiver "$transport"
      for trial in $(seq "$trials"); do
        rm -rf "$WORK/out"/* "$WORK"/send-*.json
        start=$(date +%s.%N)
        pids=()
        for i in $(seq "$n"); do
          ip netns exec "$NS_A" taskset -c 1 "$BIN/file-send" "$WORK/in-$i.bin" \
            --to "$RECV_ADDR:$PORT" --transport "$transport" --connect-timeout 30 \
            --idle-timeout 60 --json >"$WORK/send-$i.json" 2>"$WORK/send-$i.err" &
          pids+=($!)
        done
        completed=0
        for pid in "${pids[@]}"; do
          if wait "$pid"; then completed=$((completed + 1)); fi
        done
        end=$(date +%s.%N)
        rss=$(awk '/VmHWM/ {print $2}' "/proc/$RECV_PID/status")
        python3 - "$WORK" "$n" "$bytes" "$start" "$end" "$transport" "$loss" "$trial" \
          "$completed" "$rss" "$base_rss" >&3 <<'PY'
import json, sys
work, n, size, start, end = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
transport, loss, trial, completed, rss, base = sys.argv[6:12]
rates = []
for i in range(1, n + 1):
    try:
        s = json.loads(open(f"{work}/send-{i}.json").read().splitlines()[-1])
        rates.append(s["throughput_MBps"])
    except Exception:
        rates.append(0.0)
seconds = end - start
agg = n * size / seconds / 1e6
jain = sum(rates) ** 2 / (n * sum(r * r for r in rates)) if any(rates) else 0.0
per = (int(rss) - int(base)) / n
print(f"{transport},{loss},{n},{trial},{seconds:.3f},{agg:.2f},{min(rates):.2f},{max(rates):.2f},"
      f"{jain:.3f},{completed},{rss},{per:.0f}")
PY
      done
      stop_receiver
    done
  done
done
