#include "io/virtio_net_header.hh"

#include "util/checksum.hh"

namespace tinytcp::io {

namespace {

uint16_t le16(std::string_view b, size_t at) {
  return static_cast<uint16_t>(static_cast<uint8_t>(b[at]) |
                               (static_cast<uint8_t>(b[at + 1]) << 8));
}

void put_le16(char* out, uint16_t v) {
  out[0] = static_cast<char>(v & 0xff);
  out[1] = static_cast<char>(v >> 8);
}

}  // namespace

std::optional<VirtioNetHeader> parse_virtio_net_header(std::string_view bytes) {
  if (bytes.size() < VirtioNetHeader::kSize) {
    return std::nullopt;
  }
  VirtioNetHeader h;
  h.flags = static_cast<uint8_t>(bytes[0]);
  h.gso_type = static_cast<uint8_t>(bytes[1]);
  h.header_length = le16(bytes, 2);
  h.gso_size = le16(bytes, 4);
  h.checksum_start = le16(bytes, 6);
  h.checksum_offset = le16(bytes, 8);
  return h;
}

void serialize(const VirtioNetHeader& header, char* out) {
  out[0] = static_cast<char>(header.flags);
  out[1] = static_cast<char>(header.gso_type);
  put_le16(out + 2, header.header_length);
  put_le16(out + 4, header.gso_size);
  put_le16(out + 6, header.checksum_start);
  put_le16(out + 8, header.checksum_offset);
}

bool complete_checksum(char* packet, size_t size, const VirtioNetHeader& header) {
  const size_t field = size_t{header.checksum_start} + header.checksum_offset;
  if (field + 2 > size) {
    return false;
  }
  InternetChecksum sum;
  sum.add(std::string_view(packet + header.checksum_start, size - header.checksum_start));
  uint16_t value = sum.value();
  if (value == 0) {
    value = 0xffff;
  }
  packet[field] = static_cast<char>(value >> 8);
  packet[field + 1] = static_cast<char>(value & 0xff);
  return true;
}

VnetReadInfo take_virtio_net_header(char* read, size_t size) {
  VnetReadInfo info;
  const auto header = parse_virtio_net_header(std::string_view(read, size));
  if (!header) {
    return info;
  }
  const uint8_t gso = header->gso_type & static_cast<uint8_t>(~VirtioNetHeader::kGsoEcn);
  if (gso != VirtioNetHeader::kGsoNone && gso != VirtioNetHeader::kGsoTcpV4 &&
      gso != VirtioNetHeader::kGsoTcpV6) {
    info.result = VnetRead::kUnsupportedGso;
    return info;
  }
  if ((header->flags & VirtioNetHeader::kNeedsChecksum) != 0) {
    // The buffer is the caller's: complete the checksum in place, so the
    // stack above verifies it as it would any packet.
    if (!complete_checksum(read + VirtioNetHeader::kSize, size - VirtioNetHeader::kSize, *header)) {
      return info;
    }
    info.checksum_completed = true;
  }
  info.super_packet = gso != VirtioNetHeader::kGsoNone;
  info.result = VnetRead::kPacket;
  return info;
}

}  // namespace tinytcp::io
