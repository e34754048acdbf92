#pragma once

// IcmpHandler: the ICMP side of a Host. It answers echo requests, builds the
// ICMP errors the Host sends (port and protocol unreachable, through the
// rate-limited net::IcmpResponder), and reads a fragmentation-needed error:
// its quote must be a TCP segment we sent (RFC 5927 §4.1 checks the rest),
// and then it names the connection, the quoted sequence number and the
// next-hop MTU (RFC 1191). Everything else is dropped with its reason.
//
// It knows no connections: the Host looks the 4-tuple up and asks the
// connection whether the quoted sequence number is in flight.

#include <cstdint>
#include <optional>
#include <string_view>

#include "net/icmp_responder.hh"
#include "stack/four_tuple.hh"
#include "stack/host_types.hh"
#include "tcp/wrap32.hh"
#include "util/time.hh"
#include "wire/ipv4.hh"

namespace tinytcp::stack {

// A fragmentation-needed error whose quote is one of our TCP segments.
struct FragmentationNeeded {
  FourTuple tuple;    // the connection the quoted segment belongs to (ours first)
  tcp::Wrap32 seqno;  // the quoted segment's sequence number
  uint32_t mtu = 0;   // the next-hop MTU (0 from routers older than RFC 1191)

  // From the first 8 bytes of a quoted TCP header that we sent from `ours`
  // to `theirs` (ports and sequence number): both families' ICMP errors
  // quote them. nullopt when fewer than 8 bytes were quoted.
  static std::optional<FragmentationNeeded> from_quote(const IpAddress& ours,
                                                       const IpAddress& theirs,
                                                       std::string_view tcp_header, uint32_t mtu);
};

class IcmpHandler {
 public:
  // What an incoming ICMP message asks of the Host: at most one of these.
  struct Outcome {
    std::string_view reply;  // an echo reply to send (aliases an internal buffer)
    std::optional<FragmentationNeeded> fragmentation_needed;
    std::optional<HostDrop> drop;
  };

  IcmpHandler(const net::IcmpResponder::Config& config, wire::Ipv4Address address);

  // An ICMP datagram addressed to us.
  Outcome receive(const wire::Ipv4View& ip);
  // An error of `type`/`code` about `ip` (whose bytes are `bytes`); empty if
  // it must not or may not be sent now (`link_multicast`: `ip` came in a
  // link-layer broadcast or multicast frame). Aliases an internal buffer.
  std::string_view error(uint8_t type, uint8_t code, const wire::Ipv4View& ip,
                         std::string_view bytes, Instant now, bool link_multicast);

  const net::IcmpResponderStats& stats() const { return responder_.stats(); }

 private:
  Outcome on_fragmentation_needed(const wire::IcmpMessage& msg) const;

  net::IcmpResponder responder_;
  wire::Ipv4Address address_;
};

}  // namespace tinytcp::stack
