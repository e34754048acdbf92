"""A TCP client done by hand, one segment at a time.

`Conn` keeps just enough state to drive a server through a case: our ISS and
SND.NXT, the server's IRS and RCV.NXT, the last window the server advertised.
It sends exactly the segments a case asks for and records every segment of its
4-tuple in both directions in the case's trace, which is printed when a case
fails or is an expected failure, so the report shows the exchange itself.
Over IPv6 (`Context.family` 6) the same segments go in IPv6 datagrams, and the
ICMPv6 messages the server sends us are kept in `Context.icmp` for the cases
of cases6.py.
"""
import random
import struct
import time

from wire import (ACK, OPT_SACK_PERM, PSH, RST, SYN, flag_names, ip_bytes, ipv4, opt_mss,
                  parse_segment, seq_add, seq_diff, tcp_segment)
from wire6 import ICMPV6, TCP, ipv6, parse_icmpv6

SYN_OPTIONS = opt_mss(1460) + OPT_SACK_PERM  # no window scale, no timestamps
WINDOW = 65535


class CaseFailure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise CaseFailure(message)


class Trace:
    def __init__(self):
        self.start = time.time()
        self.lines = []

    def add(self, direction, conn, flags, seq, ack, window, length, note=""):
        t = time.time() - self.start
        rseq, rack = seq, ack
        if direction == ">":
            rseq = seq_diff(seq, conn.iss)
            rack = seq_diff(ack, conn.irs) if conn.irs is not None and flags & ACK else ack
        else:
            rseq = seq_diff(seq, conn.irs) if conn.irs is not None else seq
            rack = seq_diff(ack, conn.iss) if flags & ACK else ack
        self.lines.append(f"  {t:7.3f} :{conn.sport} {direction} {flag_names(flags):3} "
                          f"seq={rseq} ack={rack} win={window} len={length}{note}")


class Context:
    """What every case gets: where the server is and how to reach it."""

    def __init__(self, link, src, dst, port, target, flood_src, http_port=80):
        self.link = link
        self.src = src
        self.dst = dst
        self.port = port
        self.http_port = http_port
        self.target = target
        self.flood_src = flood_src
        self.family = 6 if ":" in dst else 4
        self.trace = Trace()
        self.conns = []
        self.notes = []
        self.icmp = []  # ICMPv6 messages from the server to us, in arrival order
        self._port = random.randrange(20000, 40000)

    def next_port(self):
        self._port += 1
        return self._port

    def conn(self, port=None):
        """A new connection to the echo port (or `port`) from a fresh port."""
        c = Conn(self, port or self.port)
        self.conns.append(c)
        return c

    def note(self, text):
        self.notes.append(text)

    def new_case(self):
        self.trace = Trace()
        self.conns = []
        self.notes = []
        self.icmp = []

    def wrap(self, tcp):
        """The IP datagram around a TCP segment of ours."""
        if self.family == 6:
            return ipv6(self.src, self.dst, tcp)
        return ipv4(self.src, self.dst, tcp)

    def receive(self, timeout, until_icmp=False):
        """The next datagram from the server to us, as (time, bytes), or None.
        ICMPv6 messages are kept in `icmp` (and traced) on the way; with
        `until_icmp` the first one ends the wait (None)."""
        deadline = time.monotonic() + timeout
        while True:
            got = self.link.recv(max(deadline - time.monotonic(), 0))
            if got is None:
                return None
            t, datagram = got
            if self.family == 6:
                if datagram[8:24] != ip_bytes(self.dst) or datagram[24:40] != ip_bytes(self.src):
                    continue
                if datagram[6] == ICMPV6:
                    msg = parse_icmpv6(t, datagram)
                    if msg is not None:
                        self.icmp.append(msg)
                        self.trace.lines.append(
                            f"  {time.time() - self.trace.start:7.3f} < ICMPv6 type {msg.kind} "
                            f"code {msg.code} field {msg.field} quote {len(msg.body)} bytes")
                        if until_icmp:
                            return None
                    continue
            elif datagram[12:16] != ip_bytes(self.dst) or datagram[16:20] != ip_bytes(self.src):
                continue
            return t, datagram

    def expect_icmp(self, predicate, timeout, what):
        """Waits for an ICMPv6 message satisfying `predicate` (TCP segments that
        arrive meanwhile go to no connection); fails after `timeout`."""
        deadline = time.monotonic() + timeout
        seen = 0
        while True:
            for msg in self.icmp[seen:]:
                if predicate(msg):
                    return msg
            seen = len(self.icmp)
            left = deadline - time.monotonic()
            if left <= 0:
                raise CaseFailure(f"no {what} within {timeout} s")
            self.receive(left, until_icmp=True)


class Conn:
    def __init__(self, ctx, port):
        self.ctx = ctx
        self.link = ctx.link
        self.port = port
        self.sport = ctx.next_port()
        self.iss = random.getrandbits(32)
        self.snd_nxt = self.iss
        self.irs = None
        self.rcv_nxt = None
        self.server_window = None
        self.server_snd_nxt = None  # highest sequence the server has sent, + 1
        self.received = []  # every segment of this 4-tuple, in arrival order
        self._next = 0
        self.closed = False

    # ---- sending ----
    def send(self, flags=ACK, seq=None, ack=None, payload=b"", window=WINDOW, options=b"",
             data_offset=None, bad_checksum=False, raw=None, note="", wrap=None):
        """Sends one segment; seq and ack default to SND.NXT and RCV.NXT. `raw`
        replaces the whole TCP part (for truncated headers); `wrap`, if given,
        turns the TCP bytes into the list of datagrams to send (extension
        headers, fragments) instead of one plain IP datagram."""
        seq = self.snd_nxt if seq is None else seq
        ack = (self.rcv_nxt or 0) if ack is None else ack
        if raw is None:
            raw = tcp_segment(self.ctx.src, self.ctx.dst, self.sport, self.port, seq, ack,
                              flags, window, options, payload, data_offset, bad_checksum)
        self.ctx.trace.add(">", self, flags, seq, ack, window, len(payload), note)
        for datagram in (wrap(raw) if wrap else [self.ctx.wrap(raw)]):
            self.link.send(datagram)

    def data(self, payload, seq=None, advance=True, **kw):
        """Data with ACK+PSH at SND.NXT (or `seq`); advances SND.NXT past it."""
        seq = self.snd_nxt if seq is None else seq
        self.send(ACK | PSH, seq=seq, payload=payload, **kw)
        if advance and seq_diff(seq_add(seq, len(payload)), self.snd_nxt) > 0:
            self.snd_nxt = seq_add(seq, len(payload))

    def ack_now(self, window=WINDOW):
        self.send(ACK, window=window)

    def reset(self):
        self.send(RST | ACK, note=" (cleanup)")
        self.closed = True

    # ---- receiving ----
    def _pull(self, timeout):
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            got = self.ctx.receive(max(left, 0))
            if got is None:
                return False
            t, datagram = got
            if self.ctx.family == 6:
                if datagram[6] != TCP:  # the server's segments carry no extension headers
                    continue
                ihl = 40
            else:
                if datagram[9] != 6:
                    continue
                ihl = (datagram[0] & 0xF) * 4
            sport, dport = struct.unpack("!HH", datagram[ihl:ihl + 4])
            if sport != self.port or dport != self.sport:
                continue
            seg = parse_segment(t, datagram, self.link.gso_size)
            note = ""
            if seg.sack:
                note += " sack=" + ",".join(
                    f"{seq_diff(l, self.iss)}-{seq_diff(r, self.iss)}" for l, r in seg.sack)
            opts = [name for name, on in (("mss", seg.mss is not None),
                                          ("wscale", seg.wscale is not None),
                                          ("sackOK", seg.sack_permitted),
                                          ("ts", seg.timestamps is not None)) if on]
            if opts:
                note += " opts=" + ",".join(opts)
            if seg.payload:
                note += f" data={seg.payload[:24]!r}"
            self.ctx.trace.add("<", self, seg.flags, seg.seq, seg.ack, seg.window,
                               len(seg.payload), note)
            self.received.append(seg)
            if self.irs is not None and not seg.flags & RST:
                self.server_window = seg.window
                end = seq_add(seg.seq, seg.seg_len)
                if self.server_snd_nxt is None or seq_diff(end, self.server_snd_nxt) > 0:
                    self.server_snd_nxt = end
            return True

    def next(self, timeout):
        """The next segment from the server not yet looked at, or None."""
        deadline = time.monotonic() + timeout
        while self._next >= len(self.received):
            left = deadline - time.monotonic()
            if left <= 0 or not self._pull(left):
                return None
        seg = self.received[self._next]
        self._next += 1
        return seg

    def expect(self, predicate, timeout, what):
        """Skips segments until one satisfies `predicate`; fails after `timeout`."""
        deadline = time.monotonic() + timeout
        while True:
            seg = self.next(max(deadline - time.monotonic(), 0))
            if seg is None:
                raise CaseFailure(f"no {what} within {timeout} s")
            if predicate(seg):
                return seg

    def collect(self, duration):
        """Every segment the server sends in the next `duration` seconds."""
        deadline = time.monotonic() + duration
        out = []
        while True:
            seg = self.next(max(deadline - time.monotonic(), 0))
            if seg is None:
                return out
            out.append(seg)

    def expect_silence(self, duration, what):
        got = self.collect(duration)
        check(not got, f"{what}: expected no reply, got {len(got)} segment(s), first "
                       f"{flag_names(got[0].flags) if got else ''}")

    # ---- whole steps ----
    def handshake(self, options=SYN_OPTIONS, window=WINDOW, timeout=2.0):
        """SYN, SYN-ACK, ACK. Returns the SYN-ACK."""
        self.send(SYN, seq=self.iss, ack=0, window=window, options=options)
        self.snd_nxt = seq_add(self.iss, 1)
        synack = self.expect(lambda s: s.has(SYN | ACK) or s.flags & RST, timeout, "SYN-ACK")
        check(not synack.flags & RST, "the SYN was answered with RST")
        check(synack.ack == self.snd_nxt, f"SYN-ACK acknowledges {seq_diff(synack.ack, self.iss)}, "
                                          "not ISS+1")
        self.irs = synack.seq
        self.rcv_nxt = seq_add(synack.seq, 1)
        self.server_window = synack.window
        self.server_snd_nxt = self.rcv_nxt
        self.send(ACK)
        return synack

    def read(self, n, timeout=3.0, window=WINDOW):
        """Reads `n` in-order bytes of the server's stream, ACKing every data
        segment; bytes before RCV.NXT (retransmissions) are trimmed."""
        out = b""
        deadline = time.monotonic() + timeout
        while len(out) < n:
            seg = self.next(max(deadline - time.monotonic(), 0))
            if seg is None:
                raise CaseFailure(f"read {len(out)} of {n} bytes ({out!r}) within {timeout} s")
            check(not seg.flags & RST, f"RST while reading (after {out!r})")
            if not seg.payload:
                continue
            offset = seq_diff(self.rcv_nxt, seg.seq)
            if 0 <= offset < len(seg.payload):
                fresh = seg.payload[offset:]
                out += fresh
                self.rcv_nxt = seq_add(self.rcv_nxt, len(fresh))
            self.send(ACK, window=window)
        return out

    def echo(self, payload, timeout=3.0):
        self.data(payload)
        got = self.read(len(payload), timeout)
        check(got == payload, f"echo returned {got!r}, sent {payload!r}")

    def acked_through(self):
        """The highest ACK number the server has sent so far."""
        best = None
        for seg in self.received:
            if seg.flags & ACK and not seg.flags & RST:
                if best is None or seq_diff(seg.ack, best) > 0:
                    best = seg.ack
        return best

