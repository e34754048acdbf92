#pragma once

// PathMss: how big a TcpSender's segments may be. The room for payload and
// options is min(our MSS, the peer's MSS, what the path carries) (RFC 6691),
// and the SMSS of congestion control is that less the timestamp option
// bytes every segment carries. The path's part only ever goes down: an ICMP
// fragmentation-needed that checked out (RFC 1191; below 552 bytes not
// believed, as Linux's min_pmtu), or full-sized segments that keep timing
// out with no ICMP at all (black-hole detection, RFC 4821 §7.2 / RFC 8899:
// 1024, then 536). What was sent too big and is still in flight is marked
// lost, to go again cut to size, with no congestion response (Linux's
// tcp_simple_retransmit). TcpConfig::path_mtu_expiry after the last
// lowering, the path's limit is forgotten and full-sized segments are
// tried again (RFC 1191 §6.3, as Linux's PMTU expiry).

#include <algorithm>
#include <cstdint>
#include <optional>

#include "tcp/send_state.hh"
#include "tcp/tcp_config.hh"

namespace tinytcp::tcp {

class PathMss {
 public:
  // The SMSS before the handshake: our MSS against the default peer MSS.
  static uint32_t initial_smss(const TcpConfig& config);
  // Bytes for payload and options together in one segment.
  uint32_t segment_room(const SendState& s) const {
    return std::min<uint32_t>({s.config.mss, s.peer.mss, path_mss_.value_or(0xffff)});
  }
  // Sets s.smss from the MSSs and the negotiated timestamps, and tells the
  // congestion control and the scoreboard.
  void update_smss(SendState& s) const;
  // RFC 1191: the path carries IPv4 datagrams of at most `mtu` bytes. False
  // if the MSS did not go down.
  bool on_path_mtu(SendState& s, uint32_t mtu, Instant now);
  // RFC 4821 §7.2: after a timeout (counted in
  // s.consecutive_retransmissions), every TcpConfig::black_hole_timeouts of
  // them with a segment above the next step lowers the MSS. False if it
  // did not.
  bool on_timeout(SendState& s, Instant now);
  // RFC 1191 §6.3: forgets the path's limit once TcpConfig::path_mtu_expiry
  // passed since it was last lowered. True if the SMSS went up.
  bool expire(SendState& s, Instant now);

 private:
  bool lower(SendState& s, uint32_t mss, Instant now);

  // The MSS the path allows (its MTU less 40), once something told us, and
  // when it was last lowered.
  std::optional<uint32_t> path_mss_;
  Instant lowered_at_;
};

}  // namespace tinytcp::tcp
