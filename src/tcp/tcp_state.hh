#pragma once

// The states of a TCP connection (RFC 9293 §3.3.2), why one reached CLOSED,
// and why the state machine dropped a segment: the vocabulary TcpConnection
// reports in, kept apart so that stack/ and apps name states without the
// connection's machinery.

#include "tcp/sender_stats.hh"

namespace tinytcp::tcp {

// RFC 9293 §3.3.2.
enum class TcpState {
  Closed,
  Listen,
  SynSent,
  SynReceived,
  Established,
  FinWait1,
  FinWait2,
  CloseWait,
  Closing,
  LastAck,
  TimeWait,
  kCount,
};
const char* to_string(TcpState state);
// ESTABLISHED or any state after it: the handshake completed (RFC 9293
// "synchronized" states without SYN-RECEIVED).
inline bool established_or_later(TcpState state) {
  switch (state) {
    case TcpState::Established:
    case TcpState::FinWait1:
    case TcpState::FinWait2:
    case TcpState::CloseWait:
    case TcpState::Closing:
    case TcpState::LastAck:
    case TcpState::TimeWait:
      return true;
    default:
      return false;
  }
}

// Why the connection reached CLOSED.
enum class CloseReason {
  Normal,            // both FINs exchanged and acknowledged (and TIME-WAIT over)
  Refused,           // RST in answer to our SYN
  ResetByPeer,       // RST in a synchronized state
  TimedOut,          // too many retransmissions
  UserTimeout,       // RFC 9293 §3.8.3 user timeout
  KeepaliveTimeout,  // RFC 1122 §4.2.3.6 probes unanswered
  FinWait2Timeout,   // orphaned in FIN-WAIT-2 for TcpConfig::fin_wait2_timeout (reset)
  Aborted,           // abort() by the application
  kCount,
};
const char* to_string(CloseReason reason);
// The close reason of a connection whose sender gave up.
CloseReason close_reason_for(SenderFailure failure);

// Segments dropped by the state machine (the receiver counts PAWS and
// window drops itself). Each is one counter.
enum class ConnectionDrop {
  Closed,                   // arrived in CLOSED (answered with RST unless RST)
  ListenNotSyn,             // LISTEN: neither SYN nor (answered) ACK
  ListenRst,                // LISTEN: RST
  ListenAck,                // LISTEN: ACK (answered with RST)
  SynSentBadAck,            // SYN-SENT: ACK outside (ISS, SND.NXT] (answered with RST)
  SynSentRstNoAck,          // SYN-SENT: RST without an acceptable ACK
  SynSentNoSyn,             // SYN-SENT: neither SYN nor RST
  RstOutOfWindow,           // RFC 5961 §3.2: RST outside the window
  RstInWindow,              // RFC 5961 §3.2: RST in window but not at RCV.NXT (challenged)
  SynSynchronized,          // RFC 5961 §4: SYN in a synchronized state (challenged)
  NoAck,                    // RFC 9293 §3.10.7.4: ACK bit off
  AckUnsent,                // ACK of something not yet sent (answered with ACK)
  AckTooOld,                // RFC 5961 §5.2: ACK below SND.UNA - MAX.SND.WND (answered with ACK)
  SynReceivedBadAck,        // SYN-RECEIVED: unacceptable ACK (answered with RST)
  ChallengeAckRateLimited,  // RFC 5961 §7: a challenge ACK not sent
  InvalidReplyRateLimited,  // RFC 5961 §7: no reply to an unacceptable segment (rate limit)
  kCount,
};
const char* to_string(ConnectionDrop drop);

}  // namespace tinytcp::tcp
