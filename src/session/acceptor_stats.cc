#include "session/acceptor_stats.hh"

namespace tinytcp::session {

const char* to_string(AcceptorDrop drop) {
  switch (drop) {
    case AcceptorDrop::PendingFull:
      return "pending-full";
    case AcceptorDrop::HandshakeTimeout:
      return "handshake-timeout";
    case AcceptorDrop::BadFrame:
      return "bad-frame";
    case AcceptorDrop::OversizedFrame:
      return "oversized-frame";
    case AcceptorDrop::UnexpectedFrame:
      return "unexpected-frame";
    case AcceptorDrop::MalformedFrame:
      return "malformed-frame";
    case AcceptorDrop::BadMac:
      return "bad-mac";
    case AcceptorDrop::BadVersion:
      return "bad-version";
    case AcceptorDrop::SessionsFull:
      return "sessions-full";
    case AcceptorDrop::UnknownSession:
      return "unknown-session";
    case AcceptorDrop::BadProof:
      return "bad-proof";
    case AcceptorDrop::ReplayedResume:
      return "replayed-resume";
    case AcceptorDrop::ResumeRefused:
      return "resume-refused";
    case AcceptorDrop::SessionExpired:
      return "session-expired";
    case AcceptorDrop::SessionExists:
      return "session-exists";
    case AcceptorDrop::kCount:
      break;
  }
  return "unknown";
}

}  // namespace tinytcp::session
