"""The crafted-packet cases over IPv6 (issue 20): extension-header chains,
fragments, and ICMPv6 errors and echo. Like cases.py, each checks what the
RFCs require of any IPv6 host, so the same case runs against Linux and against
tinytcp; run.py picks these when the addresses are IPv6.

Cases that expect an ICMPv6 error also check it whole: its checksum, that it
comes from the server's address, and that it quotes the invoking datagram from
its first byte (as much as fits 1280 bytes, RFC 4443 §2.4(c)). Cases that
expect a datagram to be dropped check that nothing of it arrives and that the
same bytes sent plainly afterwards are echoed exactly once.
"""
import ipaddress
import multiprocessing
import os
import struct
import time

from cases import Case, _flood, still_echoes
from conn import check
from wire import ACK, OPT_SACK_PERM, PSH, RST, SYN, opt_mss, seq_add, seq_diff, tcp_segment
from wire6 import (DEST_OPTS, DEST_UNREACH, ECHO_REPLY, ECHO_REQUEST, HOP_BY_HOP, MAX_QUOTE,
                   PACKET_TOO_BIG, PARAM_PROBLEM, TCP, datagram, fragment_header, fragments,
                   icmpv6, icmpv6_error, ipv6, options_header, pad_n, routing_header)

CASES6 = []
SYN6_OPTS = opt_mss(1440) + OPT_SACK_PERM  # MTU 1500 - 40 (IPv6) - 20 (TCP)
IPV6_MIN_MTU = 1280


def case(rfc, xfail=None):
    def register(fn):
        CASES6.append(Case(fn, rfc, xfail or {}))
        return fn
    return register


def established(ctx, greeting=b"hello6"):
    c = ctx.conn()
    c.handshake(options=SYN6_OPTS)
    c.echo(greeting)
    c.collect(0.05)
    return c


def behind(ctx, headers):
    """A `wrap` for Conn.send: the TCP segment behind `headers`, one datagram."""
    return lambda tcp: [datagram(ctx.src, ctx.dst, headers, TCP, tcp)]


def check_quote(msg, invoking):
    n = min(len(invoking), MAX_QUOTE)
    check(msg.checksum_ok, "the ICMPv6 checksum is wrong")
    check(msg.body[:n] == invoking[:n] and len(msg.body) == n,
          f"the error quotes {len(msg.body)} bytes, not the first {n} of the invoking datagram")


def accepted(ctx, wrap, payload=b"behind-headers"):
    """Data sent with `wrap` is echoed, and no ICMPv6 error comes back."""
    c = established(ctx)
    c.data(payload, wrap=wrap)
    got = c.read(len(payload))
    check(got == payload, f"echo returned {got!r}")
    check(not [m for m in ctx.icmp if m.kind < 128], "an ICMPv6 error for an acceptable datagram")
    still_echoes(c)


def refused(ctx, wrap, expect=None, payload=b"EVIL"):
    """Data sent with `wrap` at SND.NXT is dropped: no TCP answer, nothing
    delivered. `expect` = (type, code, pointer, index of the datagram quoted)
    asks for exactly that ICMPv6 error; None for no error at all. Then the
    same sequence number carries b"good" plainly, which is echoed alone."""
    c = established(ctx)
    sent = []
    c.send(ACK | PSH, payload=payload, wrap=lambda tcp: sent.extend(wrap(tcp)) or sent)
    c.expect_silence(0.4, "refused datagram")
    errors = [m for m in ctx.icmp if m.kind < 128]
    if expect is None:
        check(not errors, f"ICMPv6 error type {errors[0].kind if errors else 0} for a datagram "
                          "that must be dropped silently")
    else:
        kind, code, pointer, index = expect
        check(errors, f"no ICMPv6 error (expected type {kind} code {code})")
        msg = errors[0]
        check((msg.kind, msg.code) == (kind, code),
              f"ICMPv6 type {msg.kind} code {msg.code}, expected type {kind} code {code}")
        check(msg.field == pointer, f"pointer {msg.field}, expected {pointer}")
        check_quote(msg, sent[index])
        check(len(errors) == 1, f"{len(errors)} ICMPv6 errors for one datagram")
    c.echo(b"good")
    for s in c.collect(0.2):
        check(not s.payload, f"extra bytes delivered: {s.payload!r}")
    return c


# ---------------------------------------------------------------- baseline


@case("RFC 8200 §8.1, §8.3, RFC 9293 §3.7.1")
def handshake_and_echo_v6(ctx):
    """Handshake over IPv6 with MSS 1440 offered: the SYN-ACK acknowledges
    ISS+1 and announces MSS = link MTU - 60 (1440 for 1500: 40 bytes of IPv6
    header, 20 of TCP), SACK-permitted but no window scale or timestamps (not
    offered); the TCP checksum is over the IPv6 pseudo-header both ways (scapy
    checks ours is right before trusting any field); data is echoed."""
    c = ctx.conn()
    synack = c.handshake(options=SYN6_OPTS)
    mtu = int(open(f"/sys/class/net/{ctx.link.iface}/mtu").read())
    check(synack.mss == mtu - 60, f"SYN-ACK MSS {synack.mss}, expected {mtu - 60} (MTU {mtu})")
    check(synack.sack_permitted, "SYN-ACK without SACK-permitted")
    check(synack.wscale is None and synack.timestamps is None, "options not offered in the SYN")
    c.echo(b"hello, crafted IPv6 world")
    check(c.acked_through() == c.snd_nxt, "the echoed data is not acknowledged")
    ctx.note(f"SYN-ACK MSS {synack.mss}")


@case("RFC 9293 §3.10.7.1")
def rst_for_closed_port_v6(ctx):
    """A SYN to a port nobody listens on is answered <SEQ=0><ACK=ISS+1><CTL=RST,ACK>."""
    c = ctx.conn(port=9)
    c.send(SYN, seq=c.iss, ack=0, options=SYN6_OPTS)
    rst = c.expect(lambda s: True, 1.0, "answer to a SYN to a closed port")
    check(rst.has(RST | ACK), f"flags {rst.flags:#x}, expected RST+ACK")
    check(rst.seq == 0 and rst.ack == seq_add(c.iss, 1), "RST is not <SEQ=0><ACK=ISS+1>")
    c.closed = True


@case("RFC 4443 §4.1, §4.2")
def echo_request_gets_reply(ctx):
    """ICMPv6 echo requests (56 and 1200 bytes of data) are answered with echo
    replies carrying the same identifier, sequence number and data."""
    for seq, size in ((7, 56), (8, 1200)):
        ident = 0x7400 + seq
        data = os.urandom(size)
        ctx.link.send(icmpv6(ctx.src, ctx.dst, ECHO_REQUEST, 0, struct.pack("!HH", ident, seq) + data))
        reply = ctx.expect_icmp(lambda m: m.kind == ECHO_REPLY and m.field == (ident << 16 | seq),
                                1.0, f"echo reply {seq}")
        check(reply.checksum_ok and reply.code == 0, "bad echo reply")
        check(reply.body == data, f"echo reply {seq} carries other data")


# ---------------------------------------------------------------- extension headers


@case("RFC 8200 §4.1, §4.2, §4.3, §4.6")
def segment_behind_option_headers(ctx):
    """Data behind a hop-by-hop header (Pad1, Pad1, PadN) and a destination
    options header (PadN): accepted and echoed, no ICMPv6 error."""
    hbh = options_header(HOP_BY_HOP, pad_n(1) + pad_n(1))
    dst = options_header(DEST_OPTS)
    accepted(ctx, behind(ctx, [hbh, dst]))


@case("RFC 8200 §4.1, §4, RFC 4443 §3.4")
def hop_by_hop_not_first(ctx):
    """Destination options, then a hop-by-hop header: the datagram is dropped
    with Parameter Problem code 1 (unrecognized Next Header) pointing at the
    Next Header byte that names hop-by-hop (offset 40, the first byte of the
    destination options header)."""
    refused(ctx, behind(ctx, [options_header(DEST_OPTS), options_header(HOP_BY_HOP)]),
            (PARAM_PROBLEM, 1, 40, 0))


@case("RFC 8200 §4, RFC 4443 §3.4")
def unknown_next_header(ctx):
    """Next Header 253 (experimental, RFC 3692) after a destination options
    header: Parameter Problem code 1 at that header's Next Header byte (40)."""
    refused(ctx, lambda tcp: [datagram(ctx.src, ctx.dst, [options_header(DEST_OPTS)], 253, tcp)],
            (PARAM_PROBLEM, 1, 40, 0))


def unknown_option(kind):
    """Destination options holding one unknown option of type `kind` (the
    experimental 0x1E with the action bits of `kind`, RFC 4727) first, at
    offset 42."""
    return options_header(DEST_OPTS, bytes([kind, 2, 0xAB, 0xCD]))


@case("RFC 8200 §4.2 (action 00)")
def unknown_option_00_skipped(ctx):
    """An unknown option of type 00xxxxxx is skipped: data echoed."""
    accepted(ctx, behind(ctx, [unknown_option(0x1E)]))


@case("RFC 8200 §4.2 (action 01)")
def unknown_option_01_discarded(ctx):
    """An unknown option of type 01xxxxxx: the datagram is discarded without
    an ICMPv6 error."""
    refused(ctx, behind(ctx, [unknown_option(0x5E)]), None)


@case("RFC 8200 §4.2 (action 10), RFC 4443 §3.4")
def unknown_option_10_reported(ctx):
    """An unknown option of type 10xxxxxx: discarded with Parameter Problem
    code 2 pointing at the option's type byte (42)."""
    refused(ctx, behind(ctx, [unknown_option(0x9E)]), (PARAM_PROBLEM, 2, 42, 0))


@case("RFC 8200 §4.2 (action 11)")
def unknown_option_11_reported_to_unicast(ctx):
    """An unknown option of type 11xxxxxx in a datagram to a unicast address:
    Parameter Problem code 2 at the option, as for 10xxxxxx."""
    refused(ctx, behind(ctx, [unknown_option(0xDE)]), (PARAM_PROBLEM, 2, 42, 0))


@case("RFC 8200 §4.4, RFC 5095 §3")
def routing_type_0_with_segments_left(ctx):
    """A routing header of type 0 (deprecated, RFC 5095) with Segments Left 1:
    discarded with Parameter Problem code 0 pointing at its Routing Type byte
    (42)."""
    rh = routing_header(0, 1, ["fd00:7474:ffff::1"])
    refused(ctx, behind(ctx, [rh]), (PARAM_PROBLEM, 0, 42, 0))


@case("RFC 8200 §4.4, RFC 5095 §3")
def routing_type_0_without_segments_left(ctx):
    """A routing header of type 0 with Segments Left 0 is ignored and the
    next header processed: data echoed."""
    accepted(ctx, behind(ctx, [routing_header(0, 0, ["fd00:7474:ffff::1"])]))


# ---------------------------------------------------------------- fragments


def fragmented(ctx, cuts, order=None, before=()):
    ident = int.from_bytes(os.urandom(4), "big")
    return lambda tcp: fragments(ctx.src, ctx.dst, TCP, tcp, cuts, ident, before, order)


@case("RFC 8200 §4.5")
def fragments_in_order(ctx):
    """A data segment (20 + 40 bytes) in two fragments, in order: echoed."""
    accepted(ctx, fragmented(ctx, [32]), b"F" * 40)


@case("RFC 8200 §4.5")
def fragments_out_of_order(ctx):
    """A data segment in three fragments sent last, first, middle, each behind
    a hop-by-hop header (a per-fragment header, §4.5): echoed."""
    hbh = options_header(HOP_BY_HOP)
    accepted(ctx, fragmented(ctx, [24, 40], order=[2, 0, 1], before=[hbh]), b"O" * 40)


@case("RFC 5722 §4, RFC 8200 §4.5")
def overlapping_fragments_drop_datagram(ctx):
    """Two fragments whose ranges overlap by 8 bytes ([0,32) and [24,60), the
    second with other bytes in the overlap): the whole datagram is dropped
    without an ICMPv6 error; the data sent plainly afterwards is echoed once."""
    def wrap(tcp):
        other = tcp[:20] + b"X" * (len(tcp) - 20)
        ident = int.from_bytes(os.urandom(4), "big")
        first = fragments(ctx.src, ctx.dst, TCP, tcp, [(0, 32), (32, len(tcp))], ident)[0]
        second = datagram(ctx.src, ctx.dst, [fragment_header(24, False, ident)], TCP, other[24:])
        return [first, second]
    refused(ctx, wrap, None, payload=b"EVIL" * 10)


@case("RFC 7112 §5, RFC 8200 §4.5")
def tiny_first_fragment(ctx):
    """A first fragment holding only 8 bytes of the TCP header (the rest in a
    second fragment): the first fragment is dropped with Parameter Problem
    code 3 (incomplete header chain), pointer 0, quoting it; nothing is
    delivered (Linux does exactly this; RFC 7112 says "MAY" send the error,
    RFC 8200 §4.5 "should")."""
    refused(ctx, fragmented(ctx, [8]), (PARAM_PROBLEM, 3, 0, 0), payload=b"EVIL" * 4)


@case("RFC 6946 §4")
def atomic_fragment(ctx):
    """A Fragment header with offset 0 and M = 0 (an atomic fragment) is
    processed as the whole datagram, even while a non-last fragment with the
    same identification waits for reassembly: the data is echoed."""
    ident = int.from_bytes(os.urandom(4), "big")
    c = established(ctx)
    pending = tcp_segment(ctx.src, ctx.dst, c.sport, c.port, c.snd_nxt, c.rcv_nxt, ACK | PSH,
                          65535, b"", b"P" * 24)
    ctx.link.send(fragments(ctx.src, ctx.dst, TCP, pending, [(0, 16), (16, 44)], ident)[0])
    c.data(b"atomic", wrap=lambda tcp: [datagram(ctx.src, ctx.dst,
                                                 [fragment_header(0, False, ident)], TCP, tcp)])
    got = c.read(6)
    check(got == b"atomic", f"echo returned {got!r}")
    still_echoes(c)


# ---------------------------------------------------------------- ICMPv6 errors about our segments


def big_echo(c, chunks, rewind=False):
    """Writes `chunks` full-sized (1440-byte) segments and waits until the
    server has sent all of their echo, none of it acknowledged. Returns the
    bytes and the server's data segments; with `rewind` a later read() reads
    them again, else it waits for retransmissions."""
    mark = c._next
    data = os.urandom(1440 * chunks)
    for i in range(chunks):
        c.data(data[i * 1440:(i + 1) * 1440])
    segs = []
    while sum(len(s.payload) for s in segs) < len(data):
        s = c.next(3.0)
        check(s is not None, f"only {sum(len(s.payload) for s in segs)} of {len(data)} bytes echoed")
        check(not s.flags & RST, "RST")
        if s.payload:
            segs.append(s)
    if rewind:
        c._next = mark
    return data, segs


def router(ctx):
    """The address an ICMPv6 error about the server's segments comes from: a
    router on our /64 (::fe), as if the path beyond it were narrower."""
    net = ipaddress.IPv6Network(ctx.src + "/64", strict=False)
    return str(net.network_address + 0xFE)


def report(ctx, kind, code, field, invoking):
    """Sends the server an ICMPv6 error about one of its datagrams to us."""
    ctx.link.send(icmpv6_error(router(ctx), ctx.dst, kind, code, field, invoking))


def forged_server_segment(ctx, c, seq, payload_len):
    """A datagram as the server would send it to us, for a quote."""
    tcp = tcp_segment(ctx.dst, ctx.src, c.port, c.sport, seq, c.snd_nxt, ACK | PSH, 65535,
                      b"", b"q" * payload_len)
    return ipv6(ctx.dst, ctx.src, tcp)


@case("RFC 4443 §3.1, RFC 1122 §4.2.3.9, RFC 5461 §4")
def destination_unreachable_is_soft(ctx):
    """Destination Unreachable codes 0 (no route), 3 (address unreachable), 1
    (administratively prohibited) and 4 (port unreachable), each quoting the
    server's unacknowledged echo: the connection survives (no RST, the echo
    is retransmitted or acknowledged as usual, the next echo works). RFC 1122
    makes 0 and 3 soft errors; RFC 5461 §4 asks the same of the others in a
    synchronized state, which Linux does."""
    c = established(ctx)
    c.data(b"unreach")
    seg = c.expect(lambda s: s.payload, 1.0, "echo")
    for code in (0, 3, 1, 4):
        report(ctx, DEST_UNREACH, code, 0, seg.raw)
    for s in c.collect(0.3):
        check(not s.flags & RST, "RST after Destination Unreachable")
    c.rcv_nxt = seq_add(seg.seq, len(seg.payload))
    c.ack_now()
    still_echoes(c)


@case("RFC 5927 §4.1, RFC 4443 §3.2, RFC 8201 §4")
def packet_too_big_outside_window_ignored(ctx):
    """Packet Too Big (MTU 1280) quoting a segment of the connection whose
    sequence number is not in SND.UNA..SND.NXT (100,000 below): ignored, the
    next echo of 2 x 1440 bytes still comes in full-sized segments."""
    c = established(ctx)
    quote = forged_server_segment(ctx, c, seq_add(c.rcv_nxt, -100000), 1440)
    report(ctx, PACKET_TOO_BIG, 0, IPV6_MIN_MTU, quote)
    c.collect(0.1)
    data, segs = big_echo(c, 2, rewind=True)
    biggest = max(s.size for s in segs)
    ctx.note(f"largest echo datagram {biggest} bytes")
    check(biggest > IPV6_MIN_MTU, f"the path MTU went down for a stale quote (largest {biggest})")
    got = c.read(len(data))
    check(got == data, "the echo is not the data")


@case("RFC 8201 §4, §5.2, RFC 4443 §3.2")
def packet_too_big_lowers_segment_size(ctx):
    """Three full-sized (1500-byte) echo segments are in flight, none
    acknowledged; Packet Too Big (MTU 1280) quoting the first: everything the
    server sends afterwards fits 1280 bytes (the unacknowledged data goes again
    in smaller segments) and the echo is byte-exact; a later echo also fits.
    Runs last: the lower path MTU stays with the destination."""
    c = established(ctx)
    data, segs = big_echo(c, 3)
    check(max(s.size for s in segs) > IPV6_MIN_MTU, "the echo was not in full-sized segments")
    first = min(segs, key=lambda s: seq_diff(s.seq, c.rcv_nxt))
    mark = len(c.received)
    report(ctx, PACKET_TOO_BIG, 0, IPV6_MIN_MTU, first.raw)
    got = c.read(len(data), timeout=5.0)
    check(got == data, "the echo after Packet Too Big is not the data")
    more = os.urandom(1440)
    c.data(more)
    check(c.read(len(more)) == more, "the later echo is not the data")
    after = [s for s in c.received[mark:] if s.payload]
    biggest = max(s.size for s in after)
    ctx.note(f"after Packet Too Big: {len(after)} data segments, largest {biggest} bytes")
    check(biggest <= IPV6_MIN_MTU, f"a {biggest}-byte datagram after Packet Too Big (MTU 1280)")


# ---------------------------------------------------------------- floods


@case("RFC 4987 §3.6, RFC 9293 §3.7.1, RFC 8200 §8.3")
def syn_flood_v6_cookie_mss(ctx):
    """30,000 spoofed SYNs from fd00:7474:N::3 (bursts of 50 every 2 ms); 1 s
    into the flood a real client from a jumbo link (SYN with MSS 8940) gets a
    SYN-ACK (a SYN cookie's, on both targets) whose MSS the server's link can
    carry, at most MTU - 60 (RFC 9293 §3.7.1: the largest segment it can
    receive; RFC 8200: a 40-byte header, not IPv4's 20), and the echo of 2 x
    1440 bytes comes back byte-exact in datagrams of at most the MTU (RFC
    8200 §5), all within 2 s (the latency under a flood is the IPv4 case's
    to bound; this one is about the MSS). After the Packet Too Big case Linux
    announces 1220 (the lowered path MTU), which is within the bound."""
    stop_at = time.monotonic() + 3.0
    sent = multiprocessing.Value("l", 0)
    child = multiprocessing.Process(
        target=_flood, args=(ctx.link_args, ctx.flood_src, ctx.dst, ctx.port, stop_at, sent))
    child.start()
    try:
        time.sleep(1.0)
        c = ctx.conn()
        start = time.monotonic()
        synack = c.handshake(options=opt_mss(8940) + OPT_SACK_PERM, timeout=2.0)
        mtu = int(open(f"/sys/class/net/{ctx.link.iface}/mtu").read())
        ctx.note(f"SYN-ACK MSS {synack.mss}, SACK-permitted {synack.sack_permitted}")
        check(synack.mss is not None and synack.mss <= mtu - 60,
              f"SYN-ACK MSS {synack.mss} during the flood: more than MTU {mtu} - 60")
        data = os.urandom(2880)
        mark = len(c.received)
        c.data(data[:1440])
        c.data(data[1440:])
        check(c.read(len(data), timeout=max(2.0 - (time.monotonic() - start), 0.05)) == data,
              "the echo is not the data")
        biggest = max(s.size for s in c.received[mark:] if s.payload)
        ctx.note(f"largest echo datagram {biggest} bytes")
        check(biggest <= mtu, f"a {biggest}-byte echo datagram on an MTU-{mtu} link")
    finally:
        child.join(10)
        if child.is_alive():
            child.terminate()
            child.join()
        ctx.note(f"{sent.value} spoofed SYNs")
