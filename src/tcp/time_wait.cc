#include "tcp/time_wait.hh"

#include "tcp/tcp_sender.hh"

namespace tinytcp::tcp {

namespace {

// RFC 7323 §5.3 R1: a TSval older than TS.Recent (modulo 2^32).
bool paws_rejects(const TimeWait& tw, const TcpSegment& segment) {
  return tw.timestamps && segment.options.timestamps && !segment.rst &&
         static_cast<int32_t>(segment.options.timestamps->value - tw.ts_recent) < 0;
}

// RFC 6191 §2 with timestamps; RFC 1122 §4.2.2.13 without: a SYN is from a
// new incarnation when its TSval is newer than TS.Recent or its sequence
// number is past the old incarnation's.
bool new_incarnation(const TimeWait& tw, const TcpSegment& segment) {
  if (!segment.syn || segment.ack || segment.rst) {
    return false;
  }
  if (seq_gt(segment.seqno, tw.rcv_nxt)) {
    return true;
  }
  return tw.timestamps && segment.options.timestamps &&
         static_cast<int32_t>(segment.options.timestamps->value - tw.ts_recent) > 0;
}

}  // namespace

TcpSegment time_wait_ack(const TimeWait& tw, Instant now) {
  TcpSegment ack;
  ack.seqno = tw.snd_nxt;
  ack.ackno = tw.rcv_nxt;
  ack.ack = true;
  ack.window = tw.window;
  if (tw.timestamps) {
    ack.options.timestamps =
        Timestamps{TcpSender::timestamp_clock(tw.ts_offset, now), tw.ts_recent};
  }
  return ack;
}

TimeWaitVerdict time_wait_receive(TimeWait& tw, const TcpSegment& segment, Instant now,
                                  Duration lifetime, Duration ack_interval) {
  TimeWaitVerdict out;
  const bool paws_reject = paws_rejects(tw, segment);
  if (!paws_reject && segment.seqno == tw.rcv_nxt &&
      (segment.sequence_length() == 0 || segment.rst)) {
    // In the window, which is empty after the peer's FIN: only a bare ACK
    // or a RST fits.
    if (segment.rst) {
      out.action = TimeWaitAction::Close;
      return out;
    }
    if (tw.timestamps && segment.options.timestamps) {
      tw.ts_recent = segment.options.timestamps->value;
    }
    return out;
  }
  if (!paws_reject && new_incarnation(tw, segment)) {
    out.action = TimeWaitAction::NewConnection;
    // As Linux: past the old incarnation's sequence space and window, so no
    // old duplicate of ours can be taken for new data.
    out.isn = tw.snd_nxt + 65535u + 2u;
    return out;
  }
  if (segment.rst) {
    return out;  // RFC 9293 §3.10.7.4 first check: not acceptable, dropped
  }
  if (segment.fin) {
    tw.expires = now + lifetime;  // RFC 9293 §3.10.7.4: restart the 2 MSL timeout
  }
  // RFC 9293 §3.10.7.4: an unacceptable segment is answered with an ACK.
  // Those carrying no data could be an ACK loop or a flood: at most one per
  // `ack_interval` (RFC 5961 §7, Linux's tcp_oow_rate_limited).
  const bool carries_data = !segment.payload.empty() || segment.fin;
  if (!carries_data || segment.syn) {
    if (tw.last_ack && now - *tw.last_ack < ack_interval) {
      return out;
    }
    tw.last_ack = now;
  }
  out.action = TimeWaitAction::Ack;
  out.ack = time_wait_ack(tw, now);
  return out;
}

}  // namespace tinytcp::tcp
