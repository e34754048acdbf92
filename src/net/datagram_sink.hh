#pragma once

// Where a NetworkInterface delivers the IP datagrams it receives (a Router,
// or the Host in stack/). `datagram` is the Ethernet payload, unparsed and
// possibly followed by link padding, valid only for the duration of the call.
// `link_multicast`: the frame went to a link-layer broadcast or multicast
// address, not to our MAC (no ICMP error may answer it: RFC 1122 §3.2.2,
// RFC 4443 §2.4(e.3)).

#include <cstddef>
#include <string_view>

#include "util/time.hh"

namespace tinytcp::net {

class DatagramSink {
 public:
  virtual ~DatagramSink() = default;
  virtual void on_datagram(std::string_view datagram, size_t interface_index, Instant now,
                           bool link_multicast) = 0;
};

}  // namespace tinytcp::net
