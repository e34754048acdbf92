#!/usr/bin/env python3
"""Request/response driver for scripts/bench-session-overhead.sh (issue 17).

  rr_crr.py serve-rr  --port P            echo every byte back (1-byte ping-pong)
  rr_crr.py serve-crr --port P            per connection: read 64 bytes, send 8 KiB, close
  rr_crr.py rr  --port P --seconds S      one connection, 1-byte request/response; prints transactions/s
  rr_crr.py crr --port P --seconds S      connect, 64-byte request, 8 KiB reply, close; prints transactions/s
  rr_crr.py crr-each --port P --count N   N of those back to back; prints p50 and p90 microseconds
                                          per connection (the first 5 left out: warm-up)

Same code and the same per-transaction work in every arm, so its own cost cancels in
the plain/robust comparison. Clients connect to 127.0.0.1.
"""
import argparse
import socket
import sys
import time

REQUEST = 64
REPLY = 8192
REPLY_BYTES = b"r" * REPLY


def recv_exactly(sock, n):
    got = 0
    while got < n:
        chunk = sock.recv(n - got)
        if not chunk:
            raise ConnectionError(f"peer closed after {got} of {n} bytes")
        got += len(chunk)


def serve_rr(conn):
    while True:
        data = conn.recv(1)
        if not data:
            return
        conn.sendall(data)


def serve_crr(conn):
    recv_exactly(conn, REQUEST)
    conn.sendall(REPLY_BYTES)


def serve(handler, port):
    """One connection at a time (the clients are sequential): no thread start or GIL
    hand-off inside a transaction."""
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(1024)
    print(f"serving on {port}", file=sys.stderr, flush=True)
    while True:
        conn, _ = listener.accept()
        conn.settimeout(30)
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            handler(conn)
        except OSError:
            pass
        conn.close()


def rr(port, seconds):
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    byte = b"x"
    count = 0
    start = time.monotonic()
    deadline = start + seconds
    while True:
        sock.sendall(byte)
        recv_exactly(sock, 1)
        count += 1
        if count % 64 == 0 and time.monotonic() >= deadline:
            break
    elapsed = time.monotonic() - start
    sock.close()
    return count / elapsed


def crr(port, seconds):
    request = b"q" * REQUEST
    count = 0
    start = time.monotonic()
    deadline = start + seconds
    while time.monotonic() < deadline:
        sock = socket.create_connection(("127.0.0.1", port))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.sendall(request)
        recv_exactly(sock, REPLY)
        sock.close()
        count += 1
    return count / (time.monotonic() - start)


def crr_each(port, count):
    request = b"q" * REQUEST
    times = []
    for _ in range(count):
        start = time.monotonic()
        sock = socket.create_connection(("127.0.0.1", port))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.sendall(request)
        recv_exactly(sock, REPLY)
        sock.close()
        times.append((time.monotonic() - start) * 1e6)
    times = sorted(times[5:])
    return times[len(times) // 2], times[int(len(times) * 0.9)]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["serve-rr", "serve-crr", "rr", "crr", "crr-each"])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--count", type=int, default=2000)
    args = parser.parse_args()
    if args.mode == "serve-rr":
        serve(serve_rr, args.port)
    elif args.mode == "serve-crr":
        serve(serve_crr, args.port)
    elif args.mode == "crr-each":
        if args.count < 10:
            print("rr_crr: --count must be at least 10", file=sys.stderr)
            return 2
        try:
            p50, p90 = crr_each(args.port, args.count)
        except OSError as error:
            print(f"rr_crr: crr-each failed: {error}", file=sys.stderr)
            return 1
        print(f"{p50:.0f} {p90:.0f}")
    else:
        try:
            rate = (rr if args.mode == "rr" else crr)(args.port, args.seconds)
        except OSError as error:
            print(f"rr_crr: {args.mode} failed: {error}", file=sys.stderr)
            return 1
        print(f"{rate:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
