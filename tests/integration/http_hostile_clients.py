#!/usr/bin/env python3
"""The hostile side of tt_serve_hostile_test.sh: COUNT connections to IP:PORT
that each send half a request head and then nothing, plus one that drips a
header byte every half second; every connection the server cuts is opened
again at once, so the pressure stays for SECONDS. Prints what happened.

Usage: http_hostile_clients.py IP PORT COUNT SECONDS
"""
import selectors
import socket
import sys
import time

HALF = b"GET / HTTP/1.1\r\nHost: hostile\r\n"


def main():
    ip, port, count, seconds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
    sel = selectors.DefaultSelector()
    stats = {"opened": 0, "cut": 0, "drip_bytes": 0, "drip_cut": 0}

    def open_one(role):
        s = socket.socket()
        s.setblocking(False)
        s.connect_ex((ip, port))
        sel.register(s, selectors.EVENT_WRITE, [role, "connecting"])
        stats["opened"] += 1

    for _ in range(count):
        open_one("half")
    open_one("drip")
    drips = []
    end = time.time() + seconds
    next_drip = time.time()
    while time.time() < end:
        for key, _ in sel.select(timeout=0.1):
            s, (role, state) = key.fileobj, key.data
            if state == "connecting":
                if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) != 0:
                    sel.unregister(s)
                    s.close()
                    open_one(role)
                    continue
                if role == "half":
                    try:
                        s.send(HALF)
                    except OSError:
                        pass
                else:
                    drips.append(s)
                sel.modify(s, selectors.EVENT_READ, [role, "open"])
                continue
            try:
                data = s.recv(4096)
            except OSError:
                data = b""
            if not data:  # the server let go of it (reset, or a FIN)
                stats["drip_cut" if role == "drip" else "cut"] += 1
                sel.unregister(s)
                if s in drips:
                    drips.remove(s)
                s.close()
                open_one(role)
        if time.time() >= next_drip:
            next_drip += 0.5
            for s in drips:
                try:
                    s.send(b"X")
                    stats["drip_bytes"] += 1
                except OSError:
                    pass
    print("hostile: {opened} connections opened, {cut} half-sent ones cut by the server, "
          "{drip_bytes} bytes dripped, drip connection cut {drip_cut} times".format(**stats))


if __name__ == "__main__":
    main()
