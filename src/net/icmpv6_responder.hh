#pragma once

// Icmpv6Responder: builds the ICMPv6 datagrams a node sends (RFC 4443): echo
// replies, and errors (destination unreachable, packet too big, time exceeded,
// parameter problem) about a packet we could not deliver or forward. It writes
// whole IPv6 datagrams into its own buffer and leaves routing them, and
// choosing our source address, to its owner (the Host in stack/, a router).
//
// RFC 4443 §2.4(e) decides when an error must not be sent: never about an
// ICMPv6 error or a redirect, nor about a packet whose source does not name
// one node (unspecified, multicast; loopback never comes from a link), nor
// about a packet sent to an IPv6 or link-layer multicast address, except
// Packet Too Big and Parameter Problem code 2 (an unrecognized option asking
// for a report). Errors that may go are rate limited by a token bucket
// refilled from `now` (§2.4(f)). Each refusal bumps one counter. An error
// quotes as much of the invoking packet as fits the minimum MTU (§2.4(c),
// icmpv6::kMaxQuote).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "util/counters.hh"
#include "util/time.hh"
#include "util/token_bucket.hh"
#include "wire/icmpv6.hh"
#include "wire/ipv6.hh"

namespace tinytcp::net {

enum class Icmpv6Suppressed {
  RateLimited,
  AboutIcmpv6Error,    // §2.4(e.1): the invoking packet is an ICMPv6 error (or unreadable ICMPv6)
  AboutRedirect,       // §2.4(e.2)
  AboutMulticast,      // §2.4(e.3): sent to an IPv6 multicast address
  AboutLinkMulticast,  // §2.4(e.4, e.5): sent as a link-layer multicast or broadcast
  AboutNonUnicastSource,  // §2.4(e.6): from ::, a multicast or the loopback address
  EchoFromNonUnicast,     // an echo request from such a source gets no reply
  kCount
};
const char* to_string(Icmpv6Suppressed s);

struct Icmpv6ResponderStats {
  EnumCounters<Icmpv6Suppressed> suppressed;
  uint64_t echo_replies = 0;
  uint64_t errors = 0;
};

class Icmpv6Responder {
 public:
  struct Config {
    double errors_per_second = 1000;
    double burst = 100;  // bucket size, in errors
    uint8_t hop_limit = 64;
  };
  // §2.4(c): the whole error fits the minimum IPv6 MTU.
  static constexpr size_t kMaxErrorDatagram = wire::ipv6::kMinimumMtu;

  explicit Icmpv6Responder(const Config& config);

  // The echo reply to `request` (an echo request `echo` inside it), sent from
  // `src` (§4.2: to a request sent to multicast, the owner picks a unicast
  // address of ours); empty if the request's source is not unicast. The
  // result aliases an internal buffer until the next call.
  std::string_view echo_reply(const wire::Ipv6View& request, const wire::Icmpv6Message& echo,
                              const wire::Ipv6Address& src);

  // An error of `type`/`code` (and second word `rest`: the MTU of Packet Too
  // Big, the pointer of Parameter Problem) about `original` (parsed, and its
  // bytes), sent from `src`; `link_multicast` when the invoking packet came in
  // a link-layer multicast or broadcast frame. Empty if it must not or may
  // not be sent now. The result aliases an internal buffer.
  std::string_view error(uint8_t type, uint8_t code, uint32_t rest, const wire::Ipv6View& original,
                         std::string_view original_bytes, const wire::Ipv6Address& src, Instant now,
                         bool link_multicast = false);

  const Icmpv6ResponderStats& stats() const { return stats_; }

 private:
  bool may_send_error(uint8_t type, uint8_t code, const wire::Ipv6View& original,
                      bool link_multicast, Instant now);
  std::string_view build(const wire::Ipv6Address& src, const wire::Ipv6Address& dst,
                         const wire::Icmpv6Message& message);

  Config config_;
  TokenBucket errors_;
  // Room for the largest packet, allocated with the first message (most
  // hosts never send one) and not zeroed.
  std::unique_ptr<char[]> buffer_;
  Icmpv6ResponderStats stats_;
};

}  // namespace tinytcp::net
