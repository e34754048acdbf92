#!/usr/bin/env python3
"""Interactive traffic through an echo server, like an ssh session.

echo_session.py HOST PORT SECONDS OUT_JSON

Sends a 200-byte message every 20 ms for SECONDS (the bytes a seeded
generator makes, so a lost, repeated or reordered byte shows), reads the echo
on another thread and checks it against what was sent, byte for byte. Then
half-closes and reads until EOF. Writes OUT_JSON: whether every byte came back
in order, how many, the arrival time (CLOCK_MONOTONIC seconds) of every echo,
and the error if the connection broke. Exit 0 when the echo is complete.
"""
import json
import random
import socket
import sys
import threading
import time

host, port, seconds, out_path = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
rng = random.Random(1)
sent = bytearray()
state = {"received": 0, "mismatch_at": None, "arrivals": [], "error": None, "eof": False}
lock = threading.Lock()


def reader(sock):
    try:
        while True:
            data = sock.recv(65536)
            if not data:
                state["eof"] = True
                return
            now = time.monotonic()
            with lock:
                start = state["received"]
                expect = bytes(sent[start:start + len(data)])
                if state["mismatch_at"] is None and expect != data:
                    state["mismatch_at"] = start
                state["received"] += len(data)
                state["arrivals"].append(round(now, 4))
    except OSError as e:
        state["error"] = f"read: {e}"


sock = socket.create_connection((host, port), timeout=10)
sock.settimeout(None)
sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
t = threading.Thread(target=reader, args=(sock,), daemon=True)
t.start()
started = time.monotonic()
try:
    while time.monotonic() - started < seconds and state["error"] is None:
        msg = bytes(rng.getrandbits(8) for _ in range(200))
        with lock:
            sent += msg
        sock.sendall(msg)
        time.sleep(0.02)
    sock.shutdown(socket.SHUT_WR)
except OSError as e:
    state["error"] = state["error"] or f"write: {e}"
t.join(timeout=10)
ok = (state["error"] is None and state["eof"] and state["mismatch_at"] is None
      and state["received"] == len(sent))
with open(out_path, "w") as f:
    json.dump({"ok": ok, "sent": len(sent), "received": state["received"],
               "mismatch_at": state["mismatch_at"], "error": state["error"],
               "eof": state["eof"], "arrivals": state["arrivals"]}, f)
sys.exit(0 if ok else 1)
