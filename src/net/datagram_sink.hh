#pragma once

// Where a NetworkInterface delivers the IPv4 datagrams it receives (a Router,
// or the Host in stack/). `datagram` is the Ethernet payload, unparsed and
// possibly followed by link padding, valid only for the duration of the call.

#include <cstddef>
#include <string_view>

#include "util/time.hh"

namespace tinytcp::net {

class DatagramSink {
 public:
  virtual ~DatagramSink() = default;
  virtual void on_datagram(std::string_view datagram, size_t interface_index, Instant now) = 0;
};

}  // namespace tinytcp::net
