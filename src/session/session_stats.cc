#include "session/session_stats.hh"

#include "session/session.hh"

namespace tinytcp::session {

const char* to_string(SessionDrop drop) {
  switch (drop) {
    case SessionDrop::BadFrame:
      return "bad-frame";
    case SessionDrop::OversizedFrame:
      return "oversized-frame";
    case SessionDrop::UnexpectedFrame:
      return "unexpected-frame";
    case SessionDrop::MalformedFrame:
      return "malformed-frame";
    case SessionDrop::BadMac:
      return "bad-mac";
    case SessionDrop::BadProof:
      return "bad-proof";
    case SessionDrop::AckBeyondSent:
      return "ack-beyond-sent";
    case SessionDrop::DataPastLimit:
      return "data-past-limit";
    case SessionDrop::DataAfterFin:
      return "data-after-fin";
    case SessionDrop::FinMismatch:
      return "fin-mismatch";
    case SessionDrop::LostAcked:
      return "lost-acked";
    case SessionDrop::CarrierTimeout:
      return "carrier-timeout";
    case SessionDrop::kCount:
      break;
  }
  return "unknown";
}

const char* to_string(Session::State state) {
  switch (state) {
    case Session::State::Opening:
      return "opening";
    case Session::State::Open:
      return "open";
    case Session::State::Resuming:
      return "resuming";
    case Session::State::Disconnected:
      return "disconnected";
    case Session::State::Closed:
      return "closed";
    case Session::State::Failed:
      return "failed";
    case Session::State::Aborted:
      return "aborted";
  }
  return "unknown";
}

}  // namespace tinytcp::session
