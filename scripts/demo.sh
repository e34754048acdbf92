#!/usr/bin/env bash
# The README's main job: installs what is missing, builds the release preset and
# shows tinytcp working for real:
#   1. inside a throwaway network namespace, python's http.server on the kernel
#      side of tun144 and webget fetching a page and a 100 MiB file through our
#      TCP/IP stack, sha256 checked, with a pcap that tshark summarises;
#   2. tt-serve answering the kernel's ping and curl over TAP (ARP);
#   3. the headline, side by side: file-send over tinytcp in the UDP tunnel
#      against kernel TCP (cubic and bbr) at the same kernel-level loss, 0% and
#      5% each way (scripts/bench-loss.sh, two throwaway namespaces);
#   4. the speed benchmarks (medians, Gbit/s and items/s).
# The network parts need root and /dev/net/tun; without them they are skipped.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/install-deps.sh
cmake --preset release
cmake --build --preset release -j "$(nproc)"
BIN=$(pwd)/build/release/bin

WORK=$(mktemp -d /tmp/tt-demo.XXXXXX)
NS="tt-demo-$$"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  ip netns del "$NS" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
banner() { printf '\n=== %s ===\n' "$*"; }

if [ "$(id -u)" -eq 0 ] && [ -c /dev/net/tun ]; then
  ip netns add "$NS"
  banner "webget through tun144 (namespace $NS)"
  ./scripts/tun.sh start 144 --netns "$NS"
  mkdir -p "$WORK/www"
  echo "<h1>hello from the kernel's http.server</h1>" >"$WORK/www/index.html"
  head -c $((100 * 1024 * 1024)) /dev/urandom >"$WORK/www/big.bin"
  head -c $((4 * 1024 * 1024)) /dev/urandom >"$WORK/www/medium.bin"
  ip netns exec "$NS" /usr/bin/python3 -u -m http.server 8000 --bind 169.254.144.1 \
    --directory "$WORK/www" >"$WORK/http.log" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 200); do grep -q "Serving HTTP" "$WORK/http.log" && break; sleep 0.05; done
  ip netns exec "$NS" "$BIN/webget" --dev tun144 http://169.254.144.1:8000/index.html
  ip netns exec "$NS" "$BIN/webget" --dev tun144 -o "$WORK/big.out" \
    http://169.254.144.1:8000/big.bin
  want=$(sha256sum <"$WORK/www/big.bin" | cut -d' ' -f1)
  got=$(sha256sum <"$WORK/big.out" | cut -d' ' -f1)
  echo "sha256 sent     $want"
  echo "sha256 received $got"
  [ "$want" = "$got" ] || { echo "demo: sha256 MISMATCH" >&2; exit 1; }
  echo "--- a 4 MiB fetch captured with --pcap; tshark shows the handshake and a summary"
  ip netns exec "$NS" "$BIN/webget" -q --dev tun144 --pcap "$WORK/webget.pcap" \
    -o "$WORK/medium.out" http://169.254.144.1:8000/medium.bin
  tshark -r "$WORK/webget.pcap" -Y 'tcp.flags.syn==1' 2>/dev/null
  tshark -r "$WORK/webget.pcap" -o tcp.desegment_tcp_streams:FALSE -q -z io,stat,0 \
    -z conv,tcp 2>/dev/null | sed -n '1,20p'

  banner "tt-serve over tap10: ping and curl"
  ./scripts/tap.sh start 10 --netns "$NS"
  ip netns exec "$NS" "$BIN/tt-serve" --dev tap10 --echo 7 --http "$WORK/www" \
    >"$WORK/serve.out" 2>"$WORK/serve.err" &
  serve=$!
  PIDS+=("$serve")
  for _ in $(seq 200); do grep -q "serving on" "$WORK/serve.err" && break; sleep 0.05; done
  ip netns exec "$NS" ping -c 3 -i 0.2 169.254.10.9
  ip netns exec "$NS" curl -sS -o "$WORK/curl.out" -w 'curl: %{http_code}, %{size_download} bytes in %{time_total} s\n' \
    http://169.254.10.9/big.bin
  cmp -s "$WORK/curl.out" "$WORK/www/big.bin" && echo "curl's download matches"
  kill "$serve"
  wait "$serve" || true
  cat "$WORK/serve.out"
else
  banner "network demo skipped: needs root and /dev/net/tun"
fi

if [ "$(id -u)" -eq 0 ]; then
  banner "file-send: tinytcp in the UDP tunnel against kernel TCP, same kernel-level loss"
  ./scripts/bench-loss.sh --sizes 10M --loss "0 5" --trials 1 --timeout 60 \
    --runs "udp:bbr kernel:bbr kernel:cubic" --out "$WORK/loss.csv" 2>/dev/null
  python3 - "$WORK/loss.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
losses = sorted({int(r["loss_percent"]) for r in rows})
names = {"udp": "tinytcp, UDP tunnel", "kernel": "kernel TCP"}
print(f"{'10 MiB, MB/s':28}" + "".join(f"{str(l) + '% loss':>12}" for l in losses))
for run in dict.fromkeys((r["transport"], r["cc"]) for r in rows):
    label = f"{names[run[0]]} ({run[1]})"
    cells = []
    for l in losses:
        r = next(r for r in rows if (r["transport"], r["cc"]) == run and int(r["loss_percent"]) == l)
        cells.append(f"{float(r['goodput_MBps']):12.1f}" if r["completed"] == "1" else f"{'failed':>12}")
    print(f"{label:28}" + "".join(cells))
PY
else
  banner "file-send / file-recv over kernel TCP (loopback; the loss comparison needs root)"
  mkdir -p "$WORK/in" "$WORK/out"
  head -c $((50 * 1024 * 1024)) /dev/urandom >"$WORK/in/payload.bin"
  "$BIN/file-recv" --listen 47123 --output "$WORK/out" --once -q &
  recv=$!
  PIDS+=("$recv")
  sleep 0.3
  "$BIN/file-send" "$WORK/in/payload.bin" --to 127.0.0.1:47123
  wait "$recv"
fi

banner "speed benchmarks (${2:-3} repetitions)"
./scripts/bench.sh "${1:-.}" "${2:-3}"
