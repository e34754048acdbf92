#!/usr/bin/python3
"""Kernel-side clients for tt-serve's echo server (run inside the test's namespace).

    echo_clients.py HOST PORT many N BYTES   N concurrent connections, each echoing BYTES
    echo_clients.py HOST PORT halfclose      shut our write side, still read the echo
    echo_clients.py HOST PORT reset          send, then close with RST (SO_LINGER 0)

Exits 0 on success; prints one line saying what failed otherwise.
"""
import asyncio
import os
import socket
import struct
import sys


async def one(host, port, payload):
    reader, writer = await asyncio.open_connection(host, port)
    writer.write(payload)
    await writer.drain()
    writer.write_eof()  # half-close: the server echoes, then closes
    got = await reader.read(-1)
    writer.close()
    return got == payload


async def many(host, port, n, size):
    payloads = [os.urandom(size) for _ in range(n)]
    results = await asyncio.wait_for(
        asyncio.gather(*(one(host, port, p) for p in payloads), return_exceptions=True), 120)
    bad = [r for r in results if r is not True]
    if bad:
        sys.exit(f"{len(bad)} of {n} connections failed, e.g. {bad[0]!r}")
    print(f"{n} concurrent connections echoed {size} bytes each")


def halfclose(host, port):
    s = socket.create_connection((host, port), timeout=10)
    data = os.urandom(100_000)
    s.sendall(data)
    s.shutdown(socket.SHUT_WR)
    got = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        got += chunk
    if got != data:
        sys.exit(f"half-close: got {len(got)} bytes back, wanted {len(data)}")
    print("half-close: all bytes echoed after our FIN, then the server's FIN")


def reset(host, port):
    s = socket.create_connection((host, port), timeout=10)
    s.sendall(b"x" * 1000)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()  # RST
    # The server must still be alive and serving.
    s = socket.create_connection((host, port), timeout=10)
    s.sendall(b"ping")
    s.shutdown(socket.SHUT_WR)
    if s.recv(16) != b"ping":
        sys.exit("reset: server did not serve the next connection")
    print("reset: server survived a RST and served the next connection")


def main():
    host, port, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    if mode == "many":
        asyncio.run(many(host, port, int(sys.argv[4]), int(sys.argv[5])))
    elif mode == "halfclose":
        halfclose(host, port)
    elif mode == "reset":
        reset(host, port)
    else:
        sys.exit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
