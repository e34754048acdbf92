#!/usr/bin/env bash
# Goodput of file-send/file-recv against real kernel-level random loss, as CSV.
#
#   bench-loss.sh [--sizes "10M 100M"] [--loss "0 1 5 10 20 30 50"] [--trials 3]
#                 [--runs "kernel:cubic kernel:bbr udp:default tun:default"] [--timeout 120] [--out FILE]
#
# Each run is TRANSPORT:CC, TRANSPORT one of kernel (kernel TCP both ends), udp
# (tinytcp both ends, inside the UDP tunnel) or tun (tinytcp on a TUN device in
# the sender's namespace, forwarded to a kernel receiver), CC a congestion
# control of that transport or "default". Every trial gets a fresh output directory (so a
# failed trial's partial file cannot make the next one look faster) and is timed
# from the sender's process start to its verified exit. Runs inside two
# throwaway namespaces from scripts/netns-loss.sh; loss applies each way.
# Columns: transport,cc,size_bytes,loss_percent,trial,seconds,goodput_MBps,
#          completed,retransmits,efficiency
set -euo pipefail
cd "$(dirname "$0")/.."

sizes="10M"
losses="0 1 5 10 20 30 50"
trials=3
runs="kernel:cubic kernel:bbr udp:default tun:default"
timeout_s=120
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --sizes) sizes=$2; shift 2 ;;
    --loss) losses=$2; shift 2 ;;
    --trials) trials=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --timeout) timeout_s=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "bench-loss: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" -eq 0 ] || { echo "bench-loss: needs root (network namespaces)" >&2; exit 1; }

BIN=build/release/bin
if [ ! -x "$BIN/file-send" ]; then
  cmake --preset release >/dev/null
fi
cmake --build --preset release --target file-send file-recv >/dev/null

TAG="bl$$"
TAG=${TAG:0:8}
WORK=$(mktemp -d /tmp/tt-bench-loss.XXXXXX)
RECV_PID=""
cleanup() {
  [ -n "$RECV_PID" ] && kill "$RECV_PID" 2>/dev/null || true
  ./scripts/netns-loss.sh down "$TAG"
  rm -rf "$WORK"
}
trap cleanup EXIT
./scripts/netns-loss.sh up "$TAG" 0
TUN_N=144
./scripts/netns-loss.sh tun "$TAG" "$TUN_N"
NS_A="tt-$TAG-a"
NS_B="tt-$TAG-b"
PORT=9000

to_bytes() { numfmt --from=iec "$1"; }

exec 3>&1
if [ -n "$out" ]; then
  mkdir -p "$(dirname "$out")"
  exec 3>"$out"
fi
echo "transport,cc,size_bytes,loss_percent,trial,seconds,goodput_MBps,completed,retransmits,efficiency" >&3

for size in $sizes; do
  bytes=$(to_bytes "$size")
  file="$WORK/payload-$size.bin"
  head -c "$bytes" /dev/urandom >"$file"
  for loss in $losses; do
    ./scripts/netns-loss.sh loss "$TAG" "$loss"
    for run in $runs; do
      transport=${run%%:*}
      cc=${run#*:}
      for trial in $(seq "$trials"); do
        dest="$WORK/out"
        rm -rf "$dest"
        mkdir -p "$dest"
        recv_transport=$transport
        send_args=(--transport "$transport")
        case "$transport" in
          tun)
            recv_transport=kernel
            send_args+=(--dev "tun$TUN_N")
            ;;
          kernel | udp) ;;
          *) echo "bench-loss: unknown transport $transport" >&2; exit 2 ;;
        esac
        [ "$cc" != default ] && send_args+=(--cc "$cc")
        ip netns exec "$NS_B" "$BIN/file-recv" --listen "$PORT" --output "$dest" --once \
          --transport "$recv_transport" --idle-timeout "$timeout_s" \
          >"$WORK/recv.out" 2>"$WORK/recv.err" &
        RECV_PID=$!
        for _ in $(seq 200); do
          grep -q "listening on port" "$WORK/recv.err" && break
          sleep 0.02
        done
        t0=$(date +%s.%N)
        set +e
        timeout "$timeout_s" ip netns exec "$NS_A" "$BIN/file-send" "$file" \
          --to "169.254.77.2:$PORT" "${send_args[@]}" --json \
          --idle-timeout "$timeout_s" --connect-timeout 20 >"$WORK/send.json" 2>"$WORK/send.err"
        rc=$?
        set -e
        t1=$(date +%s.%N)
        kill "$RECV_PID" 2>/dev/null || true
        wait "$RECV_PID" 2>/dev/null || true
        RECV_PID=""
        completed=0
        if [ "$rc" = 0 ] && cmp -s "$file" "$dest/$(basename "$file")"; then
          completed=1
        fi
        python3 - "$transport" "$cc" "$bytes" "$loss" "$trial" "$t0" "$t1" "$completed" \
          "$WORK/send.json" >&3 <<'PY'
import json, sys
transport, cc, size, loss, trial, t0, t1, completed, path = sys.argv[1:]
seconds = float(t1) - float(t0)
size = int(size)
retrans, eff = "", ""
try:
    with open(path) as f:
        j = json.loads(f.read().strip().splitlines()[-1])
    retrans, eff = j.get("retransmits", ""), round(j.get("efficiency", 0), 4)
except Exception:
    pass
goodput = size / seconds / 1e6 if completed == "1" else 0.0
print(f"{transport},{cc},{size},{loss},{trial},{seconds:.3f},{goodput:.3f},{completed},{retrans},{eff}")
PY
        if [ -n "$out" ]; then
          tail -1 "$out" >&2
        fi
      done
    done
  done
done
