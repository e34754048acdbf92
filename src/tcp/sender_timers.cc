#include "tcp/sender_timers.hh"

#include <algorithm>

namespace tinytcp::tcp {

void SenderTimers::arm_rto(const SendState& s, Instant now) {
  if (!rto_ && !persist_) {
    Duration timeout = s.rtt.rto();  // RFC 6298 §5.1
    if (!s.syn_acked() && s.config.syn_rto > Duration::zero()) {
      // The SYN's own timer (TcpConfig::syn_rto): syn_rto * 2^n, capped by the RTO.
      const uint32_t doublings = std::min<uint32_t>(s.consecutive_retransmissions, 20);
      timeout = std::min(s.config.syn_rto * (int64_t{1} << doublings), timeout);
    }
    rto_ = now + timeout;
  }
}

void SenderTimers::arm_persist_if_stalled(const SendState& s, Instant now) {
  const bool want_to_send = s.pending_bytes() > 0 || (s.outbound.is_closed() && !s.fin_sent);
  if (s.wnd == 0 && s.snd_nxt == s.snd_una && want_to_send && !persist_) {
    persist_interval_ = s.rtt.rto();
    persist_ = now + persist_interval_;
  }
}

void SenderTimers::on_persist_probe(const SendState& s, Instant now) {
  ++persist_probes_out_;
  // RFC 1122 §4.2.2.17: exponential backoff of the probe interval.
  persist_interval_ = std::min(persist_interval_ * 2, s.config.rto_max);
  if (persist_interval_ <= Duration::zero()) {
    persist_interval_ = s.rtt.rto();
  }
  persist_ = now + persist_interval_;
}

}  // namespace tinytcp::tcp
