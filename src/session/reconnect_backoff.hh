#pragma once

// ReconnectBackoff: when a client Session tries its next carrier. Exponential
// from `initial`, capped at `max` (default 500 ms, so a path that returns is
// used within a second), each delay jittered down to as little as half of
// itself so clients cut at the same moment do not all return at once.

#include <cstdint>
#include <functional>
#include <string>

#include "util/time.hh"

namespace tinytcp::session {

class ReconnectBackoff {
 public:
  ReconnectBackoff(Duration initial, Duration max) : initial_(initial), max_(max) {}

  // The delay before the next attempt; each call without a reset() doubles it.
  Duration next(const std::function<std::string(size_t)>& random);
  // A carrier got through: start again from `initial`.
  void reset() { attempts_ = 0; }
  uint32_t attempts() const { return attempts_; }

 private:
  Duration initial_;
  Duration max_;
  uint32_t attempts_ = 0;
};

}  // namespace tinytcp::session
