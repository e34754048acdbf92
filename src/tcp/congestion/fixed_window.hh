#pragma once

// FixedWindow: a window of N segments that never reacts to congestion. With
// N = 1 the sender is stop-and-wait; larger N give the go-back-N and
// sliding-window experiments. Retransmissions still happen (the sender does
// them); only the window stays put.

#include "tcp/congestion/congestion_control.hh"

namespace tinytcp::tcp {

class FixedWindow : public CongestionControl {
 public:
  FixedWindow(const CongestionParams& params, uint32_t segments);

  std::string_view name() const override { return "fixed"; }
  void set_mss(uint32_t smss) override;
  void on_ack(const AckEvent& ack) override { (void)ack; }
  void on_congestion_event(const LossEvent& loss) override { (void)loss; }
  PartialAckResponse on_partial_ack(const AckEvent& ack) override {
    (void)ack;
    return PartialAckResponse::RetransmitNextUnacked;
  }
  void on_recovery_exit(const AckEvent& ack) override { (void)ack; }
  void on_rto(const LossEvent& loss) override { (void)loss; }
  uint64_t cwnd() const override { return uint64_t{segments_} * smss_; }
  uint64_t ssthresh() const override { return cwnd(); }
  std::optional<uint64_t> max_segments_in_flight() const override { return segments_; }
  uint32_t segments() const { return segments_; }

 private:
  uint32_t smss_;
  uint32_t segments_;
};

}  // namespace tinytcp::tcp
