#include "tcp/congestion/reno.hh"

#include <algorithm>
#include <limits>

namespace tinytcp::tcp {

namespace {
// RFC 5681 §3.1: the initial ssthresh SHOULD be arbitrarily high.
constexpr uint64_t kInfiniteSsthresh = std::numeric_limits<uint32_t>::max();
}  // namespace

Reno::Reno(const CongestionParams& params)
    : smss_(std::max<uint32_t>(1, params.smss)),
      initial_segments_(std::max<uint32_t>(1, params.initial_window_segments)),
      cwnd_(uint64_t{initial_segments_} * smss_),
      ssthresh_(kInfiniteSsthresh) {}

void Reno::set_mss(uint32_t smss) {
  smss_ = std::max<uint32_t>(1, smss);
  if (!data_acked_) {
    cwnd_ = uint64_t{initial_segments_} * smss_;  // RFC 6928 initial window
  }
}

uint64_t Reno::reduced_ssthresh(uint64_t flight_size) const {
  // RFC 5681 §3.2 equation 4: ssthresh = max(FlightSize / 2, 2 * SMSS).
  return std::max<uint64_t>(flight_size / 2, 2 * uint64_t{smss_});
}

void Reno::on_ack(const AckEvent& ack) {
  data_acked_ = true;
  // RFC 7661 §4.3 spirit: a window that is not used is not validated, so it
  // does not grow either.
  if (!ack.cwnd_limited || ack.bytes_acked == 0) {
    return;
  }
  uint64_t left = ack.bytes_acked;
  if (cwnd_ < ssthresh_) {
    // Slow start counts every acknowledged byte, up to ssthresh (Linux's
    // tcp_slow_start since "tcp: properly handle stretch acks in slow
    // start"). RFC 5681 §3.1's min(N, SMSS) per ACK assumes an ACK per one
    // or two segments; a receiver with GRO, or Linux behind a TUN device
    // taking our TSO super-packets, ACKs 10 to 45 segments at once, and
    // slow start would grow by one segment per round trip instead of
    // doubling. A cumulative ACK covers at most the flight, so cwnd at most
    // doubles per round trip, as slow start intends.
    const uint64_t grown = std::min(left, ssthresh_ - cwnd_);
    cwnd_ += grown;
    left -= grown;
    if (left == 0) {
      return;
    }
  }
  // RFC 5681 §3.1, byte counting: one SMSS per cwnd of acknowledged bytes
  // (including what a stretch ACK had left past ssthresh).
  bytes_acked_ += left;
  if (bytes_acked_ >= cwnd_) {
    bytes_acked_ -= cwnd_;
    cwnd_ += smss_;
  }
}

void Reno::on_congestion_event(const LossEvent& loss) {
  data_acked_ = true;
  ssthresh_ = reduced_ssthresh(loss.flight_size);
  cwnd_ = ssthresh_;
  bytes_acked_ = 0;
}

PartialAckResponse Reno::on_partial_ack(const AckEvent& ack) {
  (void)ack;
  // RFC 5681 §3.2 step 6: the first ACK of new data deflates the window.
  cwnd_ = ssthresh_;
  return PartialAckResponse::ExitRecovery;
}

void Reno::on_recovery_exit(const AckEvent& ack) {
  (void)ack;
  cwnd_ = ssthresh_;  // RFC 5681 §3.2 step 6, RFC 6582 §3.2 step 3 option (1)
}

void Reno::on_rto(const LossEvent& loss) {
  data_acked_ = true;
  // RFC 5681 §3.1: ssthresh from equation 4 on the first timeout of a
  // segment, unchanged on its further timeouts; cwnd = loss window = 1 SMSS.
  if (!loss.repeated) {
    ssthresh_ = reduced_ssthresh(loss.flight_size);
  }
  cwnd_ = smss_;
  bytes_acked_ = 0;
}

void Reno::on_transmit_start(const TransmitStartEvent& event) {
  if (!event.restart_after_idle) {
    return;
  }
  const uint64_t iw = uint64_t{initial_segments_} * smss_;
  const auto restarted = static_cast<uint64_t>(window_after_idle(
      static_cast<double>(cwnd_), static_cast<double>(iw), event.idle, event.rto));
  if (restarted >= cwnd_) {
    return;
  }
  // RFC 2861 §3, Linux's tcp_current_ssthresh: ssthresh keeps 3/4 of the
  // window, so slow start returns there before congestion avoidance.
  ssthresh_ = std::max(ssthresh_, cwnd_ / 2 + cwnd_ / 4);
  cwnd_ = restarted;
  bytes_acked_ = 0;
}

}  // namespace tinytcp::tcp
