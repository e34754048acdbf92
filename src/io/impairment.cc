#include "io/impairment.hh"

#include <algorithm>

#include <spdlog/spdlog.h>

namespace tinytcp::io {

double GilbertElliott::mean_loss() const {
  const double p = good_to_bad;
  const double r = bad_to_good;
  if (p + r <= 0.0) {
    return loss_in_good;  // the chain never leaves the good state it starts in
  }
  return (r * loss_in_good + p * loss_in_bad) / (p + r);
}

bool ImpairmentConfig::is_identity() const {
  return loss <= 0.0 && !burst && duplicate <= 0.0 && corrupt <= 0.0 && rate_bits_per_second == 0 &&
         delay <= Duration::zero() && jitter <= Duration::zero() && reorder <= 0.0;
}

const char* to_string(ImpairmentDrop drop) {
  switch (drop) {
    case ImpairmentDrop::kLoss:
      return "loss";
    case ImpairmentDrop::kRateQueueFull:
      return "rate-queue-full";
    case ImpairmentDrop::kHoldLimit:
      return "hold-limit";
    case ImpairmentDrop::kCount:
      break;
  }
  return "unknown";
}

ImpairmentModel::ImpairmentModel(const ImpairmentConfig& config, uint64_t seed)
    : config_(config), rng_(seed) {}

bool ImpairmentModel::lose() {
  if (config_.burst) {
    const GilbertElliott& ge = *config_.burst;
    const bool lost = rng_.chance(bad_state_ ? ge.loss_in_bad : ge.loss_in_good);
    bad_state_ = bad_state_ ? !rng_.chance(ge.bad_to_good) : rng_.chance(ge.good_to_bad);
    return lost;
  }
  return config_.loss > 0.0 && rng_.chance(config_.loss);
}

Duration ImpairmentModel::sample_delay() {
  Duration d = config_.delay;
  if (config_.jitter > Duration::zero()) {
    const auto span = static_cast<uint64_t>(config_.jitter.count());
    const auto offset = static_cast<int64_t>(rng_.uniform(0, 2 * span)) - config_.jitter.count();
    d += Duration(offset);
  }
  return std::max(d, Duration::zero());
}

void ImpairmentModel::push(std::string_view packet, Instant now) {
  ++stats_.packets_in;
  if (lose()) {
    stats_.drops.count(ImpairmentDrop::kLoss);
    SPDLOG_TRACE("impairment: lose {} bytes", packet.size());
    return;
  }
  const bool twice = config_.duplicate > 0.0 && rng_.chance(config_.duplicate);

  // The rate-limited link: this packet leaves when the backlog before it and
  // its own bits have been serialized.
  Instant departed = now;
  if (config_.rate_bits_per_second > 0) {
    const Instant start = std::max(now, link_free_at_);
    const auto backlog_ns = static_cast<double>((start - now).count());
    const double backlog_bytes =
        backlog_ns * static_cast<double>(config_.rate_bits_per_second) / 8e9;
    if (backlog_bytes + static_cast<double>(packet.size()) >
        static_cast<double>(config_.rate_queue_limit_bytes)) {
      stats_.drops.count(ImpairmentDrop::kRateQueueFull);
      SPDLOG_TRACE("impairment: rate queue full, drop {} bytes", packet.size());
      return;
    }
    const size_t copies = twice ? 2 : 1;
    const double tx_ns = static_cast<double>(packet.size() * copies) * 8e9 /
                         static_cast<double>(config_.rate_bits_per_second);
    link_free_at_ = start + Duration(static_cast<int64_t>(tx_ns));
    departed = link_free_at_;
  }

  Instant due = std::max(departed + sample_delay(), last_in_order_due_);
  if (config_.reorder > 0.0 && rng_.chance(config_.reorder)) {
    ++stats_.reordered;
    due += config_.reorder_delay;
  } else {
    last_in_order_due_ = due;
  }
  hold(packet, due);
  if (twice) {
    ++stats_.duplicated;
    hold(packet, due);
  }
}

void ImpairmentModel::hold(std::string_view packet, Instant due) {
  if (queue_.size() >= config_.hold_limit_packets) {
    stats_.drops.count(ImpairmentDrop::kHoldLimit);
    SPDLOG_DEBUG("impairment: hold limit {} reached", config_.hold_limit_packets);
    return;
  }
  size_t slot = 0;
  if (free_slots_.empty()) {
    slot = slots_.size();
    slots_.emplace_back();
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
  }
  std::string& buffer = slots_[slot];
  buffer.assign(packet.data(), packet.size());
  if (config_.corrupt > 0.0 && rng_.chance(config_.corrupt) && !buffer.empty()) {
    const uint64_t bit = rng_.uniform(0, buffer.size() * 8 - 1);
    buffer[bit / 8] = static_cast<char>(buffer[bit / 8] ^ (1 << (bit % 8)));
    ++stats_.corrupted;
  }
  queue_.push_back(Held{due, next_order_++, slot});
  std::push_heap(queue_.begin(), queue_.end(), Later{});
}

size_t ImpairmentModel::release(Instant now, const PacketHandler& out) {
  size_t released = 0;
  while (!queue_.empty() && queue_.front().due <= now) {
    std::pop_heap(queue_.begin(), queue_.end(), Later{});
    const size_t slot = queue_.back().slot;
    queue_.pop_back();
    const std::string& buffer = slots_[slot];
    ++stats_.packets_out;
    stats_.bytes_out += buffer.size();
    ++released;
    // The slot goes back to the free list only after `out` returns, so a push
    // from inside `out` cannot overwrite the bytes it is looking at.
    out(buffer);
    free_slots_.push_back(slot);
  }
  return released;
}

size_t ImpairmentModel::release_into(Instant now, std::vector<std::string_view>& out) {
  size_t released = 0;
  while (!queue_.empty() && queue_.front().due <= now) {
    std::pop_heap(queue_.begin(), queue_.end(), Later{});
    const size_t slot = queue_.back().slot;
    queue_.pop_back();
    const std::string& buffer = slots_[slot];
    ++stats_.packets_out;
    stats_.bytes_out += buffer.size();
    ++released;
    out.emplace_back(buffer);
    // Free, but the bytes stay put until a push() reuses the slot.
    free_slots_.push_back(slot);
  }
  return released;
}

std::optional<Instant> ImpairmentModel::next_deadline() const {
  if (queue_.empty()) {
    return std::nullopt;
  }
  return queue_.front().due;
}

}  // namespace tinytcp::io
