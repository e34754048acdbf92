#pragma once

// Cubic: RFC 9438 CUBIC. After a congestion event the window follows
// W_cubic(t) = C * (t - K)^3 + W_max (§4.2) with C = 0.4 and beta = 0.7, never
// below the Reno-friendly estimate W_est (§4.3); fast convergence (§4.7)
// lowers W_max when losses come before the old maximum is reached. Slow start
// is RFC 5681's (HyStart++ is not implemented). Loss recovery itself is the
// sender's (RFC 6582 / RFC 6675), as §4.6 asks.
//
// Windows are kept in segments as doubles, as the RFC's formulas are; cwnd()
// converts to bytes.
//
// RFC 9438 §5.8: the window does not grow while the flow is application
// limited, and t in W_cubic(t) leaves that time out (the clock stops at the
// first ACK that was not cwnd-limited and resumes at the next one that is),
// as well as the time the sender was idle (on_transmit_start shifts the
// epoch by it, as Linux's cubictcp_cwnd_event does). After an idle period
// longer than the RTO the window restarts as Reno's does (RFC 5681 §4.1).

#include <optional>

#include "tcp/congestion/congestion_control.hh"

namespace tinytcp::tcp {

class Cubic : public CongestionControl {
 public:
  static constexpr double kC = 0.4;     // RFC 9438 §5.1
  static constexpr double kBeta = 0.7;  // RFC 9438 §4.6
  // RFC 9438 §4.3: alpha_cubic = 3 * (1 - beta) / (1 + beta).
  static constexpr double kAlpha = 3.0 * (1.0 - kBeta) / (1.0 + kBeta);

  explicit Cubic(const CongestionParams& params);

  std::string_view name() const override { return "cubic"; }
  void set_mss(uint32_t smss) override;
  void on_ack(const AckEvent& ack) override;
  void on_congestion_event(const LossEvent& loss) override;
  PartialAckResponse on_partial_ack(const AckEvent& ack) override;
  void on_recovery_exit(const AckEvent& ack) override;
  void on_rto(const LossEvent& loss) override;
  void on_transmit_start(const TransmitStartEvent& event) override;
  uint64_t cwnd() const override;
  uint64_t ssthresh() const override;

  // For tests and traces, in segments and seconds.
  double w_max() const { return w_max_; }
  double k() const { return k_; }
  double w_est() const { return w_est_; }
  double cwnd_segments() const { return cwnd_; }
  std::optional<Instant> epoch_start() const { return epoch_start_; }

 private:
  void reduce();
  void shift_epoch(Duration by, Instant now);

  uint32_t smss_;
  uint32_t initial_segments_;
  double cwnd_;      // segments
  double ssthresh_;  // segments
  double w_max_ = 0;
  double k_ = 0;
  double w_est_ = 0;
  double cwnd_prior_ = 0;
  std::optional<Instant> epoch_start_;  // start of the current congestion avoidance epoch
  // Set while the flow is application limited inside an epoch: from when
  // t stopped counting (RFC 9438 §5.8).
  std::optional<Instant> app_limited_since_;
  bool data_acked_ = false;
};

}  // namespace tinytcp::tcp
