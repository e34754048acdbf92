#pragma once

// The Host's codec between IPv4 or IPv6 datagrams carrying TCP and the tcp/
// layer's abstract segments. Parsing drops and names what is wrong (one error per
// reason, counted by the Host); serializing writes IPv4 header, TCP header,
// options and payload into one caller buffer with both checksums correct.
// The family of a datagram written is the tuple's; over IPv6 the TCP
// checksum covers the RFC 8200 §8.1 pseudo-header.

#include <cstdint>
#include <string_view>

#include "stack/four_tuple.hh"
#include "tcp/tcp_segment.hh"
#include "util/buffer.hh"
#include "util/expected.hh"
#include "wire/ipv4.hh"
#include "wire/ipv6.hh"

namespace tinytcp::stack {

struct InboundSegment {
  FourTuple tuple;          // from our side: local = the datagram's destination
  tcp::TcpSegment segment;  // payload aliases the datagram
};

enum class InboundError {
  BadIpv4,     // parse_ipv4 (or parse_ipv6) failed
  NotTcp,      // another protocol: not for this codec
  Fragment,    // fragments are reassembled before the codec sees them
  BadTcp,      // parse_tcp failed (truncated, checksum, options, ...)
  BadAddress,  // broadcast, multicast or zero source/destination (RFC 9293 §3.10.7.2)
  kCount,
};
const char* to_string(InboundError e);

// An IPv4 datagram, or an IPv6 one whose TCP header follows the fixed header
// (what we send; IPv6 with extension headers goes through the Host).
Expected<InboundSegment, InboundError> parse_datagram(std::string_view datagram);
// The same for a datagram whose IPv4 header is already parsed and verified.
Expected<InboundSegment, InboundError> parse_segment(const wire::Ipv4View& ip);
// The TCP segment `tcp` (the upper-layer bytes, past any extension headers)
// of an IPv6 datagram with header `ip`.
Expected<InboundSegment, InboundError> parse_segment(const wire::Ipv6Header& ip,
                                                     std::string_view tcp);

// Writes the IPv4 or IPv6 datagram of `segment` on `tuple` (local is the
// source; `ttl` is the hop limit over IPv6); false if it does not fit `out`.
bool serialize_datagram(const tcp::TcpSegment& segment, const FourTuple& tuple, uint8_t ttl,
                        BufferWriter& out);

// RFC 9293 §3.10.7.1: the reset that answers `incoming` when no connection
// exists. Nothing (nullopt) if `incoming` is itself a RST.
std::optional<tcp::TcpSegment> reset_for(const tcp::TcpSegment& incoming);

}  // namespace tinytcp::stack
