#include "common/robust_steps.hh"

#include <algorithm>

namespace tinytcp::apps::robust {

using session::Session;

std::optional<Instant> earliest(std::optional<Instant> a, std::optional<Instant> b) {
  if (!a) {
    return b;
  }
  return b ? std::min(*a, *b) : a;
}

Duration until(std::optional<Instant> deadline, Instant now, Duration max_wait) {
  if (!deadline) {
    return max_wait;
  }
  return std::clamp<Duration>(*deadline - now, Duration::zero(), max_wait);
}

StepOutcome step_session(Session& s, const PumpIo& io) {
  StepOutcome out;
  for (std::string_view data = io.output(); !data.empty(); data = io.output()) {
    const size_t n = s.write(data);
    if (n == 0) {
      break;
    }
    io.consume(n);
    out.progress = true;
  }
  for (std::string_view in = s.readable(); !in.empty() && (!io.wants_input || io.wants_input());
       in = s.readable()) {
    io.input(in);
    s.consume(in.size());
    out.progress = true;
  }
  if (io.done()) {
    out.end = PumpOutcome{PumpResult::Done, {}};
  } else if (s.state() == Session::State::Failed) {
    out.end = PumpOutcome{PumpResult::Error, "session failed: " + s.error()};
  } else if (s.state() == Session::State::Aborted) {
    // A reset: the owner resets its side too (tt-tunnel: RST to the program).
    out.end = PumpOutcome{PumpResult::Error, "session " + s.error()};
  } else if (s.peer_finished()) {
    out.end = PumpOutcome{PumpResult::PeerClosed, "the peer closed the connection"};
  }
  return out;
}

session::AbortReason abort_reason(StreamEnd::AbortCause cause) {
  switch (cause) {
    case StreamEnd::AbortCause::Reset:
      return session::AbortReason::Reset;
    case StreamEnd::AbortCause::Refused:
      return session::AbortReason::Refused;
    case StreamEnd::AbortCause::Unreachable:
      return session::AbortReason::Unreachable;
    case StreamEnd::AbortCause::Application:
      break;
  }
  return session::AbortReason::Application;
}

StepOutcome merge(StepOutcome a, const StepOutcome& b, bool carrier_progress) {
  a.progress = a.progress || b.progress || carrier_progress;
  a.end = b.end;
  return a;
}

}  // namespace tinytcp::apps::robust
