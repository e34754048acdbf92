#!/usr/bin/env bash
# tt-serve's user and system CPU per MiB sending: utime/stime (10 ms ticks of
# /proc/PID/stat) over 4 curl downloads of 512 MiB from --http on a plain TUN
# device (tunN+nooffload: the io_uring path), for two tt-serve builds
# alternating round by round, so a change of user-space copies shows even when
# throughput and total CPU stay within the VM's spread. Needs root; runs in a
# throwaway namespace. Prints CSV.
#
#   scripts/experiments/tun_serve_utime.sh BEFORE_BIN_DIR AFTER_BIN_DIR [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
before=$(cd "$1" && pwd)
after=$(cd "$2" && pwd)
rounds=${3:-4}
NS=tt-utime-$$
WORK=$(mktemp -d /tmp/tt-utime.XXXXXX)
SERVE=""
cleanup() {
  [ -n "$SERVE" ] && kill "$SERVE" 2>/dev/null || true
  ip netns del "$NS" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
./scripts/tun.sh start 146 --netns "$NS" >/dev/null
ip -n "$NS" link set lo up
head -c 512M /dev/zero >"$WORK/file.bin"
echo "round,bin,seconds_total,utime_ticks,stime_ticks,user_us_per_mib,sys_us_per_mib"
for round in $(seq "$rounds"); do
  if [ $((round % 2)) = 1 ]; then order="before after"; else order="after before"; fi
  for b in $order; do
    dir=$before
    [ "$b" = after ] && dir=$after
    ip netns exec "$NS" "$dir/tt-serve" -q --dev tun146+nooffload --http "$WORK" >/dev/null 2>&1 &
    SERVE=$!
    sleep 0.5
    read -r u0 s0 < <(awk '{print $14, $15}' "/proc/$SERVE/stat")
    t0=$(date +%s.%N)
    for _ in 1 2 3 4; do
      ip netns exec "$NS" curl -sS -o /dev/null http://169.254.146.9/file.bin
    done
    t1=$(date +%s.%N)
    read -r u1 s1 < <(awk '{print $14, $15}' "/proc/$SERVE/stat")
    kill "$SERVE"
    wait "$SERVE" || true
    SERVE=""
    python3 -c "
u = $u1 - $u0; s = $s1 - $s0; mib = 4 * 512; hz = $(getconf CLK_TCK)
print(f'$round,$b,{$t1 - $t0:.3f},{u},{s},{u * 1e6 / hz / mib:.0f},{s * 1e6 / hz / mib:.0f}')"
  done
done
