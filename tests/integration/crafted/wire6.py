"""Hand-made IPv6 bytes: the fixed header, extension headers (RFC 8200 §4),
fragments, and ICMPv6 messages (RFC 4443) built and parsed.

Like wire.py, every byte is laid out here so that a case can put exactly the
chain it wants on the wire: a hop-by-hop header anywhere, unknown options, a
routing header of any type, fragments that overlap or stop short of the TCP
header.
"""
import struct
from dataclasses import dataclass

from wire import checksum, ip_bytes, pseudo_header

HOP_BY_HOP, TCP, ROUTING, FRAGMENT, ICMPV6, NO_NEXT, DEST_OPTS = 0, 6, 43, 44, 58, 59, 60

# ICMPv6 types (RFC 4443 §2.1)
DEST_UNREACH, PACKET_TOO_BIG, TIME_EXCEEDED, PARAM_PROBLEM = 1, 2, 3, 4
ECHO_REQUEST, ECHO_REPLY = 128, 129
MAX_QUOTE = 1232  # an error quotes at most this much, so it fits 1280 (RFC 4443 §2.4(c))


def ipv6(src, dst, payload, next_header=TCP, hop_limit=64, flow=0):
    head = struct.pack("!IHBB", (6 << 28) | flow, len(payload), next_header, hop_limit)
    return head + ip_bytes(src) + ip_bytes(dst) + payload


# ---- extension headers: each is (its protocol number, its bytes after Next Header)


def pad_n(n):
    """Pad1 for one byte, PadN for more (RFC 8200 §4.2)."""
    if n == 0:
        return b""
    if n == 1:
        return b"\x00"
    return bytes([1, n - 2]) + b"\x00" * (n - 2)


def options_header(kind, options=b""):
    """A hop-by-hop or destination options header whose options are `options`,
    padded with PadN to a multiple of 8 bytes (with the two leading bytes)."""
    body = options + pad_n((-(2 + len(options))) % 8)
    return kind, bytes([(2 + len(body)) // 8 - 1]) + body


def routing_header(routing_type, segments_left, addresses=()):
    """A routing header with 4 reserved bytes and then `addresses` (the type 0
    layout, RFC 2460 §4.4)."""
    body = bytes([routing_type, segments_left]) + b"\x00" * 4 + b"".join(
        ip_bytes(a) for a in addresses)
    return ROUTING, bytes([(2 + len(body)) // 8 - 1]) + body


def fragment_header(offset, more, ident):
    """`offset` in bytes (a multiple of 8)."""
    assert offset % 8 == 0
    return FRAGMENT, struct.pack("!BHI", 0, offset | (1 if more else 0), ident)


def chain(headers, upper, payload):
    """The bytes after the IPv6 header and its Next Header value: `headers` in
    order, then `payload` of protocol `upper`."""
    numbers = [kind for kind, _ in headers] + [upper]
    out = b"".join(bytes([numbers[i + 1]]) + body for i, (_, body) in enumerate(headers))
    return numbers[0], out + payload


def datagram(src, dst, headers, upper, payload):
    first, rest = chain(headers, upper, payload)
    return ipv6(src, dst, rest, next_header=first)


def fragments(src, dst, upper, payload, cuts, ident, before=(), order=None):
    """`payload` (the fragmentable part, e.g. a whole TCP segment) cut at the
    byte offsets `cuts` (multiples of 8), each piece behind `before` (the
    per-fragment headers) and a Fragment header. `cuts` may also hold
    (start, end) pairs to make pieces that overlap or leave gaps. Returned in
    `order` (indexes) or in order."""
    if cuts and isinstance(cuts[0], tuple):
        spans = list(cuts)
    else:
        bounds = [0, *cuts, len(payload)]
        spans = list(zip(bounds, bounds[1:]))
    last = max(end for _, end in spans)
    out = []
    for start, end in spans:
        frag = fragment_header(start, end < last, ident)
        out.append(datagram(src, dst, [*before, frag], upper, payload[start:end]))
    return [out[i] for i in order] if order else out


# ---- ICMPv6


def icmpv6(src, dst, kind, code, body):
    """An ICMPv6 message (type, code, checksum, `body`) in an IPv6 datagram."""
    msg = struct.pack("!BBH", kind, code, 0) + body
    csum = checksum(pseudo_header(src, dst, ICMPV6, len(msg)) + msg)
    return ipv6(src, dst, msg[:2] + struct.pack("!H", csum) + msg[4:], next_header=ICMPV6)


def icmpv6_error(src, dst, kind, code, field, invoking):
    """An error with its 32-bit field (MTU, pointer or unused) quoting as much
    of `invoking` as fits 1280 bytes."""
    return icmpv6(src, dst, kind, code, struct.pack("!I", field) + invoking[:MAX_QUOTE])


@dataclass
class Icmpv6:
    """One ICMPv6 message the server sent."""
    t: float
    kind: int
    code: int
    field: int  # pointer, MTU, or identifier << 16 | sequence for echo
    body: bytes  # after the 32-bit field: the quote, or the echo data
    checksum_ok: bool
    hop_limit: int


def parse_icmpv6(t, data):
    """The ICMPv6 message in an IPv6 datagram with no extension headers, or None."""
    if len(data) < 48 or data[6] != ICMPV6:
        return None
    length = struct.unpack("!H", data[4:6])[0]
    msg = data[40:40 + length]
    if len(msg) < 8:
        return None
    src, dst = data[8:24], data[24:40]
    ok = checksum(src + dst + struct.pack("!I3xB", len(msg), ICMPV6) + msg) == 0
    return Icmpv6(t=t, kind=msg[0], code=msg[1], field=struct.unpack("!I", msg[4:8])[0],
                  body=bytes(msg[8:]), checksum_ok=ok, hop_limit=data[7])
