#include "session/session_sender.hh"

#include <algorithm>

namespace tinytcp::session {

namespace {

// Write times kept for the oldest-unacked age; past it the last one stretches.
constexpr size_t kMaxWriteTimes = 64;

}  // namespace

size_t SessionSender::write(std::string_view data, Instant now) {
  const size_t taken = replay_.append(data);
  if (taken > 0) {
    if (write_times_.size() < kMaxWriteTimes) {
      write_times_.emplace_back(replay_.end(), now);
    } else {
      write_times_.back().first = replay_.end();
    }
  }
  return taken;
}

std::string_view SessionSender::next_data(size_t max) const {
  const uint64_t send_end = std::min<uint64_t>(replay_.end(), peer_limit_);
  if (send_next_ >= send_end) {
    return {};
  }
  return replay_.view_at(send_next_,
                         static_cast<size_t>(std::min<uint64_t>(max, send_end - send_next_)));
}

uint64_t SessionSender::sent(size_t n) {
  const uint64_t replayed =
      send_next_ < max_sent_ ? std::min<uint64_t>(n, max_sent_ - send_next_) : 0;
  send_next_ += n;
  max_sent_ = std::max(max_sent_, send_next_);
  return replayed;
}

std::optional<SessionDrop> SessionSender::check_position(uint64_t received) const {
  if (received > max_sent_position()) {
    return SessionDrop::AckBeyondSent;
  }
  if (received < replay_.acked()) {
    return SessionDrop::LostAcked;
  }
  return std::nullopt;
}

void SessionSender::acknowledge(uint64_t received, uint64_t limit) {
  replay_.acknowledge(std::min(received, replay_.end()));
  if (fin_ever_sent_ && received == replay_.end() + 1) {
    fin_acked_ = true;
  }
  send_next_ = std::max(send_next_, replay_.acked());
  peer_limit_ = std::max(peer_limit_, limit);
  while (!write_times_.empty() && write_times_.front().first <= replay_.acked()) {
    write_times_.pop_front();
  }
}

Duration SessionSender::oldest_unacked_age(Instant now) const {
  if (write_times_.empty() || replay_.unacked() == 0) {
    return Duration{0};
  }
  return now - write_times_.front().second;
}

}  // namespace tinytcp::session
