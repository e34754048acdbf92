#include "tcp/sender_stats.hh"

namespace tinytcp::tcp {

std::string_view to_string(AckResult r) {
  switch (r) {
    case AckResult::NoAck:
      return "no ACK flag";
    case AckResult::Advanced:
      return "advanced";
    case AckResult::Duplicate:
      return "duplicate";
    case AckResult::Old:
      return "old";
    case AckResult::TooOld:
      return "too old (RFC 5961)";
    case AckResult::Unsent:
      return "acknowledges unsent data";
  }
  return "?";
}

std::string_view to_string(SenderInputError e) {
  switch (e) {
    case SenderInputError::SackBlockInverted:
      return "SACK block with left >= right";
    case SenderInputError::SackBlockOutOfWindow:
      return "SACK block outside [SND.UNA, SND.NXT]";
    case SenderInputError::SackNotNegotiated:
      return "SACK blocks without SACK negotiated";
    case SenderInputError::WindowShrunk:
      return "window shrunk";
    case SenderInputError::TimestampEchoInFuture:
      return "timestamp echo in the future";
    case SenderInputError::WindowScaleTooLarge:
      return "window scale above 14";
    case SenderInputError::PeerMssTooSmall:
      return "peer MSS too small";
    case SenderInputError::kCount:
      break;
  }
  return "?";
}

std::string_view to_string(SenderFailure f) {
  switch (f) {
    case SenderFailure::MaxRetransmissions:
      return "too many retransmissions";
    case SenderFailure::UserTimeout:
      return "user timeout";
    case SenderFailure::KeepaliveTimeout:
      return "keepalive timeout";
  }
  return "?";
}

}  // namespace tinytcp::tcp
