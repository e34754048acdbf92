#!/usr/bin/python3
"""The kernel's side of the comparison: a TCP echo server on Linux sockets that
behaves like `tt-serve --echo`: every byte back, close when the peer closes.

    linux_echo.py ADDRESS PORT
"""
import socket
import sys
import threading


def serve(conn):
    with conn:
        try:
            while True:
                data = conn.recv(65536)
                if not data:
                    conn.shutdown(socket.SHUT_WR)
                    return
                conn.sendall(data)
        except OSError:
            return  # reset by the crafted client: that is what most cases end with


def main():
    address, port = sys.argv[1], int(sys.argv[2])
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((address, port))
    listener.listen(128)
    print(f"echo on {address}:{port}", flush=True)
    while True:
        conn, _ = listener.accept()
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


if __name__ == "__main__":
    main()
