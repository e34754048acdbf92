#include "session/replay_buffer.hh"

#include <algorithm>

namespace tinytcp::session {

ReplayBuffer::ReplayBuffer(size_t capacity)
    : stream_(capacity, std::min<uint64_t>(capacity, stream::ByteStream::kInitialRing)) {}

size_t ReplayBuffer::append(std::string_view data) {
  return static_cast<size_t>(stream_.push(data));
}

bool ReplayBuffer::acknowledge(uint64_t position) {
  if (position > end()) {
    return false;
  }
  if (position > acked()) {
    stream_.pop(position - acked());
  }
  return true;
}

std::string_view ReplayBuffer::view_at(uint64_t position, size_t max) const {
  if (position < acked() || position >= end()) {
    return {};
  }
  const auto view = stream_.peek_at(position - acked());
  return view.substr(0, std::min(max, view.size()));
}

}  // namespace tinytcp::session
