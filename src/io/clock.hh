#pragma once

// Where io/ components that hold packets back (ImpairedAdapter) and the event
// loop get the time. SystemClock reads CLOCK_MONOTONIC; ManualClock is moved by
// hand, so tests and simulations drive the same code without sleeping.

#include "util/time.hh"

namespace tinytcp::io {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual Instant now() const = 0;
};

// A clock that moves only when told to.
class ManualClock : public Clock {
 public:
  explicit ManualClock(Instant start = Instant{}) : now_(start) {}
  Instant now() const override { return now_; }
  void advance(Duration d) { now_ += d; }
  void set(Instant t) { now_ = t; }

 private:
  Instant now_;
};

}  // namespace tinytcp::io
