#pragma once

// IpInputOutcome: what one incoming datagram asks of the Host, as either
// family's input path (Ipv4Input, Ipv6Input) reads it: a TCP segment to
// demultiplex, a datagram to send back (an echo reply or an ICMP error), a
// path-MTU report about one of our connections, or a drop with its reason.

#include <optional>
#include <string_view>

#include "stack/datagram_codec.hh"
#include "stack/host_types.hh"
#include "stack/icmp_handler.hh"
#include "util/expected.hh"

namespace tinytcp::stack {

// At most one of `segment` and `path_mtu`; `reply` may come with a drop (an
// error answering a refused datagram).
struct IpInputOutcome {
  std::optional<InboundSegment> segment;        // TCP; its payload aliases the datagram
  std::optional<FragmentationNeeded> path_mtu;  // frag-needed / Packet Too Big, mtu as TCP takes it
  std::string_view reply;                       // aliases the input path's buffer
  bool reply_is_error = false;                  // an ICMP error, not an echo reply
  std::optional<HostDrop> drop;
};

// The outcome of a datagram carrying TCP, from datagram_codec's parse: the
// segment, or its drop (BadAddress, else BadTcp).
IpInputOutcome tcp_outcome(Expected<InboundSegment, InboundError> segment);

}  // namespace tinytcp::stack
