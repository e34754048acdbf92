#pragma once

// Ipv4Input: the IPv4 side of a Host's receive path, beside Ipv6Input. It
// takes a whole IPv4 datagram and says what it asks of the Host
// (IpInputOutcome).
//
// The path: parse_ipv4 (header checksum, lengths); our address as
// destination; fragments into the Ipv4Reassembler (RFC 791, bounded); then
// TCP (datagram_codec's parse_segment), ICMP (IcmpHandler: echo, and
// fragmentation needed about our segments, RFC 1191 / RFC 5927), or an ICMP
// error: port unreachable for UDP (RFC 1122 §4.1.3.1, no UDP sockets) and
// protocol unreachable for the rest, through the rate-limited responder.
//
// It knows no connections, as Ipv6Input does not.

#include <optional>
#include <string_view>

#include "net/ipv4_reassembler.hh"
#include "stack/icmp_handler.hh"
#include "stack/ip_input_outcome.hh"
#include "util/time.hh"
#include "wire/ipv4.hh"

namespace tinytcp::stack {

class Ipv4Input {
 public:
  explicit Ipv4Input(const HostConfig& config);

  // An IPv4 datagram, `link_multicast` when it came in a link-layer
  // broadcast or multicast frame (never answered with an ICMP error).
  IpInputOutcome receive(std::string_view datagram, Instant now, bool link_multicast = false);
  // Expires fragments (RFC 791's reassembly timeout).
  void tick(Instant now) { reassembler_.tick(now); }
  std::optional<Instant> next_deadline() const { return reassembler_.next_deadline(); }

  const net::IcmpResponderStats& icmp_stats() const { return icmp_.stats(); }

 private:
  IpInputOutcome on_datagram(const wire::Ipv4View& ip, std::string_view bytes, Instant now,
                             bool link_multicast);
  IpInputOutcome on_icmp(const wire::Ipv4View& ip);
  IpInputOutcome error(uint8_t type, uint8_t code, const wire::Ipv4View& ip, std::string_view bytes,
                       Instant now, bool link_multicast);

  wire::Ipv4Address address_;
  IcmpHandler icmp_;
  net::Ipv4Reassembler reassembler_;
};

}  // namespace tinytcp::stack
