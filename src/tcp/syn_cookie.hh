#pragma once

// SynCookies: stateless answers to SYNs when a listener's SYN queue is full
// (RFC 4987 §3.6). The ISN of our SYN-ACK is the cookie; the ACK that
// completes the handshake returns it (SEG.ACK - 1), and the connection is
// rebuilt from it and from the ACK itself, so a flood of spoofed SYNs costs
// the listener no memory at all.
//
// Cookie, 32 bits:
//   bits 31-27  a counter of 64-second periods (mod 32): cookies older than
//               two periods (64-128 s) are refused;
//   bits 26-24  index of the MSS in kMssTable (the largest entry not above
//               the peer's MSS);
//   bits 23-0   a keyed hash (SipHash-2-4, as Linux's cookies) of the
//               4-tuple, the peer's ISN, the counter and the MSS index.
// SipHash, not the HMAC-SHA-256 of our ISNs: a flood asks for one cookie per
// spoofed SYN, and through OpenSSL an HMAC costs about 1.5 us, most of a
// SYN's budget (docs/benchmarks.md, SYN flood); SipHash takes ~50 ns and is
// as unforgeable without the key.
// Like Linux, the options a cookie cannot hold travel in the low 6 bits of
// our TSval, which the peer echoes in TSecr: the window shift it offered
// (15: none) and whether it offered SACK. Without timestamps a cookie
// connection has neither window scaling nor SACK.
//
// Knows nothing of hosts and sockets: stack/ decides when to use cookies and
// builds the connection from `rebuild_syn()`.

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "tcp/tcp_config.hh"
#include "tcp/tcp_segment.hh"
#include "tcp/wrap32.hh"
#include "util/expected.hh"
#include "util/sip_hash.hh"
#include "util/time.hh"

namespace tinytcp::tcp {

// The connection a cookie is for, from our side.
struct CookieTuple {
  uint32_t local_ip = 0;
  uint16_t local_port = 0;
  uint32_t remote_ip = 0;
  uint16_t remote_port = 0;
};

enum class CookieError {
  Expired,  // counter older than two periods (or from the future)
  BadHash,  // not a cookie of ours for this tuple and peer ISN
  kCount,
};
const char* to_string(CookieError e);

class SynCookies {
 public:
  static constexpr std::array<uint16_t, 8> kMssTable{216, 536, 1024, 1200, 1300, 1400, 1440, 1460};
  static constexpr Duration kPeriod = std::chrono::seconds(64);

  // The SipHash key is derived from `key` (any length, secret).
  explicit SynCookies(const std::string& key);

  // Our SYN-ACK to `syn`, with the cookie as ISN and, when the SYN offered
  // timestamps, the options encoded in a TSval just below `tsval_now`
  // (the connection's TSval clock at `now`). The payload of the SYN, if
  // any, is not acknowledged (it cannot be kept).
  TcpSegment syn_ack(const TcpConfig& config, const CookieTuple& tuple, const TcpSegment& syn,
                     uint32_t tsval_now, Instant now) const;

  // For an ACK (no SYN, RST or FIN needed) that may complete a cookie
  // handshake: the SYN it answers, rebuilt with the options the cookie and
  // TSecr carry (MSS, window shift, SACK-permitted, the ACK's TSval as the
  // SYN's), or why not.
  Expected<TcpSegment, CookieError> rebuild_syn(const CookieTuple& tuple, const TcpSegment& ack,
                                                Instant now) const;

  // The parts, for tests.
  Wrap32 cookie(const CookieTuple& tuple, Wrap32 peer_isn, uint8_t mss_index,
                uint32_t period) const;
  static uint8_t mss_index(uint16_t peer_mss);
  static uint32_t period(Instant now);
  static uint32_t encode_timestamp(uint32_t tsval_now, std::optional<uint8_t> window_shift,
                                   bool sack);

 private:
  uint32_t hash(const CookieTuple& tuple, Wrap32 peer_isn, uint8_t mss_index,
                uint32_t period) const;

  SipHash hash_;
};

}  // namespace tinytcp::tcp
