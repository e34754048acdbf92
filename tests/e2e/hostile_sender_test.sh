#!/usr/bin/env bash
# End to end (issue 21 item 2): file-recv against a sender that plays foul,
# over kernel TCP on loopback. A python peer speaks the protocol's frames:
#  1. it streams OFFERs and never reads the replies (its receive window
#     closes): file-recv must stop reading too, so the sender can push no
#     more than the kernels' buffers hold, and file-recv's memory stays
#     bounded;
#  2. it sends only OFFERs that are refused, reading the replies: file-recv
#     gives the session up after 100 in a row (--max-refusals) and closes it;
# a real file-send gets its file across while the first one floods, and again
# afterwards.
# Usage: hostile_sender_test.sh BIN_DIR
set -euo pipefail
BIN=${1:?usage: $0 BIN_DIR}
WORK=$(mktemp -d /tmp/tt-e2e-hostile.XXXXXX)
PIDS=()
. "$(dirname "$0")/lib.sh"

mkdir -p "$WORK/out"
start_recv() {  # port
  # ASan's quarantine holds freed memory (256 MB by default): not growth.
  ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0" "$BIN/file-recv" --listen "$1" --output "$WORK/out" --transport kernel \
    >"$WORK/recv.out" 2>"$WORK/recv.err" &
  RECV_PID=$!
  PIDS+=("$RECV_PID")
  wait_listen "$1"
}

port=$(free_port)
start_recv "$port"

echo "--- a sender that never reads its replies, and a good sender at the same time"
head -c 3000000 /dev/urandom >"$WORK/during.bin"
python3 - "$port" "$RECV_PID" >"$WORK/flood.out" <<'PY' &
import socket, struct, sys, time
port, pid = int(sys.argv[1]), int(sys.argv[2])
def rss_kib():
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
def offer(name, size=0):
    body = struct.pack(">IHH", 0x54544654, 3, len(name)) + name + struct.pack(">Q", size) + bytes(32)
    return struct.pack(">BI", 1, len(body)) + body
# Directory entries, each taken (RESULT ok), so no limit on refusals ends
# the session: only back-pressure (or --max-files) can.
bad = offer(b"d/") * 1000
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # our window: tiny, never read
before = rss_kib()
s.connect(("127.0.0.1", port))
s.setblocking(False)
sent, deadline, last_progress, reset = 0, time.time() + 20, time.time(), False
while time.time() < deadline and time.time() - last_progress < 2:
    try:
        sent += s.send(bad)
        last_progress = time.time()
    except BlockingIOError:
        time.sleep(0.01)
    except (ConnectionResetError, BrokenPipeError):
        reset = True  # the receiver gave the session up: also bounded
        break
after = rss_kib()
print(f"flood: {sent} bytes accepted before the receiver stopped reading"
      f"{' and reset the session' if reset else ''}; file-recv RSS {before} -> {after} KiB")
# Unbounded, the receiver reads on while its replies pile up: the flood runs
# for the whole 20 s and hundreds of MB. Bounded: the kernels' buffers and
# the receiver's 1 MiB of held input, then nothing moves.
assert sent < 64 << 20, "the receiver kept reading while its replies could not leave"
assert after - before < 64 * 1024, "the receiver's memory grew"
s.close()
PY
FLOOD_PID=$!
PIDS+=("$FLOOD_PID")
sleep 1  # the flood is on
"$BIN/file-send" --transport kernel "$WORK/during.bin" --to "127.0.0.1:$port" \
  >"$WORK/during.out" 2>"$WORK/during.err" \
  || fail "good sender during the flood: $(cat "$WORK/during.err"; tail -5 "$WORK/recv.err")"
kill -0 "$FLOOD_PID" 2>/dev/null && echo "(the good transfer finished while the flood was still on)"
wait "$FLOOD_PID" || fail "flood: $(cat "$WORK/flood.out")"
cat "$WORK/flood.out"
cmp "$WORK/during.bin" "$WORK/out/during.bin" || fail "file sent during the flood differs"

echo "--- a sender whose every offer is refused"
python3 - "$port" <<'PY' >"$WORK/refusals.out" || fail "refusals: $(cat "$WORK/refusals.out")"
import socket, struct, sys
port = int(sys.argv[1])
def offer(name):
    body = struct.pack(">IHH", 0x54544654, 3, len(name)) + name + struct.pack(">Q", 1) + bytes(32)
    return struct.pack(">BI", 1, len(body)) + body
def read_frame(s):
    head = b""
    while len(head) < 5:
        got = s.recv(5 - len(head))
        if not got:
            return None
        head += got
    kind, n = struct.unpack(">BI", head)
    body = b""
    while len(body) < n:
        got = s.recv(n - len(body))
        if not got:
            return None
        body += got
    return kind
s = socket.create_connection(("127.0.0.1", port), timeout=10)
rejects = 0
for i in range(1000):
    try:
        s.sendall(offer(b"bad\\name"))
    except OSError:
        break
    kind = read_frame(s)
    if kind is None:
        break
    assert kind == 3, kind  # REJECT
    rejects += 1
print(f"refusals: {rejects} REJECTs, then the receiver closed the session")
assert rejects == 100, rejects
PY
cat "$WORK/refusals.out"
echo "--- a good sender afterwards"
head -c 300000 /dev/urandom >"$WORK/good.bin"
"$BIN/file-send" --transport kernel "$WORK/good.bin" --to "127.0.0.1:$port" >"$WORK/send.out" 2>"$WORK/send.err" \
  || fail "good sender: $(cat "$WORK/send.err"; tail -5 "$WORK/recv.err")"
cmp "$WORK/good.bin" "$WORK/out/good.bin" || fail "good file differs"
echo "PASS"
