#include "tcp/receive_buffer_tuner.hh"

#include <algorithm>
#include <chrono>

namespace tinytcp::tcp {
namespace {

// Linux's TCP_INIT_CWND: the first measurement compares with ten segments.
constexpr uint64_t kInitialSpaceSegments = 10;
// Linux's cushion for small variations: 16 segments on top of 2 x copied.
constexpr uint64_t kCushionSegments = 16;
// An echo older than this is not a round trip (a peer echoing a stale
// timestamp after a long idle, or a broken one).
constexpr int32_t kMaxTimestampRttMs = 60 * 1000;

}  // namespace

ReceiveBufferTuner::ReceiveBufferTuner(uint64_t initial, uint64_t max, uint64_t mss)
    : buffer_(initial),
      max_(std::max(initial, max)),
      mss_(mss),
      space_(std::max<uint64_t>(1, std::min(initial, kInitialSpaceSegments * mss))) {}

std::optional<Duration> ReceiveBufferTuner::rtt() const {
  if (rtt_ == Duration::zero()) {
    return std::nullopt;
  }
  return rtt_;
}

void ReceiveBufferTuner::add_rtt_sample(Duration sample, bool window_dependent) {
  if (rtt_ == Duration::zero()) {
    rtt_ = sample;
  } else if (!window_dependent) {
    rtt_ += (sample - rtt_) / 8;
  } else {
    rtt_ = std::min(rtt_, sample);
  }
}

void ReceiveBufferTuner::on_timestamp_echo(uint32_t tsval_now, uint32_t tsecr, uint64_t length,
                                           uint64_t rcv_mss) {
  if (tsecr == 0 || (last_tsecr_ && *last_tsecr_ == tsecr)) {
    return;
  }
  last_tsecr_ = tsecr;
  if (length < rcv_mss) {
    return;  // a small segment may have waited for the application
  }
  const auto ms = static_cast<int32_t>(tsval_now - tsecr);
  if (ms > 0 && ms <= kMaxTimestampRttMs) {
    add_rtt_sample(std::chrono::milliseconds(ms), false);
  }
}

void ReceiveBufferTuner::on_data(uint64_t rcv_nxt, uint64_t edge, Instant now) {
  if (window_time_) {
    if (rcv_nxt < window_seq_) {
      return;
    }
    add_rtt_sample(std::max<Duration>(now - *window_time_, std::chrono::microseconds(1)), true);
  }
  window_seq_ = std::max(edge, rcv_nxt + 1);
  window_time_ = now;
}

void ReceiveBufferTuner::on_consumed(uint64_t consumed, Instant now) {
  if (!space_time_) {
    space_seq_ = consumed;
    space_time_ = now;
    return;
  }
  if (rtt_ == Duration::zero() || now - *space_time_ < rtt_) {
    return;
  }
  const uint64_t copied = std::min(consumed - space_seq_, max_);
  if (copied > space_) {
    // Linux's tcp_rcv_space_adjust: twice what was read in the last round
    // trip covers a loss (RFC 5681 halves, then the window must still cover
    // the rate), plus a cushion; and while the sender is still growing (slow
    // start doubles per round trip), the window advertised now is used a
    // round trip later: add twice the growth.
    uint64_t window = 2 * copied + kCushionSegments * mss_;
    window += 2 * (window * (copied - space_) / space_);
    if (window > buffer_ && buffer_ < max_) {
      buffer_ = std::min(window, max_);
      ++grows_;
    }
    space_ = copied;
  }
  space_seq_ = consumed;
  space_time_ = now;
}

}  // namespace tinytcp::tcp
