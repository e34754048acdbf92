#pragma once

// ReplayBuffer: the bytes a Session has accepted from its application but the
// peer has not yet acknowledged, addressed by absolute 64-bit stream position.
// After a reconnection the session resends from whatever position the peer
// says it holds, so every byte is delivered exactly once. Bounded: append()
// takes only what fits, which is the session's flow control toward the app.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "stream/byte_stream.hh"

namespace tinytcp::session {

class ReplayBuffer {
 public:
  explicit ReplayBuffer(size_t capacity);

  // Takes as much of `data` as fits; returns how much.
  size_t append(std::string_view data);
  // The peer holds every byte before `position`: those are released. A
  // position behind acked() changes nothing; one past end() is refused (false).
  bool acknowledge(uint64_t position);

  // A contiguous view of up to `max` bytes starting at `position`
  // (acked() <= position <= end()); shorter at the ring's wrap point.
  std::string_view view_at(uint64_t position, size_t max) const;

  uint64_t acked() const { return stream_.bytes_popped(); }
  uint64_t end() const { return stream_.bytes_pushed(); }
  size_t unacked() const { return static_cast<size_t>(end() - acked()); }
  size_t free_space() const { return static_cast<size_t>(stream_.available_capacity()); }
  size_t capacity() const { return static_cast<size_t>(stream_.capacity()); }

 private:
  stream::ByteStream stream_;
};

}  // namespace tinytcp::session
