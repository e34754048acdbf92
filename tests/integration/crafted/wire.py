"""Hand-made IPv4/TCP bytes and the raw link that carries them (IPv6 in wire6.py).

Segments are built byte by byte here (not by scapy) so that a case can put
exactly the malformation it wants on the wire: any data offset, option bytes
taken as given, a wrong checksum, a truncated header. What comes back is parsed
by scapy. The link is an AF_PACKET socket bound to one interface of the test's
namespace, so nothing is routed and nothing leaves it: on a TUN device it
carries bare IPv4 datagrams, on a veth it adds an Ethernet header with fixed
MAC addresses. A link carries one family (`family` 4 or 6); the TCP checksum
takes the pseudo-header of the addresses' family.
"""
import random
import select
import socket
import struct
import time
from dataclasses import dataclass, field

from scapy.layers.inet import IP, TCP
from scapy.layers.inet6 import IPv6

FIN, SYN, RST, PSH, ACK, URG = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20
MASK = 0xFFFFFFFF

ETH_P_ALL = 0x0003
ETH_P_IP = 0x0800
ETH_P_IPV6 = 0x86DD
PACKET_OUTGOING = 4
SO_TIMESTAMPNS = 35
SO_RCVBUFFORCE = 33
SOL_PACKET = 263
PACKET_IGNORE_OUTGOING = 23
PACKET_VNET_HDR = 15
VNET_HDR = 10  # struct virtio_net_hdr


def seq_add(a, n):
    return (a + n) & MASK


def seq_diff(a, b):
    """a - b in sequence space, as a signed 32-bit number."""
    d = (a - b) & MASK
    return d - (1 << 32) if d >= 1 << 31 else d


def checksum(data):
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def ip_bytes(addr):
    """4 bytes of an IPv4 address, 16 of an IPv6 one."""
    return socket.inet_pton(socket.AF_INET6 if ":" in addr else socket.AF_INET, addr)


def pseudo_header(src, dst, proto, length):
    """RFC 9293 §3.1 (IPv4) or RFC 8200 §8.1 (IPv6)."""
    if ":" in src:
        return ip_bytes(src) + ip_bytes(dst) + struct.pack("!I3xB", length, proto)
    return ip_bytes(src) + ip_bytes(dst) + struct.pack("!BBH", 0, proto, length)


def tcp_segment(src, dst, sport, dport, seq, ack, flags, window, options=b"", payload=b"",
                data_offset=None, bad_checksum=False):
    """TCP header + options + payload. `options` is used as given (a multiple of
    4 bytes unless `data_offset` says otherwise); the checksum is correct unless
    `bad_checksum`."""
    if data_offset is None:
        assert len(options) % 4 == 0, "pad the options to 32 bits"
        data_offset = (20 + len(options)) // 4
    head = struct.pack("!HHIIBBHHH", sport, dport, seq & MASK, ack & MASK, data_offset << 4,
                       flags, window, 0, 0)
    seg = head + options + payload
    csum = checksum(pseudo_header(src, dst, 6, len(seg)) + seg)
    if bad_checksum:
        csum ^= 0x5A5A
    return seg[:16] + struct.pack("!H", csum) + seg[18:]


def ipv4(src, dst, payload, proto=6):
    head = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), random.getrandbits(16),
                       0x4000, 64, proto, 0, ip_bytes(src), ip_bytes(dst))
    return head[:10] + struct.pack("!H", checksum(head)) + head[12:] + payload


# Option bytes, each a multiple of 4 when used alone.
def opt_mss(mss):
    return struct.pack("!BBH", 2, 4, mss)


OPT_SACK_PERM = b"\x01\x01\x04\x02"


@dataclass
class Segment:
    """One TCP segment the server sent, as scapy parsed it."""
    t: float  # kernel receive time (CLOCK_REALTIME, seconds)
    flags: int
    seq: int
    ack: int
    window: int
    payload: bytes
    size: int = 0  # the largest IP datagram it makes on the wire (see Link.recv)
    raw: bytes = b""  # the whole IP datagram (quoted by the ICMPv6 cases)
    mss: int = None
    wscale: int = None
    sack_permitted: bool = False
    timestamps: tuple = None
    sack: list = field(default_factory=list)  # [(left, right)]

    def has(self, flags):
        return self.flags & flags == flags

    @property
    def seg_len(self):
        return len(self.payload) + (1 if self.flags & SYN else 0) + (1 if self.flags & FIN else 0)


def flag_names(flags):
    return "".join(c for bit, c in ((SYN, "S"), (FIN, "F"), (RST, "R"), (PSH, "P"), (ACK, "."),
                                    (URG, "U")) if flags & bit) or "-"


def parse_segment(t, datagram, gso_size=0):
    """`gso_size`: the datagram is a sender's TSO super-segment, cut into
    segments of that much payload on the way (Link.recv)."""
    pkt = IPv6(datagram) if datagram[0] >> 4 == 6 else IP(datagram)
    tcp = pkt[TCP]
    payload = bytes(tcp.payload)
    size = len(datagram)
    if gso_size and len(payload) > gso_size:
        size -= len(payload) - gso_size
    seg = Segment(t=t, flags=int(tcp.flags), seq=tcp.seq, ack=tcp.ack, window=tcp.window,
                  payload=payload, size=size, raw=bytes(datagram))
    for option in tcp.options:
        name, value = option[0], option[1] if len(option) > 1 else None
        if name == "MSS":
            seg.mss = value
        elif name == "WScale":
            seg.wscale = value
        elif name == "SAckOK":
            seg.sack_permitted = True
        elif name == "Timestamp":
            seg.timestamps = value
        elif name == "SAck":
            seg.sack = [(value[i], value[i + 1]) for i in range(0, len(value) - 1, 2)]
    return seg


class Link:
    """Raw frames in and out of one interface of the test's namespace."""

    def __init__(self, iface, ethernet=False, src_mac=None, dst_mac=None, family=4):
        self.iface = iface
        self.ethernet = ethernet
        self.family = family
        self.ethertype = ETH_P_IPV6 if family == 6 else ETH_P_IP
        self.header = b""
        if ethernet:
            self.header = (bytes.fromhex(dst_mac.replace(":", "")) +
                           bytes.fromhex(src_mac.replace(":", "")) +
                           struct.pack("!H", self.ethertype))
        self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        # Past net.core.rmem_max (root only), so a flood's answers do not
        # crowd out the ones a case waits for; our own frames never queue.
        self.sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 64 << 20)
        self.sock.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
        self.sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        # A virtio-net header before every frame, both ways: a sender with
        # TSO (tt-serve on a TUN with offloads) hands the kernel segments of up
        # to 64 KiB that are cut to gso_size only on the way out, and this
        # socket sees them whole; the header says how they are cut.
        self.sock.setsockopt(SOL_PACKET, PACKET_VNET_HDR, 1)
        self.gso_size = 0  # of the last datagram recv() returned
        self.sock.bind((iface, 0))

    def send(self, datagram):
        self.sock.sendto(bytes(VNET_HDR) + self.header + datagram, (self.iface, self.ethertype))

    def recv(self, timeout):
        """Next datagram of the link's family that arrived on the interface, as
        (time, bytes), or None after `timeout` seconds. Our own transmissions
        are skipped. `gso_size` is then the payload of each segment the datagram
        is cut into (0: it is one segment)."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self.sock], [], [], left)
            if not ready:
                return None
            data, ancillary, _, addr = self.sock.recvmsg(65536, 64)
            if addr[2] == PACKET_OUTGOING or len(data) < VNET_HDR:
                continue
            gso_type, gso_size = data[1], struct.unpack("=H", data[4:6])[0]
            data = data[VNET_HDR:]
            t = time.time()
            for level, kind, value in ancillary:
                if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                    sec, nsec = struct.unpack("qq", value[:16])
                    t = sec + nsec / 1e9
            if self.ethernet:
                if len(data) < 14 or data[12:14] != struct.pack("!H", self.ethertype):
                    continue
                data = data[14:]
            if len(data) >= (40 if self.family == 6 else 20) and data[0] >> 4 == self.family:
                self.gso_size = gso_size if gso_type & 0x7F else 0
                return t, data

    def close(self):
        self.sock.close()
