#!/usr/bin/env bash
# file-recv (kernel transport) out of file descriptors: connections that hold
# every descriptor it may open must not make it spin on accept() (EMFILE) or
# die; once they go, a real transfer works. No privileges.
set -euo pipefail
BIN=${1:-build/asan/bin}
WORK=$(mktemp -d)
PIDS=()
source "$(dirname "$0")/lib.sh"

mkdir -p "$WORK/out" "$WORK/in"
head -c 200000 /dev/urandom >"$WORK/in/f.bin"
port=$(free_port)
# A low descriptor limit for the receiver only.
(ulimit -n 40 && exec "$BIN/file-recv" --listen "$port" --output "$WORK/out" --transport kernel \
  --idle-timeout 60 >"$WORK/recv.out" 2>"$WORK/recv.err") &
RECV_PID=$!
PIDS+=("$RECV_PID")
wait_listen "$port"

echo "--- 60 idle connections against a limit of 40 descriptors"
python3 - "$port" "$RECV_PID" >"$WORK/hog.out" <<'PY' &
import socket, sys, time
port, pid = int(sys.argv[1]), int(sys.argv[2])
hogs = [socket.create_connection(("127.0.0.1", port)) for _ in range(60)]
def cpu():
    f = open(f"/proc/{pid}/stat").read().split(")")[1].split()
    return (int(f[11]) + int(f[12])) / 100  # utime + stime, in seconds
time.sleep(0.5)
before = cpu()
time.sleep(2)
print(f"{cpu() - before:.2f}")
sys.stdout.flush()
time.sleep(0.5)
for h in hogs:
    h.close()
PY
HOG_PID=$!
PIDS+=("$HOG_PID")
wait "$HOG_PID"
used=$(cat "$WORK/hog.out")
echo "receiver CPU while out of descriptors: $used s in 2 s"
python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) < 0.5 else 1)" "$used" \
  || fail "file-recv spun while out of descriptors: $used s of CPU in 2 s"
kill -0 "$RECV_PID" || fail "file-recv died: $(cat "$WORK/recv.err")"
grep -Eq "accept: Too many open files|out of file descriptors" "$WORK/recv.err" \
  || fail "no line about the descriptor limit: $(cat "$WORK/recv.err")"

echo "--- the hogs are gone: a real transfer works"
sleep 0.5
"$BIN/file-send" --transport kernel "$WORK/in/f.bin" --to "127.0.0.1:$port" --connect-timeout 5 \
  >/dev/null 2>"$WORK/err" || fail "transfer after the hogs: $(cat "$WORK/err")"
cmp -s "$WORK/in/f.bin" "$WORK/out/f.bin" || fail "file differs"
echo "1 passed, 0 failed"
