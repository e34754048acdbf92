#pragma once

// UDP (RFC 768) with the IPv4 pseudo-header checksum. Parsing needs the
// addresses of the enclosing datagram. A zero checksum means "not computed"
// and is accepted (RFC 768); a computed checksum of zero is sent as 0xffff.
// The length field must fit the payload; bytes past it are ignored.
//
//    0      7 8     15 16    23 24    31
//   +--------+--------+--------+--------+
//   |     Source      |   Destination   |
//   |      Port       |      Port       |
//   +--------+--------+--------+--------+
//   |     Length      |    Checksum     |
//   +--------+--------+--------+--------+
//   |          data octets ...
//   +---------------- ...
//
// Pseudo-header: source address, destination address, zero, protocol (17),
// UDP length.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "util/buffer.hh"
#include "util/expected.hh"
#include "wire/ipv4.hh"

namespace tinytcp::wire {

struct UdpHeader {
  static constexpr size_t kSize = 8;

  uint16_t src_port = 0;
  uint16_t dst_port = 0;
  uint16_t length = 0;    // header + data (parse only; serialize computes it)
  uint16_t checksum = 0;  // as on the wire (parse only; serialize computes it)
};

struct UdpView {
  UdpHeader header;
  std::string_view payload;  // aliases the caller's buffer
};

enum class UdpError {
  Truncated,  // shorter than 8 bytes
  BadLength,  // length < 8 or larger than the IP payload
  BadChecksum,
  kCount
};
const char* to_string(UdpError e);

Expected<UdpView, UdpError> parse_udp(std::string_view payload, Ipv4Address src, Ipv4Address dst);

// Writes the header and `data` with length and checksum computed. Fails (the
// writer's sticky error) when the datagram would exceed 65535 bytes.
void serialize(const UdpHeader& header, std::string_view data, Ipv4Address src, Ipv4Address dst,
               BufferWriter& out);

}  // namespace tinytcp::wire
