#pragma once

// IpAddress: an IPv4 or an IPv6 address, tagged with its family, as the
// Host's 4-tuples, sockets and API carry them. Built implicitly from either
// wire address, so IPv4 code reads as before; compares, orders, hashes and
// formats (dotted quad, or RFC 5952 text) like the wire types. An IPv4
// address never equals an IPv6 one, not even its IPv4-mapped form: the two
// families are two stacks (RFC 4038 §4.2 leaves mapping to the API).

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "wire/ipv4.hh"
#include "wire/ipv6.hh"

namespace tinytcp::stack {

enum class IpFamily : uint8_t { V4 = 4, V6 = 6 };

class IpAddress {
 public:
  constexpr IpAddress() = default;  // 0.0.0.0
  // NOLINTNEXTLINE(google-explicit-constructor): IPv4 code passes wire addresses as before
  constexpr IpAddress(wire::Ipv4Address a) : words_{a.value, 0, 0, 0} {}
  // NOLINTNEXTLINE(google-explicit-constructor)
  IpAddress(const wire::Ipv6Address& a);

  // A dotted quad, or IPv6 text (wire::Ipv6Address::parse), with or without
  // brackets; nullopt for anything else.
  static std::optional<IpAddress> parse(std::string_view text);

  IpFamily family() const { return family_; }
  bool is_v4() const { return family_ == IpFamily::V4; }
  bool is_v6() const { return family_ == IpFamily::V6; }
  // The address as its family's wire type (v4() of an IPv6 address: 0.0.0.0).
  wire::Ipv4Address v4() const {
    return is_v4() ? wire::Ipv4Address{words_[0]} : wire::Ipv4Address{};
  }
  wire::Ipv6Address v6() const;
  // One node's address: not zero/unspecified, broadcast or multicast.
  bool is_unicast() const;
  // 32 bits that stand for the address: an IPv4 address's value, the four
  // words of an IPv6 one mixed (unkeyed: for hash tables, not secrets).
  uint32_t mix() const {
    if (is_v4()) {
      return words_[0];
    }
    return words_[0] ^ (words_[1] * 0x9e3779b1u) ^ (words_[2] * 0x85ebca6bu) ^
           (words_[3] * 0xc2b2ae35u) ^ 0x6u;
  }
  const std::array<uint32_t, 4>& words() const { return words_; }  // network order, v4 in [0]

  std::string to_string() const;

  friend bool operator==(const IpAddress& a, const IpAddress& b) {
    return a.words_[0] == b.words_[0] && a.family_ == b.family_ && a.words_[1] == b.words_[1] &&
           a.words_[2] == b.words_[2] && a.words_[3] == b.words_[3];
  }
  friend bool operator!=(const IpAddress& a, const IpAddress& b) { return !(a == b); }
  // IPv4 before IPv6, then by value.
  friend bool operator<(const IpAddress& a, const IpAddress& b) {
    if (a.family_ != b.family_) {
      return a.family_ < b.family_;
    }
    return a.words_ < b.words_;
  }

 private:
  std::array<uint32_t, 4> words_{};
  IpFamily family_ = IpFamily::V4;
};

}  // namespace tinytcp::stack

template <>
struct fmt::formatter<tinytcp::stack::IpAddress> : fmt::formatter<std::string_view> {
  template <typename FormatContext>
  auto format(const tinytcp::stack::IpAddress& a, FormatContext& ctx) const -> decltype(ctx.out()) {
    if (a.is_v4()) {
      return fmt::format_to(ctx.out(), "{}", a.v4());
    }
    return fmt::format_to(ctx.out(), "{}", a.v6());
  }
};
