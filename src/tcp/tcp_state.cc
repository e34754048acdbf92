#include "tcp/tcp_state.hh"

namespace tinytcp::tcp {

const char* to_string(TcpState state) {
  switch (state) {
    case TcpState::Closed:
      return "CLOSED";
    case TcpState::Listen:
      return "LISTEN";
    case TcpState::SynSent:
      return "SYN-SENT";
    case TcpState::SynReceived:
      return "SYN-RECEIVED";
    case TcpState::Established:
      return "ESTABLISHED";
    case TcpState::FinWait1:
      return "FIN-WAIT-1";
    case TcpState::FinWait2:
      return "FIN-WAIT-2";
    case TcpState::CloseWait:
      return "CLOSE-WAIT";
    case TcpState::Closing:
      return "CLOSING";
    case TcpState::LastAck:
      return "LAST-ACK";
    case TcpState::TimeWait:
      return "TIME-WAIT";
    case TcpState::kCount:
      break;
  }
  return "unknown";
}

const char* to_string(CloseReason reason) {
  switch (reason) {
    case CloseReason::Normal:
      return "closed normally";
    case CloseReason::Refused:
      return "connection refused";
    case CloseReason::ResetByPeer:
      return "connection reset by peer";
    case CloseReason::TimedOut:
      return "timed out (too many retransmissions)";
    case CloseReason::UserTimeout:
      return "user timeout";
    case CloseReason::KeepaliveTimeout:
      return "keepalive timeout";
    case CloseReason::FinWait2Timeout:
      return "FIN-WAIT-2 timeout";
    case CloseReason::Aborted:
      return "aborted";
    case CloseReason::kCount:
      break;
  }
  return "unknown";
}

CloseReason close_reason_for(SenderFailure failure) {
  switch (failure) {
    case SenderFailure::MaxRetransmissions:
      return CloseReason::TimedOut;
    case SenderFailure::UserTimeout:
      return CloseReason::UserTimeout;
    case SenderFailure::KeepaliveTimeout:
      return CloseReason::KeepaliveTimeout;
  }
  return CloseReason::TimedOut;
}

const char* to_string(ConnectionDrop drop) {
  switch (drop) {
    case ConnectionDrop::Closed:
      return "segment for a closed connection";
    case ConnectionDrop::ListenNotSyn:
      return "LISTEN: not a SYN";
    case ConnectionDrop::ListenRst:
      return "LISTEN: RST";
    case ConnectionDrop::ListenAck:
      return "LISTEN: ACK";
    case ConnectionDrop::SynSentBadAck:
      return "SYN-SENT: unacceptable ACK";
    case ConnectionDrop::SynSentRstNoAck:
      return "SYN-SENT: RST without acceptable ACK";
    case ConnectionDrop::SynSentNoSyn:
      return "SYN-SENT: neither SYN nor RST";
    case ConnectionDrop::RstOutOfWindow:
      return "RST outside the window";
    case ConnectionDrop::RstInWindow:
      return "RST in window, not at RCV.NXT";
    case ConnectionDrop::SynSynchronized:
      return "SYN in a synchronized state";
    case ConnectionDrop::NoAck:
      return "ACK bit off";
    case ConnectionDrop::AckUnsent:
      return "ACK of unsent data";
    case ConnectionDrop::AckTooOld:
      return "ACK too old";
    case ConnectionDrop::SynReceivedBadAck:
      return "SYN-RECEIVED: unacceptable ACK";
    case ConnectionDrop::ChallengeAckRateLimited:
      return "challenge ACK rate limited";
    case ConnectionDrop::InvalidReplyRateLimited:
      return "reply to an unacceptable segment rate limited";
    case ConnectionDrop::kCount:
      break;
  }
  return "unknown";
}

}  // namespace tinytcp::tcp
