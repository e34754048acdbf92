#include "tcp/segmenter.hh"

#include <algorithm>

namespace tinytcp::tcp {

void Segmenter::transmit_range(SendState& s, uint64_t start, uint32_t length, bool syn, bool fin,
                               Instant now, const Transmit& transmit) {
  TcpSegment seg;
  seg.seqno = Wrap32::wrap(start, s.isn);
  seg.syn = syn;
  seg.fin = fin;
  const uint32_t payload = length - (syn ? 1u : 0u) - (fin ? 1u : 0u);
  if (payload > 0) {
    // Sequence number n > 0 holds stream byte n - 1; bytes below SND.UNA are
    // already popped from the stream.
    const uint64_t first = start + (syn ? 1 : 0) - 1;
    const uint64_t offset = first - s.outbound.bytes_popped();
    const std::string_view view = s.outbound.peek_at(offset);
    if (view.size() >= payload) {
      seg.payload = view.substr(0, payload);
    } else {
      // The segment crosses the ring's wrap point: one copy into scratch.
      scratch_.assign(view);
      const std::string_view rest = s.outbound.peek_at(offset + view.size());
      scratch_.append(rest.substr(0, payload - view.size()));
      seg.payload = scratch_;
    }
    seg.psh = first + payload == s.outbound.bytes_pushed();
  }
  if (syn) {
    // What we offer; TcpConnection adds the window scale (a receive-side choice).
    OptionNegotiation::offer(seg.options, s.config, s.timestamp_value(now));
  } else if (s.peer.timestamps) {
    seg.options.timestamps = Timestamps{s.timestamp_value(now), 0};
  }
  ++s.stats.segments_sent;
  s.stats.bytes_sent += payload;
  transmit(seg);
  s.last_sent = now;
  s.cc->on_packet_sent(now, length, s.bytes_in_flight());
}

void Segmenter::send_syn(const SendPath& p, Instant now, const Transmit& transmit) {
  SendState& s = p.s;
  s.syn_sent = true;
  s.board.add(0, 1, true, false, now);
  p.rate.stamp(s.board[s.board.size() - 1], true, now);
  s.snd_nxt = 1;
  s.unacked_since = now;
  transmit_range(s, 0, 1, true, false, now, transmit);
  p.timers.arm_rto(s, now);
}

void Segmenter::retransmit(const SendPath& p, size_t index, Instant now, const Transmit& transmit) {
  SendState& s = p.s;
  // Sent when it fitted; since then the receiver may hold more SACK blocks
  // than the segment leaves room for: retransmit the part that fits now.
  const OutstandingSegment& whole = s.board[index];
  const uint32_t payload = whole.length - (whole.syn ? 1u : 0u) - (whole.fin ? 1u : 0u);
  if (!whole.syn && payload > s.new_segment_payload()) {
    s.board.split(index, s.new_segment_payload());
    ++s.stats.retransmissions_split;
  }
  const OutstandingSegment seg = s.board[index];
  const bool pipe_was_empty = s.bytes_in_flight() == 0;
  s.board.on_retransmitted(index, now);
  p.rate.stamp(s.board[index], pipe_was_empty, now);
  p.pacer.on_sent(seg.length, s.cc->pacing_rate(), now);
  ++s.stats.retransmitted_segments;
  s.stats.retransmitted_bytes += seg.length - (seg.syn ? 1u : 0u) - (seg.fin ? 1u : 0u);
  if (p.recovery.in_recovery() && s.peer.sack) {
    ++s.stats.sack_recovered_segments;
  }
  transmit_range(s, seg.start, seg.length, seg.syn, seg.fin, now, transmit);
  p.timers.arm_rto(s, now);
}

bool Segmenter::send_retransmissions(const SendPath& p, Instant now, const Transmit& transmit) {
  // The same rule repairs cumulative-ACK recovery and the go-back after a
  // timeout.
  SendState& s = p.s;
  while (const auto index = s.board.next_lost()) {
    const OutstandingSegment& seg = s.board[*index];
    if (!p.recovery.retransmit_now() &&
        (s.bytes_in_flight() + seg.length > s.cc->cwnd() || s.segment_window_full())) {
      p.recovery.set_cwnd_limited(true);
      return false;  // lost data first: no new data either
    }
    p.recovery.clear_retransmit_now();
    retransmit(p, *index, now, transmit);
  }
  p.recovery.clear_retransmit_now();
  return true;
}

void Segmenter::send_new_data(const SendPath& p, Instant now, const Transmit& transmit) {
  SendState& s = p.s;
  p.pacer.clear_release();
  while (!s.fin_sent) {
    const uint64_t pending = s.pending_bytes();
    const bool closed = s.outbound.is_closed();
    if (pending == 0 && !closed) {
      return;
    }
    const uint64_t usable_wnd = s.usable_window();
    const uint64_t flight = s.bytes_in_flight();
    const uint64_t cwnd = s.cc->cwnd();
    const uint64_t usable_cwnd = cwnd > flight ? cwnd - flight : 0;
    const bool outstanding = s.snd_nxt > s.snd_una;
    if (s.segment_window_full()) {
      p.recovery.set_cwnd_limited(true);
      return;
    }

    if (pending == 0) {
      // FIN alone: one sequence number, inside both windows.
      if (usable_wnd == 0 || usable_cwnd == 0) {
        return;
      }
      const bool pipe_was_empty = flight == 0;
      s.board.add(s.snd_nxt, 1, false, true, now);
      p.rate.stamp(s.board[s.board.size() - 1], pipe_was_empty, now);
      transmit_range(s, s.snd_nxt, 1, false, true, now, transmit);
      if (!outstanding) {
        s.unacked_since = now;
      }
      s.snd_nxt += 1;
      s.fin_sent = true;
      p.timers.arm_rto(s, now);
      return;
    }

    const uint64_t full = s.new_segment_payload();
    const uint64_t len = std::min<uint64_t>({pending, full, usable_wnd});
    if (len == 0) {
      return;  // zero window (persist timer) or window full
    }
    if (len > usable_cwnd) {
      p.recovery.set_cwnd_limited(true);
      return;
    }
    if (len < full) {
      if (len < pending) {
        // RFC 9293 §3.8.6.2.1 sender SWS avoidance: a window-limited small
        // segment only when nothing is outstanding or it is half the largest
        // window the peer has offered.
        if (outstanding && len < s.max_wnd / 2) {
          return;
        }
      } else if (s.config.nagle && outstanding && !closed) {
        // RFC 896 / RFC 1122 §4.2.3.4: no small segment while data is
        // unacknowledged. Closing pushes the tail with its FIN.
        return;
      }
    }
    const bool fin = closed && len == pending && len + 1 <= usable_wnd && len + 1 <= usable_cwnd;
    const uint32_t length = static_cast<uint32_t>(len) + (fin ? 1u : 0u);
    if (!p.pacer.allows(length, s.cc->pacing_rate(), s.smss, now)) {
      return;
    }
    if (!outstanding && s.last_sent) {
      // RFC 5681 §4.1, RFC 9438 §5.8: sending restarts after an idle period.
      s.cc->on_transmit_start(
          TransmitStartEvent{now, now - *s.last_sent, s.rtt.rto(), s.config.slow_start_after_idle});
    }
    s.board.add(s.snd_nxt, length, false, fin, now);
    p.rate.stamp(s.board[s.board.size() - 1], flight == 0, now);
    p.pacer.on_sent(length, s.cc->pacing_rate(), now);
    transmit_range(s, s.snd_nxt, length, false, fin, now, transmit);
    if (!outstanding) {
      s.unacked_since = now;
    }
    p.recovery.on_new_data_sent(s, length);
    s.snd_nxt += length;
    s.fin_sent = fin;
    p.timers.arm_rto(s, now);
  }
}

bool Segmenter::send_probe_new_data(const SendPath& p, Instant now, const Transmit& transmit) {
  SendState& s = p.s;
  const uint64_t pending = s.pending_bytes();
  const uint64_t usable_wnd = s.usable_window();
  const uint64_t len = std::min<uint64_t>({pending, s.new_segment_payload(), usable_wnd});
  if (s.fin_sent || len == 0) {
    return false;
  }
  const bool fin = s.outbound.is_closed() && len == pending && len + 1 <= usable_wnd;
  const uint32_t length = static_cast<uint32_t>(len) + (fin ? 1u : 0u);
  s.board.add(s.snd_nxt, length, false, fin, now);
  transmit_range(s, s.snd_nxt, length, false, fin, now, transmit);
  s.snd_nxt += length;
  s.fin_sent = fin;
  return true;
}

bool Segmenter::send_zero_window_probe(SendState& s, Instant now, const Transmit& transmit) {
  if (!s.board.empty()) {
    // Re-send the first outstanding segment (an earlier probe) as the probe.
    const OutstandingSegment seg = s.board.front();
    s.board.on_retransmitted(0, now);
    transmit_range(s, seg.start, seg.length, seg.syn, seg.fin, now, transmit);
  } else if (s.pending_bytes() > 0) {
    // RFC 9293 §3.8.6.1: one octet of new data beyond the zero window.
    const bool fin = s.outbound.is_closed() && s.pending_bytes() == 1;
    const uint32_t length = fin ? 2u : 1u;
    s.probe_start = s.snd_nxt;
    s.board.add(s.snd_nxt, length, false, fin, now);
    transmit_range(s, s.snd_nxt, length, false, fin, now, transmit);
    s.unacked_since = now;
    s.snd_nxt += length;
    s.fin_sent = fin;
  } else if (s.outbound.is_closed() && !s.fin_sent) {
    s.probe_start = s.snd_nxt;
    s.board.add(s.snd_nxt, 1, false, true, now);
    transmit_range(s, s.snd_nxt, 1, false, true, now, transmit);
    s.unacked_since = now;
    s.snd_nxt += 1;
    s.fin_sent = true;
  } else {
    return false;
  }
  return true;
}

bool Segmenter::take_back_zero_window_probe(SendState& s) {
  // The window opened with nothing but our zero-window probe outstanding,
  // not acknowledged (the receiver dropped it). Waiting for its RTO, or
  // holding the rest behind it (Nagle), would leave the window open and
  // unused: take the probe back, as if it had never been sent, so the data
  // goes out at once (Linux sends no data in its probes for the same
  // reason).
  if (!s.probe_start || *s.probe_start != s.snd_una || s.board.empty() ||
      s.board.front().start != s.snd_una) {
    return false;
  }
  s.board.clear();
  s.snd_nxt = s.snd_una;
  s.fin_sent = false;
  s.probe_start.reset();
  ++s.stats.probes_taken_back;
  return true;
}

}  // namespace tinytcp::tcp
