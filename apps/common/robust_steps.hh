#pragma once

// The pieces the robust client and server (robust_client.cc,
// robust_server.cc) share: stepping a session against an endpoint's PumpIo,
// merging step outcomes, deadlines, and the session's abort reason for a
// StreamEnd abort.

#include <optional>

#include "common/stream_end.hh"
#include "session/session.hh"
#include "util/time.hh"

namespace tinytcp::apps::robust {

// The earlier of two deadlines (either may be absent).
std::optional<Instant> earliest(std::optional<Instant> a, std::optional<Instant> b);
// How long to wait for `deadline`, within [0, max_wait].
Duration until(std::optional<Instant> deadline, Instant now, Duration max_wait);
// The endpoint's side of a session: its output into the session (as much as
// the replay buffer takes), the session's bytes to its input.
StepOutcome step_session(session::Session& s, const PumpIo& io);
session::AbortReason abort_reason(StreamEnd::AbortCause cause);
// Two steps of one pass: progress if either (or the carrier) made some, the
// second's end.
StepOutcome merge(StepOutcome a, const StepOutcome& b, bool carrier_progress);

}  // namespace tinytcp::apps::robust
