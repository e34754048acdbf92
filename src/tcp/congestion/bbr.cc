#include "tcp/congestion/bbr.hh"

#include <algorithm>
#include <limits>

namespace tinytcp::tcp {

namespace {

// draft §4.2.2: before an RTT is known, the nominal RTT is 1 ms.
constexpr double kNominalRttSeconds = 0.001;
// draft §4.2.2 send quantum thresholds, bytes per second (1.2 and 24 Mbit/s).
constexpr double kLowRate = 1.2e6 / 8;
constexpr double kMidRate = 24e6 / 8;
constexpr double kMaxQuantum = 64 * 1024;
// Loss compensation samples cover at least this many segments that left the network.
constexpr double kLossSampleSegments = 8;
constexpr double kLossEwmaGain = 0.25;
// PROBE_BW phases to start at (all but the 0.75 drain phase, draft §4.3.4.2).
constexpr std::array<size_t, 7> kCycleStarts{0, 2, 3, 4, 5, 6, 7};

}  // namespace

std::string_view to_string(Bbr::Mode mode) {
  switch (mode) {
    case Bbr::Mode::Startup:
      return "STARTUP";
    case Bbr::Mode::Drain:
      return "DRAIN";
    case Bbr::Mode::ProbeBw:
      return "PROBE_BW";
    case Bbr::Mode::ProbeRtt:
      return "PROBE_RTT";
  }
  return "?";
}

void Bbr::MaxFilter::update(double value, uint64_t round) {
  latest_ = std::max(latest_, round);
  Slot& slot = slots_[round % kBandwidthFilterRounds];
  if (!slot.used || slot.round != round) {
    slot = Slot{round, value, true};
  } else {
    slot.value = std::max(slot.value, value);
  }
}

double Bbr::MaxFilter::best() const {
  double best = 0;
  for (const Slot& slot : slots_) {
    if (slot.used && latest_ - slot.round < kBandwidthFilterRounds) {
      best = std::max(best, slot.value);
    }
  }
  return best;
}

Bbr::Bbr(const CongestionParams& params)
    : smss_(std::max<uint32_t>(1, params.smss)),
      initial_segments_(std::max<uint32_t>(1, params.initial_window_segments)),
      cwnd_(initial_cwnd()),
      // draft §4.2.1 BBRInitPacingRate: high_gain x InitialCwnd / RTT.
      pacing_rate_(kHighGain * static_cast<double>(initial_cwnd()) / kNominalRttSeconds) {}

void Bbr::set_mss(uint32_t smss) {
  smss_ = std::max<uint32_t>(1, smss);
  if (delivered_ == 0) {
    cwnd_ = initial_cwnd();
    pacing_rate_ = kHighGain * static_cast<double>(initial_cwnd()) / kNominalRttSeconds;
  }
}

uint64_t Bbr::ssthresh() const {
  return std::numeric_limits<uint32_t>::max();
}

std::optional<uint64_t> Bbr::pacing_rate() const {
  return std::max<uint64_t>(1, static_cast<uint64_t>(pacing_rate_));
}

double Bbr::bandwidth() const {
  return bandwidth_.best();
}

uint64_t Bbr::send_quantum() const {
  // draft §4.2.2: one segment at low rates, two at moderate ones, else 1 ms
  // worth of data up to 64 KB.
  if (pacing_rate_ < kLowRate) {
    return smss_;
  }
  if (pacing_rate_ < kMidRate) {
    return 2 * uint64_t{smss_};
  }
  return static_cast<uint64_t>(std::min(pacing_rate_ * 0.001, kMaxQuantum));
}

uint64_t Bbr::inflight_for(double gain) const {
  const double bw = bandwidth();
  if (!min_rtt_ || bw <= 0) {
    return initial_cwnd();  // draft §4.2.3.2: no estimate yet
  }
  const double bdp = bw * to_seconds(*min_rtt_) * compensation();
  return static_cast<uint64_t>(gain * bdp) + 3 * send_quantum();
}

void Bbr::on_packet_sent(Instant now, uint64_t bytes, uint64_t in_flight) {
  (void)now;
  sent_total_ += bytes;
  if (in_flight <= bytes && delivered_ > 0) {
    // draft §4.3.4.4: restarting from idle; cruise at the estimate rather
    // than resume a probing or draining phase.
    idle_restart_ = true;
    if (mode_ == Mode::ProbeBw) {
      set_pacing_rate(1.0);
    }
  }
}

void Bbr::on_delivery(const AckEvent& ack) {
  if (!ack.rate) {
    delivered_ = std::max(delivered_, ack.delivered_total);
    return;
  }
  const RateSample& rs = *ack.rate;
  update_round(ack, rs);
  if (round_start_) {
    update_loss_ratio(ack);
  }
  update_bandwidth(rs);
  update_cycle_phase(ack, rs);
  check_full_pipe(rs);
  check_drain(ack);
  update_min_rtt(ack, rs);
  check_probe_rtt(ack);
  if (!pacing_from_srtt_ && ack.srtt > Duration::zero() && !filled_pipe_) {
    // draft §4.2.1: the initial pacing rate once the handshake gave an RTT.
    pacing_from_srtt_ = true;
    pacing_rate_ = kHighGain * static_cast<double>(initial_cwnd()) / to_seconds(ack.srtt);
  }
  set_pacing_rate(pacing_gain_);
  set_cwnd(ack);
}

void Bbr::update_round(const AckEvent& ack, const RateSample& rs) {
  delivered_ = ack.delivered_total;
  round_start_ = false;
  if (rs.prior_delivered >= next_round_delivered_) {
    next_round_delivered_ = delivered_;
    ++round_count_;
    round_start_ = true;
  }
}

void Bbr::update_loss_ratio(const AckEvent& ack) {
  // Between two round starts: the pipe grew by (sent - left), so what left
  // it is sent - growth; of that, `delivered` arrived and the rest was lost
  // (or sent twice). Summed until the sample is large enough to mean much.
  const double sent = static_cast<double>(sent_total_ - mark_sent_);
  const double growth = static_cast<double>(ack.in_flight) - static_cast<double>(mark_in_flight_);
  const double delivered = static_cast<double>(delivered_ - mark_delivered_);
  mark_sent_ = sent_total_;
  mark_delivered_ = delivered_;
  mark_in_flight_ = ack.in_flight;
  const double left = sent - growth;
  if (left <= 0) {
    return;
  }
  left_acc_ += left;
  delivered_acc_ += delivered;
  if (left_acc_ < kLossSampleSegments * smss_) {
    return;
  }
  const double sample = std::clamp(1.0 - delivered_acc_ / left_acc_, 0.0, kMaxLossRatio);
  loss_ratio_ += kLossEwmaGain * (sample - loss_ratio_);
  left_acc_ = 0;
  delivered_acc_ = 0;
}

void Bbr::update_bandwidth(const RateSample& rs) {
  // draft §4.1.1.5: app-limited samples only when they raise the estimate.
  if (!rs.delivery_rate) {
    return;
  }
  const auto rate = static_cast<double>(*rs.delivery_rate);
  const bool app_limited = rs.is_app_limited || (rs.prior_delivered >= probe_rtt_from_ &&
                                                 rs.prior_delivered < probe_rtt_to_);
  if (rate >= bandwidth() || !app_limited) {
    bandwidth_.update(rate, round_count_);
  }
}

void Bbr::update_cycle_phase(const AckEvent& ack, const RateSample& rs) {
  if (mode_ != Mode::ProbeBw) {
    return;
  }
  // draft §4.3.4.3 BBRIsNextCyclePhase.
  const bool full_length = min_rtt_ && ack.now - cycle_stamp_ > *min_rtt_;
  bool next = false;
  if (pacing_gain_ == 1.0) {
    next = full_length;
  } else if (pacing_gain_ > 1.0) {
    next = full_length && (rs.newly_lost > 0 || ack.prior_in_flight >= inflight_for(pacing_gain_));
  } else {
    next = full_length || ack.prior_in_flight <= inflight_for(1.0);
  }
  if (next) {
    cycle_index_ = (cycle_index_ + 1) % kGainCycleLength;
    cycle_stamp_ = ack.now;
    pacing_gain_ = kPacingGainCycle[cycle_index_];
  }
}

void Bbr::check_full_pipe(const RateSample& rs) {
  // draft §4.3.2.2: the pipe is full when three rounds in a row did not
  // raise the bandwidth estimate by 25%.
  if (filled_pipe_ || !round_start_ || rs.is_app_limited) {
    return;
  }
  const double bw = bandwidth();
  if (bw >= full_bandwidth_ * kFullBandwidthGrowth) {
    full_bandwidth_ = bw;
    full_bandwidth_count_ = 0;
    return;
  }
  if (++full_bandwidth_count_ >= kFullBandwidthRounds) {
    filled_pipe_ = true;
  }
}

void Bbr::check_drain(const AckEvent& ack) {
  // draft §4.3.3.
  if (mode_ == Mode::Startup && filled_pipe_) {
    mode_ = Mode::Drain;
    pacing_gain_ = kDrainGain;
    cwnd_gain_ = kHighGain;
  }
  if (mode_ == Mode::Drain && ack.in_flight <= inflight_for(1.0)) {
    enter_probe_bw(ack.now);
  }
}

void Bbr::enter_probe_bw(Instant now) {
  mode_ = Mode::ProbeBw;
  cwnd_gain_ = kCwndGain;
  // draft §4.3.4.2 starts at a random phase other than 0.75; the round
  // count stands in for the random number (the core has no entropy source).
  cycle_index_ = kCycleStarts[round_count_ % kCycleStarts.size()];
  pacing_gain_ = kPacingGainCycle[cycle_index_];
  cycle_stamp_ = now;
}

void Bbr::enter_startup() {
  mode_ = Mode::Startup;
  pacing_gain_ = kHighGain;
  cwnd_gain_ = kHighGain;
}

void Bbr::update_min_rtt(const AckEvent& ack, const RateSample& rs) {
  // draft §4.1.2.3: a windowed minimum over kMinRttFilter.
  min_rtt_expired_ = min_rtt_ && ack.now > min_rtt_stamp_ + kMinRttFilter;
  // The rate sample's RTT (send time to now, never from a retransmission) is
  // exact; the ACK's may come from a timestamp echo, in milliseconds, so it
  // only stands in when there is no other.
  const std::optional<Duration> sample = rs.rtt ? rs.rtt : ack.rtt;
  if (sample && *sample > Duration::zero() &&
      (!min_rtt_ || *sample <= *min_rtt_ || min_rtt_expired_)) {
    min_rtt_ = *sample;
    min_rtt_stamp_ = ack.now;
  }
}

void Bbr::check_probe_rtt(const AckEvent& ack) {
  // draft §4.3.5.
  if (mode_ != Mode::ProbeRtt && min_rtt_expired_ && !idle_restart_) {
    save_cwnd();
    mode_ = Mode::ProbeRtt;
    pacing_gain_ = 1.0;
    cwnd_gain_ = 1.0;
    probe_rtt_done_.reset();
    probe_rtt_from_ = delivered_;
    probe_rtt_to_ = std::numeric_limits<uint64_t>::max();
  }
  if (mode_ == Mode::ProbeRtt) {
    if (!probe_rtt_done_ && ack.in_flight <= min_pipe_cwnd()) {
      probe_rtt_done_ = ack.now + kProbeRttDuration;
      probe_rtt_round_done_ = false;
      next_round_delivered_ = delivered_;
    } else if (probe_rtt_done_) {
      probe_rtt_round_done_ = probe_rtt_round_done_ || round_start_;
      if (probe_rtt_round_done_ && ack.now > *probe_rtt_done_) {
        min_rtt_stamp_ = ack.now;
        probe_rtt_to_ = delivered_;
        cwnd_ = std::max(cwnd_, prior_cwnd_);
        if (filled_pipe_) {
          enter_probe_bw(ack.now);
        } else {
          enter_startup();
        }
      }
    }
  }
  idle_restart_ = false;
}

void Bbr::set_pacing_rate(double gain) {
  const double bw = bandwidth();
  if (bw <= 0) {
    return;  // keep the initial rate
  }
  double rate = gain * bw * compensation();
  if (min_rtt_ && *min_rtt_ > Duration::zero()) {
    // Never slower than the minimum window per round trip allows anyway, so
    // an estimate starved by loss cannot spiral down with the rate.
    rate = std::max(rate, static_cast<double>(min_pipe_cwnd()) / to_seconds(*min_rtt_));
  }
  // draft §4.2.1: before the pipe is full, only raise it.
  if (filled_pipe_ || rate > pacing_rate_) {
    pacing_rate_ = rate;
  }
}

void Bbr::set_cwnd(const AckEvent& ack) {
  const uint64_t newly_acked = ack.bytes_acked + ack.bytes_sacked;
  if (conservation_) {
    if (ack.rate && ack.rate->prior_delivered >= conservation_until_) {
      // A segment sent after the loss episode began is delivered: one round
      // of conservation is over, back to the model (draft §4.2.3.4).
      conservation_ = false;
      cwnd_ = std::max(cwnd_, prior_cwnd_);
    } else {
      cwnd_ = std::max(cwnd_, ack.in_flight + newly_acked);
    }
  }
  if (!conservation_) {
    // draft §4.2.3.6: toward the target, at most by what was delivered.
    const uint64_t target = inflight_for(cwnd_gain_);
    if (filled_pipe_) {
      cwnd_ = std::min(cwnd_ + newly_acked, target);
    } else if (cwnd_ < target || delivered_ < initial_cwnd()) {
      cwnd_ += newly_acked;
    }
  }
  cwnd_ = std::max(cwnd_, min_pipe_cwnd());
  if (mode_ == Mode::ProbeRtt) {
    cwnd_ = std::min(cwnd_, min_pipe_cwnd());
  }
}

void Bbr::save_cwnd() {
  // draft §4.2.3.4 BBRSaveCwnd.
  if (!conservation_ && mode_ != Mode::ProbeRtt) {
    prior_cwnd_ = cwnd_;
  } else {
    prior_cwnd_ = std::max(prior_cwnd_, cwnd_);
  }
}

void Bbr::start_conservation(uint64_t in_flight) {
  conservation_ = true;
  conservation_until_ = delivered_;
  cwnd_ = std::max(in_flight + smss_, min_pipe_cwnd());
}

void Bbr::on_congestion_event(const LossEvent& loss) {
  // draft §4.2.3.4: packet conservation on entering recovery; the rate model
  // is untouched.
  save_cwnd();
  start_conservation(loss.in_flight);
}

PartialAckResponse Bbr::on_partial_ack(const AckEvent& ack) {
  (void)ack;
  return PartialAckResponse::RetransmitNextUnacked;  // RFC 6582 without SACK
}

void Bbr::on_recovery_exit(const AckEvent& ack) {
  (void)ack;
  conservation_ = false;
  cwnd_ = std::max(cwnd_, prior_cwnd_);  // draft §4.2.3.4 BBRRestoreCwnd
}

void Bbr::on_rto(const LossEvent& loss) {
  // A timeout: one segment until a retransmission is delivered, then the
  // window from before (draft §4.2.3.4); the model is kept.
  save_cwnd();
  conservation_ = true;
  conservation_until_ = delivered_;
  cwnd_ = smss_;
  (void)loss;
}

}  // namespace tinytcp::tcp
