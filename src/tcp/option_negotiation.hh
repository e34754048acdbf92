#pragma once

// OptionNegotiation: the SYN options of one connection. It reads what the
// peer's SYN offered (MSS, RFC 9293 §3.7.1; window scale and timestamps,
// RFC 7323; SACK-permitted, RFC 2018), settles what both sides will use
// (an option is in use only if both SYNs carried it), and completes our own
// SYN or SYN-ACK so that a SYN-ACK carries only options the SYN offered.
//
// It decides and remembers; TcpConnection hands the result to its
// TcpSender and TcpReceiver, which apply it.

#include <cstdint>
#include <optional>

#include "tcp/tcp_config.hh"
#include "tcp/tcp_segment.hh"

namespace tinytcp::tcp {

// What the handshake settled, handed to the sender once the peer's SYN (or
// SYN-ACK) has been seen.
struct PeerOptions {
  uint16_t mss = 536;             // the peer's announced MSS (or the default)
  uint8_t send_window_shift = 0;  // shift to apply to the peer's window field
  bool sack = false;              // both sides sent SACK-permitted
  bool timestamps = false;        // both sides sent timestamps
};

// What both sides use after the handshake.
struct NegotiatedOptions {
  PeerOptions peer;             // for the sender
  bool window_scaling = false;  // for the receiver: it announces a shifted window
  bool sack = false;
  bool timestamps = false;
};

class OptionNegotiation {
 public:
  // The options our SYN offers: MSS, SACK-permitted and, when configured,
  // timestamps with TSval `tsval` (TcpConnection adds the window scale).
  static void offer(TcpOptions& options, const TcpConfig& config, uint32_t tsval);
  // The peer's SYN (or SYN-ACK) arrived: what it offered against what
  // `config` allows.
  NegotiatedOptions on_peer_syn(const TcpSegment& syn, const TcpConfig& config);
  // Completes our SYN or SYN-ACK: window scale `window_shift` (the
  // receiver's choice) when allowed, and on a SYN-ACK only what the peer's
  // SYN carried (RFC 7323 §1.3, §3.2; RFC 2018 §2).
  void complete_syn(TcpSegment& syn, const TcpConfig& config,
                    std::optional<uint8_t> window_shift) const;

 private:
  bool peer_syn_seen_ = false;  // our SYN is a SYN-ACK (passive or simultaneous open)
  bool peer_offered_ws_ = false;
  bool peer_offered_sack_ = false;
  bool peer_offered_ts_ = false;
};

}  // namespace tinytcp::tcp
