#pragma once

// BlockedTimer: the total time something has waited (the application's
// writes on a full replay buffer, its reads on an empty receive buffer), for
// SessionStats. Time comes in; nothing reads a clock.

#include <optional>

#include "util/time.hh"

namespace tinytcp::session {

class BlockedTimer {
 public:
  void start(Instant now) {
    if (!since_) {
      since_ = now;
    }
  }
  void stop(Instant now) {
    flush(now);
    since_.reset();
  }
  // Counts the time so far of a wait that goes on.
  void flush(Instant now) {
    if (since_ && now > *since_) {
      total_ += now - *since_;
      since_ = now;
    }
  }
  bool running() const { return since_.has_value(); }
  Duration total() const { return total_; }

 private:
  std::optional<Instant> since_;
  Duration total_{0};
};

}  // namespace tinytcp::session
