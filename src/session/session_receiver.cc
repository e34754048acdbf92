#include "session/session_receiver.hh"

#include <algorithm>

namespace tinytcp::session {

SessionReceiver::SessionReceiver(size_t capacity)
    : received_(capacity, std::min<uint64_t>(capacity, stream::ByteStream::kInitialRing)) {}

uint64_t SessionReceiver::consume(size_t n) {
  const uint64_t before = received_.bytes_popped();
  received_.pop(n);
  return received_.bytes_popped() - before;
}

std::optional<SessionDrop> SessionReceiver::on_data(std::string_view body) {
  if (fin_) {
    return SessionDrop::DataAfterFin;
  }
  if (received_.bytes_pushed() + body.size() > limit()) {
    return SessionDrop::DataPastLimit;
  }
  received_.push(body);
  return std::nullopt;
}

std::optional<SessionDrop> SessionReceiver::on_fin(uint64_t position) {
  if (fin_) {
    return SessionDrop::DataAfterFin;
  }
  if (position != received_.bytes_pushed()) {
    return SessionDrop::FinMismatch;
  }
  fin_ = true;
  ack_requested_ = true;
  return std::nullopt;
}

bool SessionReceiver::ack_due(uint64_t ack_interval) const {
  const uint64_t window_step = std::max<uint64_t>(1, received_.capacity() / 2);
  return ack_requested_ || position() - last_ack_position_ >= ack_interval ||
         limit() - last_ack_limit_ >= window_step;
}

}  // namespace tinytcp::session
