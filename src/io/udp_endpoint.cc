#include "io/udp_endpoint.hh"

#include <arpa/inet.h>

#include <charconv>
#include <cstring>

#include <fmt/format.h>

namespace tinytcp::io {
namespace {

std::optional<uint16_t> parse_port(std::string_view text) {
  unsigned port = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), port);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || port > 65535) {
    return std::nullopt;
  }
  return static_cast<uint16_t>(port);
}

}  // namespace

std::optional<UdpEndpoint> UdpEndpoint::parse_address(std::string_view text, uint16_t port) {
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') {
    text = text.substr(1, text.size() - 2);
    if (text.find(':') == std::string_view::npos) {
      return std::nullopt;  // brackets are for IPv6 only
    }
  }
  const std::string host(text);
  if (host.find(':') != std::string::npos) {
    std::array<uint8_t, 16> bytes{};
    if (::inet_pton(AF_INET6, host.c_str(), bytes.data()) != 1) {
      return std::nullopt;
    }
    return v6(bytes, port);
  }
  in_addr addr{};
  if (::inet_pton(AF_INET, host.c_str(), &addr) != 1) {
    return std::nullopt;
  }
  return UdpEndpoint{ntohl(addr.s_addr), port};
}

std::optional<UdpEndpoint> UdpEndpoint::parse(std::string_view text) {
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) {
    return std::nullopt;
  }
  const std::string_view host = text.substr(0, colon);
  const bool bracketed = !host.empty() && host.front() == '[';
  if (bracketed != (!host.empty() && host.back() == ']')) {
    return std::nullopt;
  }
  // An IPv6 address must be bracketed ("::1:80" is ambiguous).
  if (!bracketed && host.find(':') != std::string_view::npos) {
    return std::nullopt;
  }
  const auto port = parse_port(text.substr(colon + 1));
  if (!port) {
    return std::nullopt;
  }
  return parse_address(host, *port);
}

std::string UdpEndpoint::address_text() const {
  if (!ipv6) {
    return fmt::format("{}.{}.{}.{}", address >> 24, (address >> 16) & 0xff, (address >> 8) & 0xff,
                       address & 0xff);
  }
  char text[INET6_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET6, address6.data(), text, sizeof text);
  return text;
}

std::string UdpEndpoint::to_string() const {
  return ipv6 ? fmt::format("[{}]:{}", address_text(), port)
              : fmt::format("{}:{}", address_text(), port);
}

bool UdpEndpoint::is_unspecified() const {
  return ipv6 ? address6 == std::array<uint8_t, 16>{} : address == 0;
}

socklen_t UdpEndpoint::to_sockaddr(int family, sockaddr_storage& out) const {
  out = sockaddr_storage{};
  if (family == AF_INET) {
    if (ipv6) {
      return 0;
    }
    auto& sa = reinterpret_cast<sockaddr_in&>(out);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(address);
    sa.sin_port = htons(port);
    return sizeof(sockaddr_in);
  }
  auto& sa = reinterpret_cast<sockaddr_in6&>(out);
  sa.sin6_family = AF_INET6;
  sa.sin6_port = htons(port);
  if (ipv6) {
    std::memcpy(&sa.sin6_addr, address6.data(), 16);
  } else if (address != 0) {
    // IPv4-mapped (RFC 4291 §2.5.5.2); 0.0.0.0 stays :: (any address).
    uint8_t* b = sa.sin6_addr.s6_addr;
    b[10] = 0xff;
    b[11] = 0xff;
    b[12] = static_cast<uint8_t>(address >> 24);
    b[13] = static_cast<uint8_t>(address >> 16);
    b[14] = static_cast<uint8_t>(address >> 8);
    b[15] = static_cast<uint8_t>(address);
  }
  return sizeof(sockaddr_in6);
}

std::optional<UdpEndpoint> UdpEndpoint::from_sockaddr(const sockaddr_storage& storage) {
  if (storage.ss_family == AF_INET) {
    const auto& sa = reinterpret_cast<const sockaddr_in&>(storage);
    return UdpEndpoint{ntohl(sa.sin_addr.s_addr), ntohs(sa.sin_port)};
  }
  if (storage.ss_family != AF_INET6) {
    return std::nullopt;
  }
  const auto& sa = reinterpret_cast<const sockaddr_in6&>(storage);
  const uint8_t* b = sa.sin6_addr.s6_addr;
  if (IN6_IS_ADDR_V4MAPPED(&sa.sin6_addr)) {
    return UdpEndpoint{static_cast<uint32_t>(b[12]) << 24 | static_cast<uint32_t>(b[13]) << 16 |
                           static_cast<uint32_t>(b[14]) << 8 | b[15],
                       ntohs(sa.sin6_port)};
  }
  std::array<uint8_t, 16> bytes{};
  std::memcpy(bytes.data(), b, 16);
  return v6(bytes, ntohs(sa.sin6_port));
}

}  // namespace tinytcp::io
