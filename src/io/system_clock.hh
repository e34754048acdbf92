#pragma once

// The real clock: Instants on the CLOCK_MONOTONIC time line (origin: boot), so
// an Instant converts exactly to the absolute timespec that epoll and timerfd
// take. Also the wall clock, which only pcap timestamps use.

#include <ctime>

#include "io/clock.hh"

namespace tinytcp::io {

class SystemClock : public Clock {
 public:
  Instant now() const override;
  // The process-wide instance (the clock has no state).
  static SystemClock& instance();
};

// CLOCK_MONOTONIC as an Instant.
Instant monotonic_now();
// An Instant of the CLOCK_MONOTONIC line as a timespec (negative values clamp to 0).
timespec to_timespec(Instant t);
timespec to_timespec(Duration d);
// CLOCK_REALTIME, as time since the Unix epoch (for capture timestamps).
Duration wall_clock_now();

}  // namespace tinytcp::io
