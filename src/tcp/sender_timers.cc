#include "tcp/sender_timers.hh"

#include <algorithm>

namespace tinytcp::tcp {

void SenderTimers::arm_rto(const SendState& s, Instant now) {
  if (!std::holds_alternative<Idle>(slot_)) {
    return;  // running already, or the window is being probed
  }
  Duration timeout = s.rtt.rto();  // RFC 6298 §5.1
  if (!s.syn_acked() && s.config.syn_rto > Duration::zero()) {
    // The SYN's own timer (TcpConfig::syn_rto): syn_rto * 2^n, capped by the RTO.
    const uint32_t doublings = std::min<uint32_t>(s.consecutive_retransmissions, 20);
    timeout = std::min(s.config.syn_rto * (int64_t{1} << doublings), timeout);
  }
  slot_ = Retransmission{now + timeout};
}

void SenderTimers::restart_after_ack(SendState& s, Instant now) {
  if (s.board.empty()) {
    slot_ = Idle{};  // RFC 6298 §5.2
    s.unacked_since.reset();
    return;
  }
  s.unacked_since = now;
  if (s.wnd == 0) {
    // Outstanding data beyond a zero window is repaired by probing.
    if (!std::holds_alternative<Persist>(slot_)) {
      persist_interval_ = s.rtt.rto();
      slot_ = Persist{now + persist_interval_};
    }
    return;
  }
  slot_ = Retransmission{now + s.rtt.rto()};  // RFC 6298 §5.3
}

void SenderTimers::arm_persist_if_stalled(const SendState& s, Instant now) {
  const bool want_to_send = s.pending_bytes() > 0 || (s.outbound.is_closed() && !s.fin_sent);
  if (s.wnd == 0 && s.snd_nxt == s.snd_una && want_to_send &&
      !std::holds_alternative<Persist>(slot_)) {
    persist_interval_ = s.rtt.rto();
    slot_ = Persist{now + persist_interval_};
  }
}

void SenderTimers::on_window_open(const SendState& s, Instant now) {
  persist_probes_out_ = 0;  // an orphan's count ends when the window opens
  if (std::holds_alternative<Persist>(slot_)) {
    slot_ = Idle{};
    if (!s.board.empty()) {
      slot_ = Retransmission{now + s.rtt.rto()};
    }
  }
}

void SenderTimers::on_persist_probe(const SendState& s, Instant now) {
  ++persist_probes_out_;
  // RFC 1122 §4.2.2.17: exponential backoff of the probe interval. The
  // probe's own RTO gives way to the persist timer.
  persist_interval_ = std::min(persist_interval_ * 2, s.config.rto_max);
  if (persist_interval_ <= Duration::zero()) {
    persist_interval_ = s.rtt.rto();
  }
  slot_ = Persist{now + persist_interval_};
}

std::optional<Instant> SenderTimers::keepalive(const SendState& s) const {
  if (!s.config.keepalive || !s.syn_acked() || !s.board.empty() ||
      !std::holds_alternative<Idle>(slot_)) {
    return std::nullopt;
  }
  if (keepalive_probes_out_ == 0) {
    return std::max(last_heard_, last_keepalive_) + s.config.keepalive_idle;
  }
  return last_keepalive_ + s.config.keepalive_interval;
}

}  // namespace tinytcp::tcp
