#include "io/system_clock.hh"

#include <time.h>

namespace tinytcp::io {
namespace {

Duration read_clock(clockid_t id) {
  timespec ts{};
  // clock_gettime cannot fail for these clock ids on Linux.
  static_cast<void>(::clock_gettime(id, &ts));
  return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
}

}  // namespace

Instant SystemClock::now() const {
  return monotonic_now();
}

SystemClock& SystemClock::instance() {
  static SystemClock clock;
  return clock;
}

Instant monotonic_now() {
  return Instant::from_epoch(read_clock(CLOCK_MONOTONIC));
}

Duration wall_clock_now() {
  return read_clock(CLOCK_REALTIME);
}

timespec to_timespec(Duration d) {
  if (d < Duration::zero()) {
    d = Duration::zero();
  }
  const auto secs = std::chrono::duration_cast<std::chrono::seconds>(d);
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(secs.count());
  ts.tv_nsec = static_cast<long>((d - secs).count());
  return ts;
}

timespec to_timespec(Instant t) {
  return to_timespec(t.since_epoch());
}

}  // namespace tinytcp::io
