"""The crafted-packet cases. Each one checks what the RFC requires of any TCP,
so the same case runs unchanged against the Linux kernel and against tinytcp;
where the RFC leaves room (timer values, which copy of overlapping data wins)
the case asserts the RFC's bounds, not one implementation's choice.

A case gets a Context, opens fresh connections (so per-socket rate limits on
challenge ACKs, RFC 5961 §7, never hide an answer), and raises CaseFailure.
`xfail` maps a target to the reason it is known to differ (an issue item);
the runner reports such a case as XFAIL, and as a failure (XPASS) once it
passes, so the marker goes when the fix lands.
"""
import multiprocessing
import os
import random
import time

from conn import WINDOW, check
from wire6 import ipv6
from wire import (ACK, FIN, OPT_SACK_PERM, PSH, RST, SYN, ipv4, opt_mss, seq_add, seq_diff,
                  tcp_segment)

CASES = []
SYN_OPTS = opt_mss(1460) + OPT_SACK_PERM


class Case:
    def __init__(self, fn, rfc, xfail):
        self.name = fn.__name__
        self.rfc = rfc
        self.fn = fn
        self.xfail = xfail
        self.doc = " ".join((fn.__doc__ or "").split())


def case(rfc, xfail=None):
    def register(fn):
        CASES.append(Case(fn, rfc, xfail or {}))
        return fn
    return register


def established(ctx, greeting=b"hello"):
    """A fresh connection with one echo round trip done (and ACKed), so the
    server has an RTT sample and nothing outstanding."""
    c = ctx.conn()
    c.handshake()
    c.echo(greeting)
    c.collect(0.05)  # a delayed ACK or window update, if any
    return c


def is_challenge_ack(c):
    """RFC 5961 §3.2/§4.2: <SEQ=SND.NXT><ACK=RCV.NXT><CTL=ACK>, nothing else."""
    return lambda s: s.flags & (SYN | RST | FIN) == 0 and s.has(ACK) and s.ack == c.snd_nxt


def still_echoes(c, payload=b"still-alive"):
    c.echo(payload)


# ---------------------------------------------------------------- baseline


@case("RFC 9293 §3.5")
def handshake_and_echo(ctx):
    """Three-way handshake by hand; the SYN-ACK acknowledges ISS+1 and carries
    MSS and SACK-permitted (offered) but neither window scale nor timestamps
    (not offered, RFC 7323 §2.2/§3.2); data is echoed and acknowledged."""
    c = ctx.conn()
    synack = c.handshake()
    check(synack.mss is not None, "SYN-ACK without MSS")
    check(synack.sack_permitted, "SYN-ACK without SACK-permitted although the SYN offered it")
    check(synack.wscale is None, "SYN-ACK has window scale although the SYN had none")
    check(synack.timestamps is None, "SYN-ACK has timestamps although the SYN had none")
    c.echo(b"hello, crafted world")
    check(c.acked_through() == c.snd_nxt, "the echoed data is not acknowledged")


# ---------------------------------------------------------------- RFC 5961 §3: RST


@case("RFC 5961 §3.2")
def rst_in_window_gets_challenge_ack(ctx):
    """A RST inside the window but not at RCV.NXT is answered with a challenge
    ACK (ack = RCV.NXT) and the connection stays."""
    c = established(ctx)
    c.send(RST | ACK, seq=seq_add(c.snd_nxt, 100))
    c.expect(is_challenge_ack(c), 1.0, "challenge ACK")
    still_echoes(c)


@case("RFC 5961 §3.2")
def rst_at_rcv_nxt_resets(ctx):
    """A RST at exactly RCV.NXT closes the connection without an answer; the
    next segment on that 4-tuple gets <SEQ=SEG.ACK><CTL=RST> (RFC 9293
    §3.10.7.1)."""
    c = established(ctx)
    c.send(RST | ACK)
    c.expect_silence(0.3, "RST at RCV.NXT")
    c.data(b"anyone?")
    rst = c.expect(lambda s: True, 1.0, "reply to data after the reset")
    check(rst.flags & RST, f"connection still there after RST at RCV.NXT (got flags {rst.flags:#x})")
    check(rst.seq == c.rcv_nxt, "the RST's sequence number is not our SEG.ACK")
    c.closed = True


@case("RFC 5961 §3.2, RFC 9293 §3.10.7.4")
def rst_out_of_window_ignored(ctx):
    """A RST left of RCV.NXT or past RCV.NXT+RCV.WND is silently dropped: no
    answer, and the connection stays."""
    c = established(ctx)
    c.send(RST | ACK, seq=seq_add(c.snd_nxt, c.server_window + 1000))
    c.expect_silence(0.3, "RST beyond the window")
    c.send(RST | ACK, seq=seq_add(c.snd_nxt, -1000))
    c.expect_silence(0.3, "RST left of the window")
    still_echoes(c)


# ---------------------------------------------------------------- RFC 5961 §4: SYN


@case("RFC 5961 §4.2")
def syn_in_window_gets_challenge_ack(ctx):
    """A SYN at RCV.NXT in ESTABLISHED is answered with a challenge ACK, never a
    RST or a SYN-ACK, and the connection stays."""
    c = established(ctx)
    c.send(SYN, seq=c.snd_nxt, ack=0, options=SYN_OPTS)
    c.expect(is_challenge_ack(c), 1.0, "challenge ACK")
    still_echoes(c)


@case("RFC 5961 §4.2")
def syn_out_of_window_gets_challenge_ack(ctx):
    """A SYN far outside the window in ESTABLISHED: challenge ACK as well
    ("irrespective of the sequence number"), connection stays."""
    c = established(ctx)
    c.send(SYN, seq=seq_add(c.snd_nxt, 1 << 30), ack=0, options=SYN_OPTS)
    c.expect(is_challenge_ack(c), 1.0, "challenge ACK")
    still_echoes(c)


# ---------------------------------------------------------------- RFC 5961 §5: ACK


@case("RFC 5961 §5.2, RFC 9293 §3.10.7.4")
def data_acking_unsent_data_is_dropped(ctx):
    """Data whose ACK is beyond SND.NXT: "send an ACK, drop the segment"
    (RFC 9293 §3.10.7.4, fifth check). The ACK carries ack = RCV.NXT, the data
    is neither delivered nor acknowledged; the same bytes with a valid ACK
    then go through."""
    c = established(ctx)
    seq = c.snd_nxt
    c.data(b"EVIL", ack=seq_add(c.rcv_nxt, 100000), advance=False)
    c.expect(lambda s: s.has(ACK) and s.ack == seq and not s.payload, 1.0,
             "ACK of RCV.NXT for the segment acknowledging unsent data")
    for s in c.collect(0.3):
        check(seq_diff(s.ack, seq) <= 0, "the data with an unsent ACK was acknowledged")
        check(not s.payload, "the data with an unsent ACK was echoed")
    c.echo(b"good")


@case("RFC 5961 §5.2")
def data_with_ack_too_old_gets_challenge_ack(ctx):
    """Data whose ACK is below SND.UNA - MAX.SND.WND is discarded and answered
    with a challenge ACK; the same bytes with a valid ACK then go through."""
    c = established(ctx)
    seq = c.snd_nxt
    c.data(b"EVIL", ack=seq_add(c.rcv_nxt, -(WINDOW + 5000)), advance=False)
    c.expect(is_challenge_ack(c), 1.0, "challenge ACK")
    for s in c.collect(0.2):
        check(not s.payload, "the data with a too old ACK was echoed")
    check(c.acked_through() == seq, "the data with a too old ACK was acknowledged")
    c.echo(b"good")


# ---------------------------------------------------------------- window edges


@case("RFC 9293 §3.10.7.4")
def duplicate_data_left_of_window(ctx):
    """Data entirely before RCV.NXT (a retransmission) is not delivered again
    and is answered with an ACK of RCV.NXT; a segment straddling RCV.NXT
    delivers only its new bytes."""
    c = established(ctx, b"abcde")
    c.data(b"abcde", seq=seq_add(c.snd_nxt, -5))
    c.expect(lambda s: s.has(ACK) and s.ack == c.snd_nxt, 1.0, "ACK of RCV.NXT")
    for s in c.collect(0.2):
        check(not s.payload, "duplicate data was echoed again")
    start = seq_add(c.snd_nxt, -3)
    c.data(b"cdeXYZ", seq=start)
    got = c.read(3)
    check(got == b"XYZ", f"straddling segment delivered {got!r}, not the new bytes b'XYZ'")
    for s in c.collect(0.2):
        check(not s.payload, f"more echoed than the new bytes: {s.payload!r}")


@case("RFC 9293 §3.10.7.4, RFC 2018 §4")
def data_at_right_edge_is_held(ctx):
    """One byte at RCV.NXT+RCV.WND-1 (the last byte in the window) is
    acceptable: held out of order and reported in a SACK block, with ack =
    RCV.NXT."""
    c = established(ctx)
    edge = seq_add(c.snd_nxt, c.server_window - 1)
    c.data(b"R", seq=edge, advance=False)
    ack = c.expect(lambda s: s.has(ACK) and not s.payload, 1.0, "ACK of the edge byte")
    check(ack.ack == c.snd_nxt, "ack is not RCV.NXT")
    check((edge, seq_add(edge, 1)) in ack.sack or
          any(seq_diff(edge, l) >= 0 and seq_diff(r, edge) > 0 for l, r in ack.sack),
          f"the byte at the window's last sequence number is not SACKed ({ack.sack})")


@case("RFC 9293 §3.10.7.4")
def data_beyond_right_edge_is_dropped(ctx):
    """One byte at RCV.NXT+RCV.WND (just past the window) is not acceptable: an
    ACK of RCV.NXT comes back and no SACK block covers the byte."""
    c = established(ctx)
    beyond = seq_add(c.snd_nxt, c.server_window)
    c.data(b"B", seq=beyond, advance=False)
    ack = c.expect(lambda s: s.has(ACK) and not s.payload, 1.0, "ACK of the beyond-window byte")
    check(ack.ack == c.snd_nxt, "ack is not RCV.NXT")
    check(not any(seq_diff(beyond, l) >= 0 and seq_diff(r, beyond) > 0 for l, r in ack.sack),
          f"the byte past the window was kept (SACK {ack.sack})")


# ---------------------------------------------------------------- overlapping data


@case("RFC 9293 §3.10.7.4")
def overlap_in_order_first_copy_wins(ctx):
    """A retransmission overlapping delivered bytes with different content:
    only its new bytes are delivered, the delivered ones stay."""
    c = established(ctx, b"A" * 10)
    c.data(b"B" * 10, seq=seq_add(c.snd_nxt, -5))
    got = c.read(5)
    check(got == b"B" * 5, f"got {got!r}")
    for s in c.collect(0.2):
        check(not s.payload, f"overlapping bytes delivered twice: {s.payload!r}")


@case("RFC 9293 §3.10.7.4")
def overlap_out_of_order_extending_right(ctx):
    """Out of order: [10,20) 'C' is held, then [15,25) 'D' overlaps its tail
    with other bytes, then [0,10) fills the hole. The stream is 10 x A,
    10 x C, 5 x D: bytes already held are kept."""
    c = established(ctx)
    base = c.snd_nxt
    c.data(b"C" * 10, seq=seq_add(base, 10))
    c.data(b"D" * 10, seq=seq_add(base, 15))
    c.data(b"A" * 10, seq=base)
    got = c.read(25)
    check(got == b"A" * 10 + b"C" * 10 + b"D" * 5, f"got {got!r}")


@case("RFC 9293 §3.10.7.4")
def overlap_out_of_order_extending_left(ctx):
    """Out of order: [10,20) 'C' is held, then [5,15) 'D' overlaps its head,
    then [0,5) fills the hole. The RFC does not say which copy of [10,15)
    wins (Linux: the later; tinytcp: the first), so the case asserts that
    every byte is one copy's, one copy for the whole overlap, and nothing is
    lost or doubled."""
    c = established(ctx)
    base = c.snd_nxt
    c.data(b"C" * 10, seq=seq_add(base, 10))
    c.data(b"D" * 10, seq=seq_add(base, 5))
    c.data(b"A" * 5, seq=base)
    got = c.read(20)
    check(got[:5] == b"A" * 5 and got[5:10] == b"D" * 5 and got[15:] == b"C" * 5,
          f"got {got!r}")
    check(got[10:15] in (b"C" * 5, b"D" * 5), f"overlap is mixed: {got!r}")
    ctx.note(f"overlap [10,15) delivered as {'the first copy (C)' if got[10] == 67 else 'the second copy (D)'}")
    for s in c.collect(0.2):
        check(not s.payload, f"more than 20 bytes delivered: {s.payload!r}")


# ---------------------------------------------------------------- options on the SYN


def syn_with(ctx, options):
    c = ctx.conn()
    synack = c.handshake(options=options)
    return c, synack


@case("RFC 9293 §3.1 (MUST-68: unknown options), issue 15 item 10")
def syn_with_mss_length_3(ctx):
    """SYN whose MSS option has length 3: the option is skipped by its length
    (not the segment), the SACK-permitted after it is still honoured, and the
    connection works."""
    c, synack = syn_with(ctx, b"\x02\x03\x05" + b"\x04\x02" + b"\x01\x01\x01")
    check(synack.sack_permitted, "option after the bad MSS was not parsed (no SACK-permitted)")
    c.echo(b"mss3")


@case("RFC 7323 §3.2, issue 15 item 10")
def syn_with_timestamps_length_9(ctx):
    """SYN whose timestamps option has length 9: skipped, so the SYN-ACK
    carries no timestamps; the SACK-permitted after it is honoured."""
    c, synack = syn_with(ctx, b"\x08\x09" + b"\x00" * 7 + b"\x04\x02" + b"\x01")
    check(synack.timestamps is None, "a 9-byte timestamps option was taken as timestamps")
    check(synack.sack_permitted, "option after the bad timestamps was not parsed")
    c.echo(b"ts9")


@case("RFC 7323 §2.2, issue 15 item 10")
def syn_with_window_scale_length_4(ctx):
    """SYN whose window-scale option has length 4: skipped, so the SYN-ACK has
    no window scale (window scaling is off both ways)."""
    c, synack = syn_with(ctx, b"\x03\x04\x07\x00" + OPT_SACK_PERM)
    check(synack.wscale is None, "a 4-byte window scale option was honoured")
    check(synack.sack_permitted, "option after the bad window scale was not parsed")
    c.echo(b"ws4")


@case("RFC 2018 §2, issue 15 item 10")
def syn_with_sack_permitted_length_3(ctx):
    """SYN whose SACK-permitted has length 3: skipped, so the SYN-ACK has no
    SACK-permitted."""
    c, synack = syn_with(ctx, b"\x04\x03\x00" + b"\x01" + opt_mss(1460))
    check(not synack.sack_permitted, "a 3-byte SACK-permitted was honoured")
    c.echo(b"sp3")


@case("RFC 9293 §3.1 (MUST-68), RFC 6994")
def syn_with_unknown_options(ctx):
    """SYN with unknown kinds (99, 76, experimental 253) between known ones:
    each skipped by its length, the others honoured."""
    c, synack = syn_with(ctx, b"\x63\x06abcd" + b"\x4c\x02" + opt_mss(1400) +
                         b"\xfd\x04\x12\x34" + OPT_SACK_PERM)
    check(synack.sack_permitted, "option after unknown kinds was not parsed")
    c.echo(b"unknown")


# ---------------------------------------------------------------- options on data


def data_with_options(ctx, options, payload):
    c = established(ctx)
    c.data(payload, options=options)
    return c


@case("RFC 9293 §3.1 (MUST-68)")
def data_with_unknown_option(ctx):
    """Data with an unknown option kind is delivered."""
    c = data_with_options(ctx, b"\x63\x06abcd\x01\x01", b"unknown-kind")
    check(c.read(12) == b"unknown-kind", "wrong echo")


@case("RFC 9293 §3.1, issue 15 item 10")
def data_with_mss_length_3(ctx):
    """Data carrying an MSS option of length 3 (a known kind, wrong length) is
    delivered: the option is skipped, not the segment."""
    c = data_with_options(ctx, b"\x02\x03\x05\x01", b"mss-len-3")
    check(c.read(9) == b"mss-len-3", "wrong echo")


@case("RFC 2018 §3, issue 15 item 10")
def data_with_sack_length_7(ctx):
    """Data carrying a SACK option of length 7 (not 2+8n) is delivered."""
    c = data_with_options(ctx, b"\x05\x07" + b"\x00" * 5 + b"\x01", b"sack-len-7")
    check(c.read(10) == b"sack-len-7", "wrong echo")


def malformed_option_bound(ctx, options, payload):
    """RFC 9293 §3.1 MUST-7: an illegal option length must not crash the
    receiver; the RFC suggests a reset, Linux stops parsing options and
    keeps the segment, dropping it is also safe. Whatever it does, the byte
    stream stays exact: after the segment we send the same bytes again, well
    formed, and they are delivered exactly once (or the connection is reset)."""
    c = established(ctx)
    seq = c.snd_nxt
    c.data(payload, options=options)
    mark = c._next
    first = c.collect(0.4)
    if any(s.flags & RST for s in first):
        ctx.note("answered with RST")
        c.closed = True
        return
    ctx.note("segment accepted (options ignored)" if c.acked_through() == c.snd_nxt
             else "segment dropped")
    c.data(payload, seq=seq)
    c._next = mark  # read the echo from whichever copy was delivered
    got = c.read(len(payload))
    check(got == payload, f"delivered {got!r}, sent {payload!r}")
    for s in c.collect(0.3):
        check(not s.payload or seq_diff(s.seq, c.rcv_nxt) < 0,
              f"delivered twice: {s.payload!r}")
    still_echoes(c)


@case("RFC 9293 §3.1 (MUST-7)")
def data_with_option_length_0(ctx):
    """An option of length 0 (a parser that skips by it loops forever): no
    crash, and the byte stream stays exact (malformed_option_bound)."""
    malformed_option_bound(ctx, b"\x63\x00\x01\x01", b"len0")


@case("RFC 9293 §3.1 (MUST-7)")
def data_with_option_length_1(ctx):
    """An option of length 1: no crash, the stream stays exact."""
    malformed_option_bound(ctx, b"\x02\x01\x01\x01", b"len1")


@case("RFC 9293 §3.1 (MUST-7)")
def data_with_option_past_header(ctx):
    """A timestamps option whose length runs past the data offset: no crash,
    the stream stays exact."""
    malformed_option_bound(ctx, b"\x01\x01\x08\x0a\x00\x00\x00\x00", b"past")


@case("RFC 9293 §3.1 (MUST-7)")
def data_with_truncated_option(ctx):
    """The option area ends on a kind byte with no length byte: no crash, the
    stream stays exact."""
    malformed_option_bound(ctx, b"\x01\x01\x01\x02", b"trunc")


# ---------------------------------------------------------------- malformed headers


def dropped_silently(ctx, send_bad):
    """A malformed segment carrying b"EVIL" at RCV.NXT gets no answer at all and
    changes nothing: the well-formed b"good" at the same sequence number is
    then echoed alone."""
    c = established(ctx)
    send_bad(c)
    c.expect_silence(0.4, "malformed segment")
    c.echo(b"good")
    for s in c.collect(0.2):
        check(not s.payload, f"extra bytes delivered: {s.payload!r}")


@case("RFC 9293 §3.1 (data offset)")
def data_offset_below_5(ctx):
    """Data offset 4 (a header shorter than 20 bytes): dropped without an
    answer, nothing delivered (dropped_silently)."""
    dropped_silently(ctx, lambda c: c.send(ACK | PSH, payload=b"EVIL", data_offset=4))


@case("RFC 9293 §3.1 (data offset)")
def data_offset_past_segment(ctx):
    """Data offset 15 (60 bytes) in a 24-byte segment: dropped silently."""
    dropped_silently(ctx, lambda c: c.send(ACK | PSH, payload=b"EVIL", data_offset=15))


@case("RFC 9293 §3.1")
def truncated_tcp_header(ctx):
    """An IPv4 datagram carrying only the first 12 bytes of a TCP header:
    dropped silently."""
    def send(c):
        whole = tcp_segment(ctx.src, ctx.dst, c.sport, ctx.port, c.snd_nxt, c.rcv_nxt, ACK | PSH,
                            WINDOW, b"", b"")
        c.send(ACK, raw=whole[:12], note=" (12-byte TCP header)")
    dropped_silently(ctx, send)


@case("RFC 9293 §3.1 (checksum), RFC 1122 §4.2.2.7")
def bad_checksum(ctx):
    """A data segment with a wrong checksum: dropped silently."""
    dropped_silently(ctx, lambda c: c.send(ACK | PSH, payload=b"EVIL", bad_checksum=True))


# ---------------------------------------------------------------- timers


def intervals(times):
    return [b - a for a, b in zip(times, times[1:])]


def check_backoff(gaps, what):
    """RFC 6298 §5.5 / RFC 1122 §4.2.2.17: each interval about doubles. The
    bounds (x1.5 .. x2.6) leave room for timer granularity, not for another
    policy."""
    for a, b in zip(gaps, gaps[1:]):
        check(1.5 <= b / a <= 2.6, f"{what}: interval {b:.3f} s after {a:.3f} s is not a "
                                   f"doubling (intervals {[round(g, 3) for g in gaps]})")


@case("RFC 6298 §5.5, RFC 8985 §7")
def retransmission_backoff(ctx):
    """The echo of our data is never acknowledged: the server retransmits the
    same bytes from SND.UNA, and from the second retransmission on each
    interval doubles (the first may be a RFC 8985 tail loss probe). The first
    retransmission comes after 0.15 to 3 s (RFC 6298 (2.4) recommends a 1 s
    floor, Linux and tinytcp both use 200 ms; the bound leaves timer slack)."""
    c = established(ctx)
    echo_seq = c.rcv_nxt
    c.data(b"retransmit-me")
    sends = []
    deadline = time.monotonic() + 20
    while len(sends) < 6 and time.monotonic() < deadline:
        s = c.next(max(deadline - time.monotonic(), 0))
        if s is None:
            break
        if s.payload:
            check(s.seq == echo_seq and s.payload == b"retransmit-me",
                  f"retransmission is not the original bytes from SND.UNA: {s.payload!r}")
            sends.append(s.t)
    check(len(sends) == 6, f"only {len(sends)} transmissions within 20 s")
    gaps = intervals(sends)
    ctx.note("intervals " + ", ".join(f"{g:.3f}" for g in gaps) + " s")
    check(0.15 <= gaps[0] <= 3.0, f"first retransmission after {gaps[0]:.3f} s")
    check_backoff(gaps[1:], "retransmission")


def is_window_probe(snd_una):
    """A zero-window probe: one byte of new data at SND.UNA (RFC 9293
    §3.8.6.1), or Linux's empty segment at SND.UNA-1 that forces an ACK."""
    def probe(s):
        return (len(s.payload) == 1 and s.seq == snd_una) or \
               (not s.payload and s.seq == seq_add(snd_una, -1))
    return probe


@case("RFC 9293 §3.8.6.1, RFC 1122 §4.2.2.17, issue 15 item 9")
def zero_window_probing(ctx):
    """Our data segment advertises window 0, so its echo is due but may not be
    sent: the server sends nothing beyond the window, probes, and backs the
    probes off exponentially; we answer each probe with window 0. When we then
    open the window with a pure ACK (mid-interval), the echo goes out at once
    (within 0.1 s; the next probe is over 1 s away, so a sender that waits for
    it or for any timer fails)."""
    c = established(ctx)
    snd_una = c.rcv_nxt
    c.data(b"zero-window", window=0)
    probe = is_window_probe(snd_una)
    probes = []
    deadline = time.monotonic() + 25
    while len(probes) < 4 and time.monotonic() < deadline:
        s = c.next(max(deadline - time.monotonic(), 0))
        if s is None:
            break
        check(len(s.payload) <= 1, f"{len(s.payload)} bytes sent into a zero window")
        if probe(s):
            probes.append(s.t)
            c.send(ACK, window=0, ack=snd_una, note=" (window still 0)")
    check(len(probes) == 4, f"only {len(probes)} zero-window probes within 25 s")
    gaps = intervals(probes)
    ctx.note("probe intervals " + ", ".join(f"{g:.3f}" for g in gaps) + " s")
    check_backoff(gaps, "zero-window probe")
    time.sleep(0.1)
    opened = time.time()
    c.send(ACK, window=WINDOW, ack=snd_una, note=" (window opens)")
    got = c.read(len(b"zero-window"), timeout=0.1)
    check(got == b"zero-window", f"echo after the window opened: {got!r}")
    ctx.note(f"echo {c.received[-1].t - opened:.3f} s after the window opened")


# ---------------------------------------------------------------- closing


@case("RFC 9293 §3.6, §3.10.7.4 (LAST-ACK)")
def fin_exchange(ctx):
    """Data and FIN in one segment: the echo server sends the data back,
    acknowledges the FIN and closes (FIN). Its FIN, not acknowledged, is
    retransmitted unchanged; once acknowledged the connection is gone and a
    later segment gets a RST."""
    c = established(ctx)
    c.send(ACK | PSH | FIN, payload=b"bye")
    c.snd_nxt = seq_add(c.snd_nxt, 4)
    got = b""
    fins = []
    deadline = time.monotonic() + 5
    while len(fins) < 2 and time.monotonic() < deadline:
        s = c.next(max(deadline - time.monotonic(), 0))
        if s is None:
            break
        check(not s.flags & RST, "RST during the close")
        if s.payload and s.seq == c.rcv_nxt:
            got += s.payload
            c.rcv_nxt = seq_add(c.rcv_nxt, len(s.payload))
            c.send(ACK, note=" (data only, not the FIN)")
        if s.flags & FIN:
            fins.append(s)
    check(got == b"bye", f"echo before the FIN: {got!r}")
    check(len(fins) == 2, "the server's FIN was not retransmitted while unacknowledged")
    check(fins[0].ack == c.snd_nxt, "the server's FIN does not acknowledge ours")
    check(seq_add(fins[0].seq, len(fins[0].payload)) == seq_add(fins[1].seq, len(fins[1].payload)),
          "the retransmitted FIN is at another sequence number")
    fin_seq = seq_add(fins[0].seq, len(fins[0].payload))
    c.rcv_nxt = seq_add(fin_seq, 1)
    c.send(ACK, note=" (ACK of the FIN)")
    c.expect_silence(0.3, "final ACK")
    c.send(ACK | PSH, payload=b"late")
    rst = c.expect(lambda s: True, 1.0, "RST for a closed connection")
    check(rst.flags & RST, "the closed connection answered without RST")
    c.closed = True


def into_time_wait(ctx):
    """An HTTP/1.0 GET: the server answers and closes first (FIN); we
    acknowledge its FIN with our own, and its ACK of ours leaves it in
    TIME-WAIT. Returns the connection, SND.NXT past our FIN."""
    c = ctx.conn(ctx.http_port)
    c.handshake()
    c.data(b"GET /index.html HTTP/1.0\r\n\r\n")
    body = b""
    deadline = time.monotonic() + 3
    while True:
        s = c.next(max(deadline - time.monotonic(), 0))
        check(s is not None, f"no FIN from the HTTP server (got {body[:40]!r})")
        check(not s.flags & RST, "RST from the HTTP server")
        if s.payload and s.seq == c.rcv_nxt:
            body += s.payload
            c.rcv_nxt = seq_add(c.rcv_nxt, len(s.payload))
        if s.flags & FIN and seq_add(s.seq, len(s.payload)) == c.rcv_nxt:
            break
        if s.payload:
            c.ack_now()
    check(body.startswith(b"HTTP/1.") and b" 200 " in body.split(b"\r\n")[0],
          f"not a 200 response: {body[:40]!r}")
    c.rcv_nxt = seq_add(c.rcv_nxt, 1)
    c.send(ACK | FIN, note=" (ACK of its FIN, our FIN)")
    c.snd_nxt = seq_add(c.snd_nxt, 1)
    c.expect(lambda s: s.has(ACK) and s.ack == c.snd_nxt, 1.0, "ACK of our FIN")
    c.closed = True  # nothing to reset: TIME-WAIT ends by itself
    return c


@case("RFC 9293 §3.10.7.4 (TIME-WAIT)")
def time_wait_acks_retransmitted_fin(ctx):
    """The server closed first and is in TIME-WAIT: our FIN, retransmitted
    (as if its ACK were lost), is acknowledged again, not reset."""
    c = into_time_wait(ctx)
    c.send(ACK | FIN, seq=seq_add(c.snd_nxt, -1), note=" (our FIN again)")
    s = c.expect(lambda s: True, 1.0, "ACK of the retransmitted FIN")
    check(not s.flags & RST, "RST in TIME-WAIT for a retransmitted FIN")
    check(s.has(ACK) and s.ack == c.snd_nxt, "the answer does not acknowledge our FIN")


@case("RFC 9293 §3.10.7.4 (TIME-WAIT), RFC 1122 §4.2.2.13, RFC 6191, issue 15 item 3")
def syn_in_time_wait_opens_new_connection(ctx):
    """The server is in TIME-WAIT; a new SYN on the same 4-tuple whose sequence
    number is above the old connection's (RFC 1122 §4.2.2.13, RFC 6191 without
    timestamps) reopens it: SYN-ACK, then a working request."""
    old = into_time_wait(ctx)
    c = ctx.conn(ctx.http_port)
    c.sport = old.sport
    c.iss = seq_add(old.snd_nxt, 100000)
    c.snd_nxt = c.iss
    c.handshake(timeout=1.0)
    c.data(b"GET /index.html HTTP/1.0\r\n\r\n")
    got = c.read(8, timeout=2.0)
    check(got.startswith(b"HTTP/1."), f"no response on the reopened connection: {got!r}")


# ---------------------------------------------------------------- floods


@case("RFC 5961 §7, §3.2, issue 15 item 6")
def blind_rst_flood_is_throttled(ctx):
    """500 RSTs at random in-window sequence numbers (never RCV.NXT) within
    about 0.1 s: each would earn a challenge ACK, but the answers are
    throttled (§7: an implementation SHOULD limit challenge ACKs; here at most
    20), and the connection survives."""
    c = established(ctx)
    rng = random.Random(c.iss)
    for _ in range(500):
        c.send(RST | ACK, seq=seq_add(c.snd_nxt, rng.randrange(1, c.server_window)),
               note=" (blind)")
    answers = [s for s in c.collect(1.0) if is_challenge_ack(c)(s)]
    ctx.note(f"{len(answers)} challenge ACKs for 500 RSTs")
    check(len(answers) >= 1, "no challenge ACK at all")
    check(len(answers) <= 20, f"{len(answers)} challenge ACKs for 500 RSTs: not throttled")
    still_echoes(c)


def _flood(link_args, src, dst, port, stop_at, sent):
    """Runs in a child process: spoofed SYNs from `src` at random ports, in
    bursts of 50 every 2 ms (about 20,000/s) so that the link itself (a veth's
    backlog of 1,000 packets) never drops the real client's SYN."""
    from wire import Link
    link = Link(*link_args)
    rng = random.Random(os.getpid())
    frames = []
    for sport in rng.sample(range(1024, 65535), 30000):
        seg = tcp_segment(src, dst, sport, port, rng.getrandbits(32), 0, SYN, 65535,
                          SYN_OPTS)
        frames.append(ipv6(src, dst, seg) if ":" in src else ipv4(src, dst, seg))
    i = 0
    while time.monotonic() < stop_at and i < len(frames):
        for frame in frames[i:i + 50]:
            link.send(frame)
        i += 50
        time.sleep(0.002)
    sent.value = i
    link.close()


@case("RFC 4987 §3.6, issue 15 item 2")
def syn_flood_leaves_room_for_a_client(ctx):
    """30,000 spoofed SYNs from random ports (bursts of 50 every 2 ms, far more
    than any listen backlog); 1 s into the flood a real client's handshake and
    echo complete within 1 s of its SYN, without a SYN retransmission."""
    stop_at = time.monotonic() + 3.0
    sent = multiprocessing.Value("l", 0)
    child = multiprocessing.Process(
        target=_flood, args=(ctx.link_args, ctx.flood_src, ctx.dst, ctx.port, stop_at, sent))
    child.start()
    try:
        time.sleep(1.0)
        c = ctx.conn()
        start = time.monotonic()
        c.handshake(timeout=1.0)
        c.echo(b"through the flood", timeout=max(1.0 - (time.monotonic() - start), 0.05))
        ctx.note(f"handshake and echo in {time.monotonic() - start:.3f} s during the flood")
    finally:
        child.join(10)
        if child.is_alive():
            child.terminate()
            child.join()
        ctx.note(f"{sent.value} spoofed SYNs")
