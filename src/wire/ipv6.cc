#include "wire/ipv6.hh"

#include <cstring>

namespace tinytcp::wire {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  if (c >= 'a' && c <= 'f') {
    return c - 'a' + 10;
  }
  if (c >= 'A' && c <= 'F') {
    return c - 'A' + 10;
  }
  return -1;
}

// Parses the colon-separated groups of one side of "::" into `groups`,
// appending; a dotted quad is allowed as the last group when `may_end_in_ipv4`.
// False on any malformed group.
bool parse_groups(std::string_view text, bool may_end_in_ipv4, std::array<uint16_t, 8>& groups,
                  size_t& count) {
  if (text.empty()) {
    return true;
  }
  size_t pos = 0;
  while (true) {
    const size_t colon = text.find(':', pos);
    const std::string_view token =
        text.substr(pos, colon == std::string_view::npos ? std::string_view::npos : colon - pos);
    const bool last = colon == std::string_view::npos;
    if (last && may_end_in_ipv4 && token.find('.') != std::string_view::npos) {
      const auto v4 = Ipv4Address::parse(token);
      if (!v4 || count + 2 > 8) {
        return false;
      }
      groups[count++] = static_cast<uint16_t>(v4->value >> 16);
      groups[count++] = static_cast<uint16_t>(v4->value);
      return true;
    }
    if (token.empty() || token.size() > 4 || count >= 8) {
      return false;
    }
    uint16_t g = 0;
    for (const char c : token) {
      const int v = hex_value(c);
      if (v < 0) {
        return false;
      }
      g = static_cast<uint16_t>((g << 4) | v);
    }
    groups[count++] = g;
    if (last) {
      return true;
    }
    pos = colon + 1;
  }
}

char* append_hex_group(char* out, uint16_t g) {
  static constexpr char kDigits[] = "0123456789abcdef";
  bool started = false;
  for (int shift = 12; shift >= 0; shift -= 4) {
    const unsigned nibble = (unsigned{g} >> shift) & 0xfu;
    if (nibble != 0 || started || shift == 0) {
      *out++ = kDigits[nibble];
      started = true;
    }
  }
  return out;
}

char* append_decimal(char* out, unsigned v) {
  if (v >= 100) {
    *out++ = static_cast<char>('0' + v / 100);
  }
  if (v >= 10) {
    *out++ = static_cast<char>('0' + (v / 10) % 10);
  }
  *out++ = static_cast<char>('0' + v % 10);
  return out;
}

}  // namespace

std::optional<Ipv6Address> Ipv6Address::parse(std::string_view text) {
  std::array<uint16_t, 8> head{};
  std::array<uint16_t, 8> tail{};
  size_t head_count = 0;
  size_t tail_count = 0;
  const size_t gap = text.find("::");
  if (gap == std::string_view::npos) {
    if (!parse_groups(text, true, head, head_count) || head_count != 8) {
      return std::nullopt;
    }
    return from_groups(head);
  }
  const std::string_view left = text.substr(0, gap);
  const std::string_view right = text.substr(gap + 2);
  // One "::" only; a side next to it may not start or end with another colon.
  if (right.find("::") != std::string_view::npos || (!left.empty() && left.back() == ':') ||
      (!right.empty() && right.front() == ':')) {
    return std::nullopt;
  }
  if (!parse_groups(left, false, head, head_count) ||
      !parse_groups(right, true, tail, tail_count) || head_count + tail_count > 7) {
    return std::nullopt;
  }
  std::array<uint16_t, 8> groups{};
  for (size_t i = 0; i < head_count; ++i) {
    groups[i] = head[i];
  }
  for (size_t i = 0; i < tail_count; ++i) {
    groups[8 - tail_count + i] = tail[i];
  }
  return from_groups(groups);
}

size_t Ipv6Address::format(char* out) const {
  char* const start = out;
  if (is_ipv4_mapped()) {
    const char prefix[] = "::ffff:";
    for (size_t i = 0; i + 1 < sizeof(prefix); ++i) {
      *out++ = prefix[i];
    }
    for (size_t i = 12; i < 16; ++i) {
      if (i > 12) {
        *out++ = '.';
      }
      out = append_decimal(out, bytes[i]);
    }
    return static_cast<size_t>(out - start);
  }
  // RFC 5952 §4.2.2-4.2.3: the longest run of at least two zero groups, the
  // first one on a tie, becomes "::".
  size_t best_start = 8;
  size_t best_length = 1;
  for (size_t i = 0; i < 8;) {
    if (group(i) != 0) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < 8 && group(j) == 0) {
      ++j;
    }
    if (j - i > best_length) {
      best_start = i;
      best_length = j - i;
    }
    i = j;
  }
  for (size_t i = 0; i < 8;) {
    if (i == best_start) {
      *out++ = ':';
      *out++ = ':';
      i += best_length;
      continue;
    }
    if (i > 0 && i != best_start + best_length) {
      *out++ = ':';
    }
    out = append_hex_group(out, group(i));
    ++i;
  }
  return static_cast<size_t>(out - start);
}

std::string Ipv6Address::to_string() const {
  std::array<char, kMaxTextSize> text{};
  return std::string(text.data(), format(text.data()));
}

bool Ipv6Address::is_ipv4_mapped() const {
  for (size_t i = 0; i < 10; ++i) {
    if (bytes[i] != 0) {
      return false;
    }
  }
  return bytes[10] == 0xff && bytes[11] == 0xff;
}

Ipv6Address Ipv6Address::solicited_node_multicast() const {
  Ipv6Address a = from_groups({0xff02, 0, 0, 0, 0, 1, 0xff00, 0});
  a.bytes[13] = bytes[13];
  a.bytes[14] = bytes[14];
  a.bytes[15] = bytes[15];
  return a;
}

bool Ipv6Address::is_solicited_node_multicast() const {
  return in_prefix(from_groups({0xff02, 0, 0, 0, 0, 1, 0xff00, 0}), 104);
}

bool Ipv6Address::in_prefix(const Ipv6Address& prefix, unsigned length) const {
  if (length > 128) {
    return false;
  }
  const size_t whole = length / 8;
  for (size_t i = 0; i < whole; ++i) {
    if (bytes[i] != prefix.bytes[i]) {
      return false;
    }
  }
  const unsigned bits = length % 8;
  if (bits == 0) {
    return true;
  }
  const auto mask = static_cast<uint8_t>(0xffu << (8 - bits));
  return ((bytes[whole] ^ prefix.bytes[whole]) & mask) == 0;
}

const char* to_string(Ipv6Error e) {
  switch (e) {
    case Ipv6Error::Truncated:
      return "truncated";
    case Ipv6Error::BadVersion:
      return "version is not 6";
    case Ipv6Error::BadPayloadLength:
      return "payload length past the bytes received";
    case Ipv6Error::kCount:
      break;
  }
  return "?";
}

std::optional<Ipv6FixedHeader> read_ipv6_fixed_header(std::string_view bytes) {
  BufferReader in(bytes);
  Ipv6FixedHeader out;
  Ipv6Header& h = out.header;
  const uint32_t first = in.u32();
  h.payload_length = in.u16();
  h.next_header = in.u8();
  h.hop_limit = in.u8();
  const auto src = in.bytes(16);
  const auto dst = in.bytes(16);
  if (!in.ok()) {
    return std::nullopt;
  }
  out.version = static_cast<uint8_t>(first >> 28);
  h.traffic_class = static_cast<uint8_t>(first >> 20);
  h.flow_label = first & 0xfffffu;
  std::memcpy(h.src.bytes.data(), src.data(), h.src.bytes.size());
  std::memcpy(h.dst.bytes.data(), dst.data(), h.dst.bytes.size());
  return out;
}

Expected<Ipv6View, Ipv6Error> parse_ipv6(std::string_view datagram) {
  const auto fixed = read_ipv6_fixed_header(datagram);
  if (!fixed) {
    return make_unexpected(Ipv6Error::Truncated);
  }
  if (fixed->version != 6) {
    return make_unexpected(Ipv6Error::BadVersion);
  }
  // RFC 8200 §3: the payload length counts the bytes after the fixed header;
  // anything past it is link-layer padding.
  const Ipv6Header& h = fixed->header;
  if (h.payload_length > datagram.size() - Ipv6Header::kSize) {
    return make_unexpected(Ipv6Error::BadPayloadLength);
  }
  return Ipv6View{h, datagram.substr(Ipv6Header::kSize, h.payload_length)};
}

void serialize(const Ipv6Header& h, BufferWriter& out) {
  out.u32((uint32_t{6} << 28) | (uint32_t{h.traffic_class} << 20) | (h.flow_label & 0xfffffu));
  out.u16(h.payload_length);
  out.u8(h.next_header);
  out.u8(h.hop_limit);
  out.bytes({reinterpret_cast<const char*>(h.src.bytes.data()), h.src.bytes.size()});
  out.bytes({reinterpret_cast<const char*>(h.dst.bytes.data()), h.dst.bytes.size()});
}

void add_ipv6_pseudo_header(InternetChecksum& sum, const Ipv6Address& src, const Ipv6Address& dst,
                            uint32_t upper_layer_length, uint8_t next_header) {
  for (size_t i = 0; i < 16; i += 2) {
    sum.add_u16(src.group(i / 2));
  }
  for (size_t i = 0; i < 16; i += 2) {
    sum.add_u16(dst.group(i / 2));
  }
  sum.add_u32(upper_layer_length);
  sum.add_u32(next_header);
}

uint16_t ipv6_upper_layer_checksum(const Ipv6Address& src, const Ipv6Address& dst,
                                   uint8_t next_header, std::string_view packet) {
  InternetChecksum sum;
  add_ipv6_pseudo_header(sum, src, dst, static_cast<uint32_t>(packet.size()), next_header);
  sum.add(packet);
  return sum.value();
}

}  // namespace tinytcp::wire
