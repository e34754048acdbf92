#pragma once

// IcmpResponder: builds the ICMP datagrams a node sends (RFC 792, RFC 1122
// §3.2.2, RFC 1812 §4.3): echo replies, and errors about a datagram we could
// not deliver or forward. It writes whole IPv4 datagrams into its own buffer
// and leaves routing them to its owner (Router, or the Host in stack/).
//
// Errors obey RFC 1812 §4.3.2.7 (never about an ICMP error, a non-first
// fragment, or a datagram sent to or from a broadcast or multicast address)
// and are rate limited by a token bucket refilled from `now` (RFC 1812
// §4.3.2.8); each suppression is counted. An error quotes as much of the
// original datagram as fits in 576 bytes (RFC 1812 §4.3.2.3).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "util/counters.hh"
#include "util/time.hh"
#include "util/token_bucket.hh"
#include "wire/icmp.hh"
#include "wire/ipv4.hh"

namespace tinytcp::net {

enum class IcmpSuppressed {
  RateLimited,
  AboutIcmpError,   // the original is itself an ICMP error (or unparsable ICMP)
  AboutFragment,    // the original is a non-first fragment
  AboutNonUnicast,  // the original went to or came from a non-unicast address
  kCount
};
const char* to_string(IcmpSuppressed s);

struct IcmpResponderStats {
  EnumCounters<IcmpSuppressed> suppressed;
  uint64_t echo_replies = 0;
  uint64_t errors = 0;
};

class IcmpResponder {
 public:
  struct Config {
    double errors_per_second = 1000;
    double burst = 100;  // bucket size, in errors
    uint8_t ttl = 64;
  };
  static constexpr size_t kMaxErrorDatagram = 576;

  explicit IcmpResponder(const Config& config);

  // The echo reply to `request` (an echo request `echo` inside it), sent from
  // `src`. The result aliases an internal buffer until the next call.
  std::string_view echo_reply(const wire::Ipv4View& request, const wire::IcmpMessage& echo,
                              wire::Ipv4Address src);

  // An error of `type`/`code` (and second word `rest`, e.g. the next-hop MTU)
  // about `original` (parsed, and its bytes), sent from `src`; empty if it
  // must not or may not be sent now. The result aliases an internal buffer.
  // `link_multicast`: the original came in a link-layer broadcast or
  // multicast frame (RFC 1122 §3.2.2: never answered with an error).
  std::string_view error(uint8_t type, uint8_t code, uint32_t rest, const wire::Ipv4View& original,
                         std::string_view original_bytes, wire::Ipv4Address src, Instant now,
                         bool link_multicast = false);

  const IcmpResponderStats& stats() const { return stats_; }

 private:
  bool may_send_error(const wire::Ipv4View& original, bool link_multicast, Instant now);
  std::string_view build(wire::Ipv4Address src, wire::Ipv4Address dst,
                         const wire::IcmpMessage& message);

  Config config_;
  TokenBucket errors_;
  uint16_t next_id_ = 1;
  // Room for the largest datagram, allocated with the first message (most
  // hosts never send one) and not zeroed.
  std::unique_ptr<char[]> buffer_;
  IcmpResponderStats stats_;
};

}  // namespace tinytcp::net
