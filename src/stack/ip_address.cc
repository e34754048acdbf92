#include "stack/ip_address.hh"

namespace tinytcp::stack {

IpAddress::IpAddress(const wire::Ipv6Address& a) : family_(IpFamily::V6) {
  for (size_t i = 0; i < 4; ++i) {
    words_[i] = (uint32_t{a.bytes[4 * i]} << 24) | (uint32_t{a.bytes[4 * i + 1]} << 16) |
                (uint32_t{a.bytes[4 * i + 2]} << 8) | a.bytes[4 * i + 3];
  }
}

wire::Ipv6Address IpAddress::v6() const {
  wire::Ipv6Address a;
  if (!is_v6()) {
    return a;
  }
  for (size_t i = 0; i < 4; ++i) {
    a.bytes[4 * i] = static_cast<uint8_t>(words_[i] >> 24);
    a.bytes[4 * i + 1] = static_cast<uint8_t>(words_[i] >> 16);
    a.bytes[4 * i + 2] = static_cast<uint8_t>(words_[i] >> 8);
    a.bytes[4 * i + 3] = static_cast<uint8_t>(words_[i]);
  }
  return a;
}

std::optional<IpAddress> IpAddress::parse(std::string_view text) {
  if (const auto v4 = wire::Ipv4Address::parse(text)) {
    return IpAddress(*v4);
  }
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') {
    text = text.substr(1, text.size() - 2);
  }
  if (const auto v6 = wire::Ipv6Address::parse(text)) {
    return IpAddress(*v6);
  }
  return std::nullopt;
}

bool IpAddress::is_unicast() const {
  if (is_v4()) {
    const wire::Ipv4Address a = v4();
    return !a.is_zero() && !a.is_limited_broadcast() && !a.is_multicast();
  }
  const wire::Ipv6Address a = v6();
  return !a.is_unspecified() && !a.is_multicast();
}

std::string IpAddress::to_string() const {
  return fmt::format("{}", *this);
}

}  // namespace tinytcp::stack
