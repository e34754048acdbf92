#pragma once

// Reno: RFC 5681 congestion control. Slow start and congestion avoidance with
// byte counting (RFC 5681 §3.1), ssthresh = max(FlightSize / 2, 2 * SMSS) on
// loss (§3.2 equation 4), one SMSS loss window after a timeout. At a partial
// ACK it leaves fast recovery (§3.2 step 6); NewReno overrides that.
//
// The sender counts duplicate ACKs into its pipe estimate, so the window is
// not inflated here: cwnd = ssthresh throughout recovery, which sends exactly
// what RFC 5681's inflated window would.
//
// A window the sender does not use is neither grown (AckEvent::cwnd_limited,
// as Linux's tcp_is_cwnd_limited) nor trusted after an idle period longer
// than the RTO: it restarts (RFC 5681 §4.1, window_after_idle()).

#include "tcp/congestion/congestion_control.hh"

namespace tinytcp::tcp {

class Reno : public CongestionControl {
 public:
  explicit Reno(const CongestionParams& params);

  std::string_view name() const override { return "reno"; }
  void set_mss(uint32_t smss) override;
  void on_ack(const AckEvent& ack) override;
  void on_congestion_event(const LossEvent& loss) override;
  PartialAckResponse on_partial_ack(const AckEvent& ack) override;
  void on_recovery_exit(const AckEvent& ack) override;
  void on_rto(const LossEvent& loss) override;
  void on_transmit_start(const TransmitStartEvent& event) override;
  uint64_t cwnd() const override { return cwnd_; }
  uint64_t ssthresh() const override { return ssthresh_; }

 protected:
  uint64_t reduced_ssthresh(uint64_t flight_size) const;

  uint32_t smss_;
  uint32_t initial_segments_;
  uint64_t cwnd_;
  uint64_t ssthresh_;
  uint64_t bytes_acked_ = 0;  // congestion avoidance byte counter (RFC 5681 §3.1)
  bool data_acked_ = false;
};

}  // namespace tinytcp::tcp
