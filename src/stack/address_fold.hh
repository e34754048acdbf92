#pragma once

// AddressFold: 32 bits that stand for an address where the tcp/ layer's
// keyed functions (RFC 6528 ISNs, RFC 7323 timestamp offsets, SYN cookies)
// take an IPv4 address. An IPv4 address is itself; an IPv6 address is
// SipHash-2-4 of its 16 bytes under a key of this Host, truncated, so an
// attacker cannot pick an address of its own that folds onto a victim's and
// learn the victim's ISN or cookie from its own connection.

#include <cstdint>
#include <string>

#include "stack/ip_address.hh"
#include "util/sip_hash.hh"

namespace tinytcp::stack {

class AddressFold {
 public:
  // `secret`: at least 16 bytes; the key is derived from it.
  explicit AddressFold(const std::string& secret);

  uint32_t operator()(const IpAddress& a) const { return a.is_v4() ? a.v4().value : fold_v6(a); }

 private:
  uint32_t fold_v6(const IpAddress& a) const;

  SipHash hash_;
};

}  // namespace tinytcp::stack
