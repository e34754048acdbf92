#pragma once

// AcceptorStats: what a SessionAcceptor counts. Every carrier it refuses or
// drops and every session it expires bumps exactly one AcceptorDrop counter.

#include <cstdint>

#include "util/counters.hh"

namespace tinytcp::session {

enum class AcceptorDrop {
  PendingFull,       // a carrier arrived while max_pending_carriers were handshaking
  HandshakeTimeout,  // no HELLO/RESUME (or PROOF) within handshake_timeout
  BadFrame,          // garbage before the handshake: an unknown frame type
  OversizedFrame,    // a frame length past its type's bound before the handshake
  UnexpectedFrame,   // a frame the handshake does not take at that point
  MalformedFrame,    // a handshake body of the wrong size
  BadMac,            // PSK mode: a handshake frame failed its MAC (wrong or no key)
  BadVersion,        // a HELLO of another version
  SessionsFull,      // a HELLO while max_sessions exist
  UnknownSession,    // a RESUME for an id we do not hold
  BadProof,          // a resume proof that does not verify (forged)
  ReplayedResume,    // a RESUME with a client nonce this session has seen
  ResumeRefused,     // an authenticated resume the session cannot meet (it failed)
  SessionExpired,    // a session without a carrier for idle_session_lifetime
  // A HELLO with the id of a session we hold (an attacker guessing 128-bit
  // ids, or a client bug): refused, the session untouched.
  SessionExists,
  kCount
};
const char* to_string(AcceptorDrop drop);

struct AcceptorStats {
  uint64_t carriers_accepted = 0;
  uint64_t sessions_opened = 0;
  uint64_t sessions_resumed = 0;
  uint64_t sessions_finished = 0;
  uint64_t sessions_failed = 0;
  uint64_t sessions_aborted = 0;   // reset by either end (ABORT)
  uint64_t carriers_replaced = 0;  // an older carrier closed because a resume replaced it
  uint64_t finished_evicted = 0;   // finished sessions forgotten early for a new one
  EnumCounters<AcceptorDrop> drops;
};

}  // namespace tinytcp::session
