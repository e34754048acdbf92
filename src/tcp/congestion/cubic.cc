#include "tcp/congestion/cubic.hh"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tinytcp::tcp {

namespace {
constexpr double kInfiniteSsthresh = static_cast<double>(std::numeric_limits<uint32_t>::max());
}  // namespace

Cubic::Cubic(const CongestionParams& params)
    : smss_(std::max<uint32_t>(1, params.smss)),
      initial_segments_(std::max<uint32_t>(1, params.initial_window_segments)),
      cwnd_(initial_segments_),
      ssthresh_(kInfiniteSsthresh) {}

void Cubic::set_mss(uint32_t smss) {
  smss_ = std::max<uint32_t>(1, smss);
  if (!data_acked_) {
    cwnd_ = initial_segments_;
  }
}

uint64_t Cubic::cwnd() const {
  return static_cast<uint64_t>(cwnd_ * smss_);
}

uint64_t Cubic::ssthresh() const {
  if (ssthresh_ >= kInfiniteSsthresh) {
    return std::numeric_limits<uint32_t>::max();
  }
  return static_cast<uint64_t>(ssthresh_ * smss_);
}

void Cubic::on_ack(const AckEvent& ack) {
  data_acked_ = true;
  if (!ack.cwnd_limited) {
    // RFC 9438 §5.8: no growth while application limited, and t stops.
    if (epoch_start_ && !app_limited_since_) {
      app_limited_since_ = ack.now;
    }
    return;
  }
  if (app_limited_since_) {
    shift_epoch(ack.now - *app_limited_since_, ack.now);
    app_limited_since_.reset();
  }
  if (ack.bytes_acked == 0) {
    return;
  }
  double acked = static_cast<double>(ack.bytes_acked) / smss_;
  if (cwnd_ < ssthresh_) {
    // RFC 9438 §4.10: slow start, counting every acknowledged segment up to
    // ssthresh, as Reno does (see reno.cc: stretch ACKs from GRO receivers);
    // what is left past ssthresh counts toward congestion avoidance.
    const double grown = std::min(acked, ssthresh_ - cwnd_);
    cwnd_ += grown;
    acked -= grown;
    if (acked <= 0) {
      return;
    }
  }
  if (!epoch_start_) {
    // RFC 9438 §4.2: a new congestion avoidance epoch starts.
    epoch_start_ = ack.now;
    const double cwnd_epoch = cwnd_;
    if (w_max_ < cwnd_epoch) {
      // No congestion event yet (or the window already passed W_max): the
      // plateau is where we are.
      w_max_ = cwnd_epoch;
    }
    k_ = std::cbrt((w_max_ - cwnd_epoch) / kC);  // RFC 9438 §4.2 equation 2
    w_est_ = cwnd_epoch;                         // RFC 9438 §4.3
    if (cwnd_prior_ == 0) {
      cwnd_prior_ = cwnd_epoch;
    }
  }
  const double t = to_seconds(ack.now - *epoch_start_);
  const double rtt = to_seconds(ack.srtt > Duration::zero() ? ack.srtt : ack.min_rtt);
  auto w_cubic = [&](double at) { return kC * std::pow(at - k_, 3.0) + w_max_; };

  // RFC 9438 §4.3: W_est grows like Reno with alpha_cubic, and with alpha = 1
  // once it has reached the window before the last reduction.
  const double alpha = w_est_ >= cwnd_prior_ ? 1.0 : kAlpha;
  w_est_ += alpha * acked / cwnd_;

  if (w_cubic(t) < w_est_) {
    cwnd_ = w_est_;  // Reno-friendly region
    return;
  }
  // RFC 9438 §4.4/§4.5: concave and convex regions. The target is
  // W_cubic(t + RTT) clamped to [cwnd, 1.5 * cwnd]; cwnd grows by
  // (target - cwnd) / cwnd per acknowledged segment.
  const double target = std::min(std::max(w_cubic(t + rtt), cwnd_), 1.5 * cwnd_);
  cwnd_ += (target - cwnd_) / cwnd_ * acked;
}

void Cubic::shift_epoch(Duration by, Instant now) {
  // The curve keeps its shape, only later by `by`; never past now.
  if (epoch_start_ && by > Duration::zero()) {
    epoch_start_ = std::min(*epoch_start_ + by, now);
  }
}

void Cubic::reduce() {
  epoch_start_.reset();
  app_limited_since_.reset();
  // RFC 9438 §4.7 fast convergence: a loss below the previous maximum means
  // the bandwidth share shrank; release some of it.
  if (cwnd_ < w_max_) {
    w_max_ = cwnd_ * (1.0 + kBeta) / 2.0;
  } else {
    w_max_ = cwnd_;
  }
  cwnd_prior_ = cwnd_;
  // RFC 9438 §4.6: ssthresh = cwnd * beta_cubic (cwnd, not FlightSize, as
  // deployed), at least 2 segments.
  ssthresh_ = std::max(cwnd_ * kBeta, 2.0);
}

void Cubic::on_congestion_event(const LossEvent& loss) {
  (void)loss;
  data_acked_ = true;
  reduce();
  cwnd_ = ssthresh_;
}

PartialAckResponse Cubic::on_partial_ack(const AckEvent& ack) {
  (void)ack;
  // RFC 9438 §4.6 leaves recovery to RFC 6582: NewReno's partial ACK rule.
  return PartialAckResponse::RetransmitNextUnacked;
}

void Cubic::on_recovery_exit(const AckEvent& ack) {
  (void)ack;
  cwnd_ = std::max(ssthresh_, 1.0);
}

void Cubic::on_rto(const LossEvent& loss) {
  data_acked_ = true;
  // RFC 9438 §4.8: on a timeout, reduce as for a congestion event (once per
  // segment), then cwnd = 1 segment and slow start up to the new ssthresh.
  if (!loss.repeated) {
    reduce();
  }
  epoch_start_.reset();
  app_limited_since_.reset();
  cwnd_ = 1.0;
}

void Cubic::on_transmit_start(const TransmitStartEvent& event) {
  if (event.restart_after_idle) {
    const double restarted =
        window_after_idle(cwnd_, initial_segments_, event.idle, event.rto);  // RFC 5681 §4.1
    if (restarted < cwnd_) {
      ssthresh_ = std::max(ssthresh_, 0.75 * cwnd_);  // RFC 2861 §3, as Reno
      cwnd_ = restarted;
      // Slow start runs first; the congestion avoidance after it is a new
      // epoch (RFC 9438 §4.2), its plateau W_max still the old one.
      epoch_start_.reset();
      app_limited_since_.reset();
      return;
    }
  }
  // RFC 9438 §5.8: t leaves out the idle time, so W_cubic(t) resumes where it
  // stopped rather than jumping ahead by the idle period (Linux's
  // cubictcp_cwnd_event on CA_EVENT_TX_START). If the flow was application
  // limited before it went idle, the clock is stopped already.
  if (!app_limited_since_) {
    shift_epoch(event.idle, event.now);
  }
}

}  // namespace tinytcp::tcp
