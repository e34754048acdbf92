#include "tcp/rack_tlp.hh"

#include <algorithm>
#include <chrono>

namespace tinytcp::tcp {

Instant RackTlp::ambiguous_after(const SendState& s, const TcpSegment& segment, Instant now) const {
  // RFC 8985 §6.2 step 2: a retransmission delivered less than min_rtt after
  // it was sent, or sent after the TSval this ACK echoes, may be the
  // original's delivery; it gives RACK no sample.
  Instant bound = now - s.rtt.min_rtt();
  // The echo only matters when retransmissions are outstanding (it costs
  // a division per ACK otherwise).
  const bool retransmissions = s.board.retransmitted_bytes() > 0 || tlp_.outstanding();
  if (retransmissions && s.peer.timestamps && segment.options.timestamps) {
    const auto elapsed =
        static_cast<int32_t>(s.timestamp_value(now) - segment.options.timestamps->echo_reply);
    if (elapsed >= 0) {
      // TSval is the send time in whole milliseconds: anything sent before
      // the end of the echoed millisecond may be what is acknowledged.
      const auto now_ms = std::chrono::floor<std::chrono::milliseconds>(now.since_epoch());
      const Instant echoed = Instant::from_epoch(now_ms - std::chrono::milliseconds(elapsed) +
                                                 std::chrono::milliseconds(1) - Duration(1));
      bound = std::min(bound, echoed);
    }
  }
  return bound;
}

void RackTlp::detect(SendState& s, const LossRecovery& recovery, Instant now) {
  Rack::WindowInputs in;
  in.min_rtt = s.rtt.min_rtt();
  in.srtt = s.rtt.has_sample() ? s.rtt.srtt() : Duration::zero();
  in.in_recovery = recovery.repairing(s);  // fast or RTO recovery
  in.sacked_segments = s.board.sacked_segments();
  const Rack::Detection found = rack_.detect_losses(s.board, now, in);
  if (found.marked_lost == 0) {
    return;
  }
  s.stats.rack_marked_lost += found.marked_lost;
  s.stats.lost_retransmissions_detected += found.lost_retransmissions;
}

bool RackTlp::on_probe_answer(SendState& s, LossRecovery& recovery, uint64_t ack, bool duplicate,
                              bool sacks, bool dsack, uint64_t prior_flight,
                              const AckEvent& event) {
  if (!tlp_.on_ack(ack, duplicate, sacks, dsack)) {
    return false;
  }
  // Only the probe arrived: the original was lost, and the probe repaired
  // it. One congestion response, as for a recovery that starts and ends.
  ++s.stats.tlp_recoveries;
  s.cc->on_congestion_event(LossEvent{event.now, prior_flight, s.bytes_in_flight()});
  AckEvent exit = event;
  exit.in_flight = s.bytes_in_flight();
  s.cc->on_recovery_exit(exit);
  recovery.set_recovery_point(s.snd_nxt);  // RFC 6582 §3.2: not again for this window
  return true;
}

void RackTlp::on_timeout() {
  tlp_.end_episode();
  recovery_probe_.cancel();
  recovery_probe_.reset_backoff();
  rack_.cancel_timer();
}

void RackTlp::on_tick(const SendPath& p, Segmenter& segmenter, Instant now,
                      const Transmit& transmit) {
  if (rack_.deadline() && now >= *rack_.deadline()) {
    // RFC 8985 §6.3: the reordering window of a segment ran out.
    rack_.cancel_timer();
    detect(p.s, p.recovery, now);
    if (p.s.board.has_lost() && !p.recovery.in_recovery() && p.recovery.may_enter(p.s)) {
      p.recovery.enter(p.s, now);
      on_recovery_start();
    }
    if (p.s.wnd > 0) {
      segmenter.send_retransmissions(p, now, transmit);
    }
  }
  if (tlp_.deadline() && now >= *tlp_.deadline()) {
    on_pto(p, segmenter, now, transmit);
  }
  if (recovery_probe_.deadline() && now >= *recovery_probe_.deadline()) {
    on_recovery_probe(p, segmenter, now, transmit);
  }
}

bool RackTlp::tlp_allowed(const SendState& s, const LossRecovery& recovery,
                          const SenderTimers& timers) const {
  // RFC 8985 §7.2: SACK, not in fast or RTO recovery, nothing sacked, and no
  // probe already unanswered.
  return on(s) && s.syn_acked() && !s.board.empty() && !recovery.in_recovery() &&
         s.snd_una >= recovery.recovery_point() && !tlp_.outstanding() &&
         s.board.sacked_segments() == 0 && !s.board.has_lost() && s.wnd > 0 &&
         timers.rto().has_value();
}

void RackTlp::schedule_tlp(const SendState& s, const LossRecovery& recovery,
                           const SenderTimers& timers, Instant now) {
  tlp_.cancel();
  if (!tlp_allowed(s, recovery, timers)) {
    return;
  }
  tlp_.arm(now, s.rtt, s.snd_nxt - s.snd_una <= s.smss, s.config.tlp_max_ack_delay, *timers.rto());
}

void RackTlp::on_pto(const SendPath& p, Segmenter& segmenter, Instant now,
                     const Transmit& transmit) {
  tlp_.cancel();
  if (!tlp_allowed(p.s, p.recovery, p.timers)) {
    return;
  }
  const bool retransmission = !segmenter.send_probe_new_data(p, now, transmit);
  if (retransmission) {
    segmenter.retransmit(p, p.s.board.size() - 1, now, transmit);  // the last segment again
  }
  tlp_.sent(p.s.snd_nxt, retransmission);
  ++p.s.stats.tlp_probes;
  p.timers.set_rto(now + p.s.rtt.rto());  // §7.3: the RTO, not another PTO, is next
}

bool RackTlp::recovery_probe_allowed(const SendState& s, const LossRecovery& recovery,
                                     const SenderTimers& timers) const {
  // Where a tail loss probe is not (§7.2): in recovery, or with sacked
  // segments; and only once every segment known to be lost went out again
  // (until then the ACKs those bring are what drives recovery) and no RACK
  // reordering timer is about to decide.
  return s.config.recovery_probes && on(s) && s.syn_acked() && !s.board.empty() &&
         (recovery.in_recovery() || s.board.sacked_segments() > 0) && !s.board.has_lost() &&
         s.wnd > 0 && timers.rto().has_value() && !rack_.deadline() && s.rtt.has_sample();
}

void RackTlp::schedule_recovery_probe(const SendState& s, const LossRecovery& recovery,
                                      const SenderTimers& timers, Instant now) {
  recovery_probe_.cancel();
  if (!recovery_probe_allowed(s, recovery, timers)) {
    return;
  }
  recovery_probe_.arm(now, probe_rtt(s), *timers.rto());
}

Duration RackTlp::probe_rtt(const SendState& s) const {
  // The round trip the latest delivery showed (RACK.rtt, at least min RTT),
  // when shorter than SRTT. At heavy loss few ACKs advance SND.UNA and give
  // an RTT sample, so SRTT follows the path slowly: one early sample (a
  // SYN-ACK its sender had to retransmit: 21 ms on a 1 ms path) kept it near
  // 15 ms for a whole 10 MiB transfer at 30% loss, and each probe waited 30 ms.
  const Duration srtt = s.rtt.srtt();
  if (rack_.rtt() <= Duration::zero()) {
    return srtt;
  }
  return std::min(srtt, std::max(rack_.rtt(), s.rtt.min_rtt()));
}

void RackTlp::on_recovery_probe(const SendPath& p, Segmenter& segmenter, Instant now,
                                const Transmit& transmit) {
  recovery_probe_.cancel();
  if (!recovery_probe_allowed(p.s, p.recovery, p.timers)) {
    return;
  }
  // The first segment the peer has not acknowledged or sacked: the hole that
  // holds SND.UNA back.
  const SackScoreboard& board = p.s.board;
  size_t i = 0;
  while (i < board.size() && board[i].sacked) {
    ++i;
  }
  if (i == board.size()) {
    return;
  }
  recovery_probe_.sent();
  ++p.s.stats.recovery_probes;
  segmenter.retransmit(p, i, now, transmit);  // the RTO keeps running: a probe is not a timeout
  schedule_recovery_probe(p.s, p.recovery, p.timers, now);
}

}  // namespace tinytcp::tcp
