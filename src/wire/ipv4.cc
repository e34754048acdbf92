#include "wire/ipv4.hh"

#include "util/checksum.hh"

namespace tinytcp::wire {

std::optional<Ipv4Address> Ipv4Address::parse(std::string_view text) {
  uint32_t value = 0;
  size_t pos = 0;
  for (int octet = 0; octet < 4; ++octet) {
    if (octet > 0) {
      if (pos >= text.size() || text[pos] != '.') {
        return std::nullopt;
      }
      ++pos;
    }
    uint32_t part = 0;
    size_t digits = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9' && digits < 4) {
      part = part * 10 + static_cast<uint32_t>(text[pos] - '0');
      ++pos;
      ++digits;
    }
    if (digits == 0 || digits > 3 || part > 255) {
      return std::nullopt;
    }
    value = (value << 8) | part;
  }
  if (pos != text.size()) {
    return std::nullopt;
  }
  return Ipv4Address{value};
}

const char* to_string(Ipv4Error e) {
  switch (e) {
    case Ipv4Error::Truncated:
      return "truncated";
    case Ipv4Error::BadVersion:
      return "version is not 4";
    case Ipv4Error::BadHeaderLength:
      return "header length below 20";
    case Ipv4Error::BadTotalLength:
      return "total length inconsistent with the header or the buffer";
    case Ipv4Error::BadChecksum:
      return "bad header checksum";
    case Ipv4Error::BadFlags:
      return "reserved flag set";
    case Ipv4Error::kCount:
      break;
  }
  return "?";
}

uint16_t ipv4_header_checksum(std::string_view header) {
  InternetChecksum sum;
  sum.add(header);
  return sum.value();
}

std::optional<Ipv4FixedHeader> read_ipv4_fixed_header(std::string_view bytes) {
  BufferReader in(bytes);
  Ipv4FixedHeader out;
  Ipv4Header& h = out.header;
  const uint8_t version_ihl = in.u8();
  h.tos = in.u8();
  h.total_length = in.u16();
  h.id = in.u16();
  const uint16_t flags_offset = in.u16();
  h.ttl = in.u8();
  h.protocol = in.u8();
  h.checksum = in.u16();
  h.src.value = in.u32();
  h.dst.value = in.u32();
  if (!in.ok()) {
    return std::nullopt;
  }
  out.version = static_cast<uint8_t>(version_ihl >> 4);
  out.header_length = size_t{static_cast<uint8_t>(version_ihl & 0x0f)} * 4;
  out.reserved_flag = (flags_offset & 0x8000) != 0;
  h.dont_fragment = (flags_offset & 0x4000) != 0;
  h.more_fragments = (flags_offset & 0x2000) != 0;
  h.fragment_offset = static_cast<uint16_t>((flags_offset & 0x1fff) * 8);
  return out;
}

Expected<Ipv4View, Ipv4Error> parse_ipv4(std::string_view datagram) {
  const auto fixed = read_ipv4_fixed_header(datagram);
  if (!fixed) {
    return make_unexpected(Ipv4Error::Truncated);
  }
  Ipv4View view;
  Ipv4Header& h = view.header;
  h = fixed->header;
  const size_t header_length = fixed->header_length;
  if (fixed->version != 4) {
    return make_unexpected(Ipv4Error::BadVersion);
  }
  if (header_length < Ipv4Header::kMinSize) {
    return make_unexpected(Ipv4Error::BadHeaderLength);
  }
  if (header_length > datagram.size()) {
    return make_unexpected(Ipv4Error::Truncated);
  }
  h.header_length = static_cast<uint8_t>(header_length);
  // RFC 791 §3.1: the total length covers header and data; anything after it
  // is link-layer padding. RFC 1122 §3.2.1.1 and .2: verify the checksum.
  if (h.total_length < header_length || h.total_length > datagram.size()) {
    return make_unexpected(Ipv4Error::BadTotalLength);
  }
  if (ipv4_header_checksum(datagram.substr(0, header_length)) != 0) {
    return make_unexpected(Ipv4Error::BadChecksum);
  }
  if (fixed->reserved_flag) {
    return make_unexpected(Ipv4Error::BadFlags);
  }
  view.options = datagram.substr(Ipv4Header::kMinSize, header_length - Ipv4Header::kMinSize);
  view.payload = datagram.substr(header_length, h.total_length - header_length);
  return view;
}

void serialize(const Ipv4Header& h, BufferWriter& out) {
  const size_t start = out.size();
  out.u8(0x45);
  out.u8(h.tos);
  out.u16(h.total_length);
  out.u16(h.id);
  uint16_t flags_offset = static_cast<uint16_t>((h.fragment_offset / 8) & 0x1fff);
  if (h.dont_fragment) {
    flags_offset |= 0x4000;
  }
  if (h.more_fragments) {
    flags_offset |= 0x2000;
  }
  out.u16(flags_offset);
  out.u8(h.ttl);
  out.u8(h.protocol);
  out.u16(0);
  out.u32(h.src.value);
  out.u32(h.dst.value);
  if (out.ok()) {
    out.patch_u16(start + 10, ipv4_header_checksum(out.written().substr(start, 20)));
  }
}

}  // namespace tinytcp::wire
