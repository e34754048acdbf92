#pragma once

// UdpEndpoint: where a UDP datagram of the tunnel comes from or goes to, an
// IPv4 or an IPv6 address and a port (the outer header; the datagrams inside
// stay what they are). Text forms: "a.b.c.d:PORT" and "[IPv6]:PORT".
//
// A socket of either family reads and writes it (to_sockaddr/from_sockaddr):
// on an IPv6 socket an IPv4 endpoint travels as its IPv4-mapped address
// (::ffff:a.b.c.d), and a mapped address read back is the IPv4 endpoint
// again, so a dual-stack socket's IPv4 peers look the same as on an IPv4
// socket.

#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tinytcp::io {

struct UdpEndpoint {
  uint32_t address = 0;  // IPv4, host order (when !ipv6)
  uint16_t port = 0;
  bool ipv6 = false;
  std::array<uint8_t, 16> address6{};  // IPv6, network order (when ipv6)

  static UdpEndpoint v6(const std::array<uint8_t, 16>& address, uint16_t port) {
    UdpEndpoint e;
    e.port = port;
    e.ipv6 = true;
    e.address6 = address;
    return e;
  }
  // "a.b.c.d:PORT" or "[IPv6]:PORT" (no zone); std::nullopt when malformed.
  static std::optional<UdpEndpoint> parse(std::string_view text);
  // An address alone, "a.b.c.d" or IPv6 with or without brackets.
  static std::optional<UdpEndpoint> parse_address(std::string_view text, uint16_t port);
  std::string to_string() const;     // the text form parse() reads
  std::string address_text() const;  // without port or brackets
  // 0.0.0.0 or ::
  bool is_unspecified() const;

  // The socket address on a socket of `family` (AF_INET or AF_INET6); its
  // length. An IPv6 endpoint on an AF_INET socket has no form: length 0.
  socklen_t to_sockaddr(int family, sockaddr_storage& out) const;
  // nullopt for a family other than AF_INET/AF_INET6.
  static std::optional<UdpEndpoint> from_sockaddr(const sockaddr_storage& sa);

  friend bool operator==(const UdpEndpoint& a, const UdpEndpoint& b) {
    return a.ipv6 == b.ipv6 && a.port == b.port &&
           (a.ipv6 ? a.address6 == b.address6 : a.address == b.address);
  }
  friend bool operator!=(const UdpEndpoint& a, const UdpEndpoint& b) { return !(a == b); }
};

}  // namespace tinytcp::io
