#include "session/reconnect_backoff.hh"

#include <algorithm>

namespace tinytcp::session {

Duration ReconnectBackoff::next(const std::function<std::string(size_t)>& random) {
  Duration delay = initial_;
  for (uint32_t i = 0; i < attempts_ && delay < max_; ++i) {
    delay *= 2;
  }
  delay = std::min(delay, max_);
  ++attempts_;
  const std::string r = random(2);
  const auto fraction =
      static_cast<uint16_t>((static_cast<uint8_t>(r[0]) << 8) | static_cast<uint8_t>(r[1]));
  return delay / 2 + (delay / 2) * fraction / 65535;
}

}  // namespace tinytcp::session
