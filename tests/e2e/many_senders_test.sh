#!/usr/bin/env bash
# End to end: one file-recv serving many senders at once (issue 16), and
# hostile datagrams at its UDP port (issue 21 item 1). No privileges.
#  - a sender killed with kill -9 mid-transfer: its rerun resumes at once
#    (a new session from the same machine takes the file over), not after the
#    dead session's 30 s idle timeout
#  - one spoofed SYN, then garbage from unknown peers: a real transfer works
#  - a flood of valid SYNs from many source ports while a real sender runs
#  - N concurrent senders at 5% loss each way (udp) and concurrent kernel TCP
#    senders: every file verified
set -euo pipefail
BIN=${1:-build/asan/bin}
WORK=$(mktemp -d)
PIDS=()
source "$(dirname "$0")/lib.sh"
CONCURRENT=${MANY_SENDERS:-32}

start_recv() {  # port, transport, extra args...
  local port=$1 transport=$2
  shift 2
  "$BIN/file-recv" --listen "$port" --output "$WORK/out" --transport "$transport" "$@" \
    >"$WORK/recv.out" 2>"$WORK/recv.err" &
  RECV_PID=$!
  PIDS+=("$RECV_PID")
  wait_listen "$port"
}
stop_recv() {
  kill "$RECV_PID" 2>/dev/null || true
  wait "$RECV_PID" 2>/dev/null || true
}
fresh_out() { rm -rf "$WORK/out"; mkdir -p "$WORK/out"; }
mkdir -p "$WORK/in"

echo "--- [udp] a sender killed mid-transfer: the rerun resumes at once"
fresh_out
head -c 60000000 /dev/urandom >"$WORK/in/big.bin"
port=$(free_port)
start_recv "$port" udp
# 100 Mbit/s out of the sender: about 5 s for the file, killed after 1 s.
"$BIN/file-send" "$WORK/in/big.bin" --to "127.0.0.1:$port" --impair rate=100mbit \
  >/dev/null 2>"$WORK/send1.err" &
SEND_PID=$!
PIDS+=("$SEND_PID")
for _ in $(seq 400); do
  part=$(find "$WORK/out" -name '.big.bin.*.part' -size +4M | head -1)
  [ -n "$part" ] && break
  sleep 0.02
done
[ -n "$part" ] || fail "no partial file appeared: $(cat "$WORK/recv.err")"
kill -9 "$SEND_PID"
wait "$SEND_PID" 2>/dev/null || true
start=$(date +%s.%N)
"$BIN/file-send" "$WORK/in/big.bin" --to "127.0.0.1:$port" --connect-timeout 5 --json \
  >"$WORK/rerun.json" 2>"$WORK/rerun.err" || fail "rerun: $(cat "$WORK/rerun.err") $(cat "$WORK/recv.err")"
took=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$start" "$(date +%s.%N)")
echo "rerun took $took s"
python3 - "$WORK/rerun.json" <<'PY' || fail "rerun summary: $(cat "$WORK/rerun.json")"
import json, sys
s = json.loads(open(sys.argv[1]).read())
assert s["verified"] and s["resumed_from"] > 0, s
PY
python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) < 15 else 1)" "$took" \
  || fail "the rerun waited for the dead session: $took s"
cmp -s "$WORK/in/big.bin" "$WORK/out/big.bin" || fail "resumed file differs"
grep -q "taken over by a newer session from the same sender" "$WORK/recv.err" \
  || fail "the dead session's end is not reported: $(cat "$WORK/recv.err")"

echo "--- [udp] a spoofed SYN and garbage from unknown peers, then a real transfer"
head -c 300000 /dev/urandom >"$WORK/in/small.bin"
python3 - "$port" <<'PY'
import socket, struct, sys
port = int(sys.argv[1])
def checksum(data):
    if len(data) % 2: data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16: s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff
def syn(src, dst, sport, dport, flags=0x02):
    tcp = struct.pack("!HHIIBBHHH", sport, dport, 1000, 0, 5 << 4, flags, 65535, 0, 0)
    pseudo = socket.inet_aton(src) + socket.inet_aton(dst) + struct.pack("!BBH", 0, 6, len(tcp))
    tcp = tcp[:16] + struct.pack("!H", checksum(pseudo + tcp)) + tcp[18:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 1, 0, 64, 6, 0,
                     socket.inet_aton(src), socket.inet_aton(dst))
    ip = ip[:10] + struct.pack("!H", checksum(ip)) + ip[12:]
    return ip + tcp
target = ("127.0.0.1", port)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
# One SYN that never completes (it used to make its sender the tunnel's peer).
s.sendto(syn("169.254.0.2", "169.254.0.1", 40000, port), target)
# Garbage: not IPv4, an ACK, a SYN-ACK, a SYN to a closed port, to another address.
for d in (b"\x45" + b"\0" * 39, syn("169.254.0.2", "169.254.0.1", 40001, port, 0x10),
          syn("169.254.0.2", "169.254.0.1", 40002, port, 0x12),
          syn("169.254.0.2", "169.254.0.1", 40003, 1),
          syn("169.254.0.2", "10.9.9.9", 40004, port)):
    g = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    g.sendto(d, target)
    g.close()
PY
"$BIN/file-send" "$WORK/in/small.bin" --to "127.0.0.1:$port" --connect-timeout 5 \
  >/dev/null 2>"$WORK/err" || fail "transfer after spoofed SYN: $(cat "$WORK/err")"
cmp -s "$WORK/in/small.bin" "$WORK/out/small.bin" || fail "file after spoofed SYN differs"

echo "--- [udp] a flood of valid SYNs from 4000 source ports while a sender runs"
python3 - "$port" >"$WORK/flood.out" <<'PY' &
import socket, struct, sys, time
port = int(sys.argv[1])
def checksum(data):
    if len(data) % 2: data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16: s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff
def syn(sport):
    src, dst = "169.254.0.2", "169.254.0.1"
    tcp = struct.pack("!HHIIBBHHH", sport, port, 1000, 0, 5 << 4, 0x02, 65535, 0, 0)
    pseudo = socket.inet_aton(src) + socket.inet_aton(dst) + struct.pack("!BBH", 0, 6, len(tcp))
    tcp = tcp[:16] + struct.pack("!H", checksum(pseudo + tcp)) + tcp[18:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 1, 0, 64, 6, 0,
                     socket.inet_aton(src), socket.inet_aton(dst))
    return ip[:10] + struct.pack("!H", checksum(ip)) + ip[12:] + tcp
socks = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(4000)]
start = time.time()
sent = 0
while time.time() - start < 3:
    for i, s in enumerate(socks):
        s.sendto(syn(20000 + i), ("127.0.0.1", port))
        sent += 1
print(sent)
PY
FLOOD_PID=$!
PIDS+=("$FLOOD_PID")
sleep 0.5
"$BIN/file-send" "$WORK/in/small.bin" --name during-flood.bin --to "127.0.0.1:$port" \
  --connect-timeout 5 >/dev/null 2>"$WORK/err" || fail "transfer during the flood: $(cat "$WORK/err")"
wait "$FLOOD_PID"
cmp -s "$WORK/in/small.bin" "$WORK/out/during-flood.bin" || fail "file sent during the flood differs"
echo "flood: $(cat "$WORK/flood.out") SYNs; transfer during it verified"
kill -0 "$RECV_PID" || fail "receiver died"
stop_recv

concurrent() {  # transport, senders, extra sender args...
  local T=$1 n=$2
  shift 2
  echo "--- [$T] $n concurrent senders $*"
  fresh_out
  port=$(free_port)
  start_recv "$port" "$T" --max-sessions "$n"
  local pids=()
  for i in $(seq "$n"); do
    head -c $((200000 + i * 1000)) /dev/urandom >"$WORK/in/c$i.bin"
  done
  for i in $(seq "$n"); do
    "$BIN/file-send" --transport "$T" "$WORK/in/c$i.bin" --to "127.0.0.1:$port" \
      --connect-timeout 20 --seed "$i" "$@" >/dev/null 2>"$WORK/c$i.err" &
    pids+=($!)
    PIDS+=($!)
  done
  for i in $(seq "$n"); do
    wait "${pids[$((i - 1))]}" || fail "sender $i: $(cat "$WORK/c$i.err")"
  done
  for i in $(seq "$n"); do
    cmp -s "$WORK/in/c$i.bin" "$WORK/out/c$i.bin" || fail "file $i differs"
  done
  # The last session's line may still be on its way (the receiver lingers
  # for the FIN to be acknowledged).
  for _ in $(seq 100); do
    [ "$(grep -c 'integrity verified' "$WORK/recv.out")" = "$n" ] && break
    sleep 0.05
  done
  [ "$(grep -c 'integrity verified' "$WORK/recv.out")" = "$n" ] \
    || fail "receiver lines: $(grep -c 'integrity verified' "$WORK/recv.out") of $n; $(cat "$WORK/recv.err")"
  grep -q ", from 127.0.0.1:[0-9]*$" "$WORK/recv.out" || fail "lines do not name the peer"
  stop_recv
}
concurrent udp "$CONCURRENT" --loss 5%
concurrent kernel 8
echo "1 passed, 0 failed"
