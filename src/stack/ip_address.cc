#include "stack/ip_address.hh"

#include <cstring>

namespace tinytcp::stack {

namespace {

// One 32-bit word of network-order bytes, as a value; and back. (memcpy and
// a byte swap: the per-segment path converts two addresses each way.)
uint32_t load_be32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  v = __builtin_bswap32(v);
#endif
  return v;
}

void store_be32(uint8_t* p, uint32_t v) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  v = __builtin_bswap32(v);
#endif
  std::memcpy(p, &v, sizeof v);
}

}  // namespace

IpAddress::IpAddress(const wire::Ipv6Address& a) : family_(IpFamily::V6) {
  for (size_t i = 0; i < 4; ++i) {
    words_[i] = load_be32(&a.bytes[4 * i]);
  }
}

wire::Ipv6Address IpAddress::v6() const {
  wire::Ipv6Address a;
  if (!is_v6()) {
    return a;
  }
  for (size_t i = 0; i < 4; ++i) {
    store_be32(&a.bytes[4 * i], words_[i]);
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
  // Not :: and not ff00::/8 (read from the words: no conversion).
  const bool unspecified = (words_[0] | words_[1] | words_[2] | words_[3]) == 0;
  return !unspecified && (words_[0] >> 24) != 0xff;
}

std::string IpAddress::to_string() const {
  return fmt::format("{}", *this);
}

}  // namespace tinytcp::stack
