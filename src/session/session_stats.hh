#pragma once

// SessionStats: what one Session counts (session.hh). Drops are carriers the
// session gave up on, one counter per reason; the rest are plain totals and
// the "future work" measures of the robust-TCP paper: unacknowledged bytes,
// the age of the oldest unacknowledged write, and how long the application's
// writes (replay buffer full) and reads (nothing to read) have been blocked.

#include <cstdint>

#include "util/counters.hh"
#include "util/time.hh"

namespace tinytcp::session {

enum class SessionDrop {
  BadFrame,         // unknown frame type on the carrier
  OversizedFrame,   // a length past the frame type's bound
  UnexpectedFrame,  // a frame type this state does not take
  MalformedFrame,   // a body of the wrong size
  BadMac,           // PSK mode: a control frame's MAC did not verify
  BadProof,         // the server's resume proof did not verify
  AckBeyondSent,    // an ACK (or resume) for bytes never sent
  DataPastLimit,    // DATA past the receive limit we announced
  DataAfterFin,     // DATA (or a second FIN) after the peer's FIN
  FinMismatch,      // a FIN at a position other than the bytes received
  LostAcked,        // a resume claiming less than the peer had acknowledged
  CarrierTimeout,   // nothing received for carrier_timeout
  kCount
};
const char* to_string(SessionDrop drop);

struct SessionStats {
  uint64_t bytes_written = 0;   // taken from the application
  uint64_t bytes_read = 0;      // consumed by the application
  uint64_t bytes_sent = 0;      // DATA payload put on carriers (replays included)
  uint64_t bytes_replayed = 0;  // of which resent after a reconnection
  uint64_t bytes_received = 0;  // DATA payload received
  uint64_t frames_sent = 0;
  uint64_t frames_received = 0;
  uint64_t acks_sent = 0;
  uint64_t heartbeats_sent = 0;  // ACKs sent only because the carrier was idle
  uint64_t carriers_attached = 0;
  uint64_t carriers_lost = 0;  // the owner reported a loss, or the session dropped one
  uint64_t resumes = 0;        // successful resumptions
  uint64_t passivations = 0;
  uint64_t aborts_sent = 0;      // ABORT frames: abort() reached the peer (or is on its way)
  uint64_t aborts_received = 0;  // the peer aborted (an ABORT, or a resume refused as aborted)
  uint64_t restarts = 0;         // a new session: the server did not know it before any byte moved
  EnumCounters<SessionDrop> drops;

  // As of the last call that brought the time (tick, input, attach, loss).
  uint64_t unacked_bytes = 0;
  Duration oldest_unacked_age{0};
  Duration write_blocked{0};  // total time write() found the replay buffer full
  Duration read_blocked{0};   // total time the application had read everything and waited
};

}  // namespace tinytcp::session
