#pragma once

// Bbr: a model-based congestion control after BBR version 1
// (draft-cardwell-iccrg-bbr-congestion-control-00). Instead of reading loss as
// congestion it measures the path: the bottleneck bandwidth (a windowed
// maximum of the sender's delivery-rate samples over 10 round trips) and the
// round-trip propagation time (a windowed minimum of RTT samples over 10 s).
// It paces at pacing_gain x bandwidth and bounds the data in flight by
// cwnd_gain x BDP plus a few send quanta, through the draft's states: STARTUP
// (gain 2/ln 2 until the bandwidth stops growing by 25% for 3 rounds), DRAIN
// (the queue STARTUP built), PROBE_BW (an 8-phase gain cycle 1.25, 0.75, 1 x 6)
// and PROBE_RTT (4 segments for 200 ms and a round when the min RTT is 10 s old).
//
// Loss is deliberately not a rate signal (random loss on a lossy link says
// nothing about the bottleneck). It acts only (1) through the delivery rate,
// (2) by packet conservation for at most one round after a loss episode or
// timeout starts (draft §4.2.3.4), after which the window returns to the
// model, and (3) by loss compensation, this implementation's addition: the
// share of transmissions that left the network without being delivered is
// measured per round, and pacing rate and window are divided by (1 - share),
// capped at kMaxLossRatio. Without it BBRv1's bandwidth estimate decays once
// loss exceeds 20% (the 1.25 probe then delivers less than the estimate), and
// the flow starves at 30-60% random loss.
//
// The sender builds the delivery-rate samples (draft-cheng-iccrg-delivery-
// rate-estimation) and passes them in on_delivery(); loss recovery itself is
// the sender's (RFC 6675).

#include <array>
#include <cstdint>
#include <optional>

#include "tcp/congestion/congestion_control.hh"

namespace tinytcp::tcp {

class Bbr : public CongestionControl {
 public:
  enum class Mode { Startup, Drain, ProbeBw, ProbeRtt };

  // draft-cardwell-iccrg-bbr-congestion-control-00 §4.
  static constexpr double kHighGain = 2.885;  // 2 / ln(2)
  static constexpr double kDrainGain = 1.0 / kHighGain;
  static constexpr double kCwndGain = 2.0;
  static constexpr size_t kGainCycleLength = 8;
  static constexpr std::array<double, kGainCycleLength> kPacingGainCycle{1.25, 0.75, 1.0, 1.0,
                                                                         1.0,  1.0,  1.0, 1.0};
  static constexpr uint64_t kBandwidthFilterRounds = 10;
  static constexpr Duration kMinRttFilter = std::chrono::seconds(10);
  static constexpr Duration kProbeRttDuration = std::chrono::milliseconds(200);
  static constexpr uint32_t kMinPipeSegments = 4;
  static constexpr double kFullBandwidthGrowth = 1.25;
  static constexpr uint32_t kFullBandwidthRounds = 3;
  // Loss compensation: at most 1 / (1 - 0.7), 3.3 times the model.
  static constexpr double kMaxLossRatio = 0.7;

  explicit Bbr(const CongestionParams& params);

  std::string_view name() const override { return "bbr"; }
  void set_mss(uint32_t smss) override;
  bool wants_rate_samples() const override { return true; }
  void on_packet_sent(Instant now, uint64_t bytes, uint64_t in_flight) override;
  void on_delivery(const AckEvent& ack) override;
  void on_ack(const AckEvent& ack) override { (void)ack; }  // on_delivery() did it all
  void on_congestion_event(const LossEvent& loss) override;
  PartialAckResponse on_partial_ack(const AckEvent& ack) override;
  void on_recovery_exit(const AckEvent& ack) override;
  void on_rto(const LossEvent& loss) override;
  uint64_t cwnd() const override { return cwnd_; }
  uint64_t ssthresh() const override;  // none: reported as "infinite"
  std::optional<uint64_t> pacing_rate() const override;

  // The model, for tests and traces.
  Mode mode() const { return mode_; }
  double bandwidth() const;  // bytes per second; 0 before the first sample
  std::optional<Duration> min_rtt() const { return min_rtt_; }
  double pacing_gain() const { return pacing_gain_; }
  double cwnd_gain() const { return cwnd_gain_; }
  uint64_t round_count() const { return round_count_; }
  bool filled_pipe() const { return filled_pipe_; }
  bool conserving() const { return conservation_; }
  double loss_ratio() const { return loss_ratio_; }
  // gain x BDP x loss compensation + 3 send quanta (draft §4.2.3.2), bytes.
  uint64_t inflight_for(double gain) const;
  uint64_t send_quantum() const;

 private:
  // Maximum of per-round maxima over the kBandwidthFilterRounds rounds up
  // to the latest sample: old maxima expire only as new samples come in, so
  // an application pause keeps the estimate.
  class MaxFilter {
   public:
    void update(double value, uint64_t round);
    double best() const;

   private:
    struct Slot {
      uint64_t round = 0;
      double value = 0;
      bool used = false;
    };
    std::array<Slot, kBandwidthFilterRounds> slots_{};
    uint64_t latest_ = 0;
  };

  void update_round(const AckEvent& ack, const RateSample& rs);
  void update_loss_ratio(const AckEvent& ack);
  void update_bandwidth(const RateSample& rs);
  void update_cycle_phase(const AckEvent& ack, const RateSample& rs);
  void check_full_pipe(const RateSample& rs);
  void check_drain(const AckEvent& ack);
  void update_min_rtt(const AckEvent& ack, const RateSample& rs);
  void check_probe_rtt(const AckEvent& ack);
  void set_pacing_rate(double gain);
  void set_cwnd(const AckEvent& ack);
  void enter_startup();
  void enter_probe_bw(Instant now);
  void save_cwnd();
  void start_conservation(uint64_t in_flight);
  double compensation() const { return 1.0 / (1.0 - loss_ratio_); }
  uint64_t min_pipe_cwnd() const { return uint64_t{kMinPipeSegments} * smss_; }
  uint64_t initial_cwnd() const { return uint64_t{initial_segments_} * smss_; }

  uint32_t smss_;
  uint32_t initial_segments_;
  uint64_t cwnd_;
  uint64_t prior_cwnd_ = 0;
  double pacing_rate_;  // bytes per second
  bool pacing_from_srtt_ = false;

  Mode mode_ = Mode::Startup;
  double pacing_gain_ = kHighGain;
  double cwnd_gain_ = kHighGain;

  // Rounds (draft §4.1.1.3): a round ends when a segment sent after its
  // start is delivered.
  uint64_t delivered_ = 0;
  uint64_t next_round_delivered_ = 0;
  uint64_t round_count_ = 0;
  bool round_start_ = false;

  MaxFilter bandwidth_;
  std::optional<Duration> min_rtt_;
  Instant min_rtt_stamp_;
  bool min_rtt_expired_ = false;

  // STARTUP's exit (draft §4.3.2.2).
  double full_bandwidth_ = 0;
  uint32_t full_bandwidth_count_ = 0;
  bool filled_pipe_ = false;

  // PROBE_BW.
  size_t cycle_index_ = 0;
  Instant cycle_stamp_;

  // PROBE_RTT.
  std::optional<Instant> probe_rtt_done_;
  bool probe_rtt_round_done_ = false;
  // Segments sent in PROBE_RTT (delivered count at sending in [from, to))
  // are app-limited by choice (draft §4.3.5): their rate says nothing.
  uint64_t probe_rtt_from_ = 0;
  uint64_t probe_rtt_to_ = 0;
  bool idle_restart_ = false;

  // Packet conservation after a loss episode or timeout starts, until a
  // segment sent after it is delivered.
  bool conservation_ = false;
  uint64_t conservation_until_ = 0;  // delivered count at its start

  // Loss compensation: per round, bytes that left the network undelivered
  // over bytes that left it (sent - growth of the pipe).
  uint64_t sent_total_ = 0;
  uint64_t mark_sent_ = 0;
  uint64_t mark_delivered_ = 0;
  uint64_t mark_in_flight_ = 0;
  double left_acc_ = 0;
  double delivered_acc_ = 0;
  double loss_ratio_ = 0;
};

std::string_view to_string(Bbr::Mode mode);

}  // namespace tinytcp::tcp
