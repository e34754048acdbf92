#!/usr/bin/python3
"""Classify the client's packets in one run of experiment 1 (docs/experiments.md).

Usage: /usr/bin/python3 classify_client_packets.py RUN.pcap
(needs scapy: Debian's python3-scapy, hence /usr/bin/python3)

RUN.pcap is tinytcp's own capture of a client run (SW_PCAP_DIR=DIR
sliding_window.sh ...; taken before the router drops anything). The client
is the side that sent the SYN. Its packets are split into: new data (a
message sent the first time), data sent again, and pure ACKs, those by what
they carry: SACK blocks while the server's data has a hole (out of order,
RFC 5681 4.2), an ACK with no SACK block (in order: the hole filled, or the
delayed ACK timer), a D-SACK; and how long after the server's last packet
each pure ACK left (an ACK sent at once answers that packet; the delayed ACK
timer waits up to its bound).
"""
import sys

from scapy.all import IP, TCP, rdpcap


def options(tcp):
    return dict(o for o in tcp.options if isinstance(o, tuple) and len(o) == 2)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    packets = [p for p in rdpcap(sys.argv[1]) if TCP in p]
    syn = next(p for p in packets if p[TCP].flags & 0x02 and not p[TCP].flags & 0x10)
    client = (syn[IP].src, syn[TCP].sport)
    counts = {}
    client_top = server_top = None
    last_server_time = 0.0
    at_once = later = 0

    def count(key):
        counts[key] = counts.get(key, 0) + 1

    for p in packets:
        tcp = p[TCP]
        length = len(tcp.payload)
        sack = options(tcp).get("SAck")
        if (p[IP].src, tcp.sport) != client:
            last_server_time = float(p.time)
            if length:
                end = tcp.seq + length
                server_top = end if server_top is None else max(server_top, end)
            continue
        if tcp.flags & 0x07:  # SYN, FIN, RST
            count("client SYN/FIN/RST")
        elif length:
            end = tcp.seq + length
            if client_top is None or end > client_top:
                count("client data, new")
                client_top = end
            else:
                count("client data, sent again")
        else:
            if sack and sack[1] <= tcp.ack:
                count("client pure ACK, D-SACK")
            elif sack:
                count("client pure ACK, SACK (server data out of order)")
            else:
                count("client pure ACK, no SACK block")
            if float(p.time) - last_server_time < 0.001:
                at_once += 1
            else:
                later += 1
    total = sum(v for k, v in counts.items() if k.startswith("client"))
    for key in sorted(counts):
        print(f"{counts[key]:6d}  {key}")
    print(f"{total:6d}  client packets")
    print(f"pure ACKs within 1 ms of a server packet: {at_once}; later: {later}")


if __name__ == "__main__":
    main()
