#pragma once

// Initial sequence numbers per RFC 6528 §3:
//   ISN = M + F(localip, localport, remoteip, remoteport, secretkey)
// M is a timer that ticks every 4 microseconds, derived from the `now` the
// caller passes (no clock is read here); F is SipHash-2-4 of the 4-tuple under
// a key derived from the secret (the first 16 bytes of its SHA-256), truncated
// to 32 bits, as Linux's secure_tcp_seq: a PRF, as RFC 6528 asks, at about
// 150 instructions where HMAC-SHA-256 through OpenSSL took 5,800 (a SYN
// flood pays it per SYN-ACK). The secret is made once per stack (e.g.
// from secure_random_bytes) and never leaves it, so an off-path attacker
// cannot predict the ISN of a connection, while successive incarnations of
// one 4-tuple still get increasing ISNs (RFC 9293 §3.4.1).

#include <cstdint>
#include <string>

#include "tcp/wrap32.hh"
#include "util/sip_hash.hh"
#include "util/time.hh"

namespace tinytcp::tcp {

class IsnGenerator {
 public:
  explicit IsnGenerator(const std::string& secret_key);

  Wrap32 generate(uint32_t local_ip, uint16_t local_port, uint32_t remote_ip, uint16_t remote_port,
                  Instant now) const;
  // The offset of our TSval clock for connections between two addresses
  // (RFC 7323 §7.1): keyed, so TSval tells a peer neither our uptime nor the
  // ISN's hash; per address pair, as Linux's tsoffset, so the TSvals a peer
  // sees from us only grow from one connection to the next (what RFC 6191
  // TIME-WAIT reuse relies on). SipHash under the same key as the ISN, of an
  // input of another length.
  uint32_t timestamp_offset(uint32_t local_ip, uint32_t remote_ip) const;

  // The two terms, for tests.
  static uint32_t timer(Instant now);
  uint32_t hash(uint32_t local_ip, uint16_t local_port, uint32_t remote_ip,
                uint16_t remote_port) const;

 private:
  SipHash hash_;
};

}  // namespace tinytcp::tcp
