#include "net/link_offload.hh"

#include <algorithm>
#include <cstring>

#include "util/checksum.hh"

namespace tinytcp::net {
namespace {

constexpr uint8_t kTcpProtocol = 6;
constexpr uint8_t kFin = 0x01;
constexpr uint8_t kPsh = 0x08;
constexpr uint8_t kCwr = 0x80;
constexpr size_t kTcpChecksumOffset = 16;

uint16_t be16(const char* at) {
  return static_cast<uint16_t>((static_cast<uint8_t>(at[0]) << 8) | static_cast<uint8_t>(at[1]));
}

uint32_t be32(const char* at) {
  return (uint32_t{be16(at)} << 16) | be16(at + 2);
}

void put16(char* at, uint16_t v) {
  at[0] = static_cast<char>(v >> 8);
  at[1] = static_cast<char>(v & 0xff);
}

void put32(char* at, uint32_t v) {
  put16(at, static_cast<uint16_t>(v >> 16));
  put16(at + 2, static_cast<uint16_t>(v));
}

// The TCP data offset (header bytes) of the byte at `at`.
size_t data_offset(char at) {
  return size_t{static_cast<uint8_t>(static_cast<uint8_t>(at) >> 4)} * 4;
}

size_t ip_header_bytes(std::string_view datagram) {
  return size_t{static_cast<uint8_t>(datagram[0] & 0x0f)} * 4;
}

size_t total_length(std::string_view datagram) {
  return std::min<size_t>(be16(datagram.data() + 2), datagram.size());
}

}  // namespace

const char* to_string(OffloadError e) {
  switch (e) {
    case OffloadError::kChecksumOutside:
      return "checksum field outside the datagram";
    case OffloadError::kUnknownGso:
      return "GSO type other than TCPv4";
    case OffloadError::kZeroGsoSize:
      return "GSO with segment size 0";
    case OffloadError::kNotTcp:
      return "GSO of a datagram that is not unfragmented TCP";
    case OffloadError::kGsoWithoutChecksum:
      return "GSO without checksum offload at the TCP checksum";
    case OffloadError::kCount:
      break;
  }
  return "?";
}

std::optional<OffloadError> check_ipv4_offload(const LinkOffload& offload,
                                               std::string_view datagram, size_t link_bytes) {
  if (offload.gso_type != LinkOffload::kGsoNone && offload.gso_type != LinkOffload::kGsoTcpV4) {
    return OffloadError::kUnknownGso;
  }
  if (datagram.size() < 20) {
    return OffloadError::kChecksumOutside;  // parse_ipv4 rejects these first
  }
  const size_t ihl = ip_header_bytes(datagram);
  const size_t total = total_length(datagram);
  if (offload.needs_checksum()) {
    const size_t start = offload.checksum_start;
    if (start < link_bytes + ihl || start - link_bytes + offload.checksum_offset + 2 > total) {
      return OffloadError::kChecksumOutside;
    }
  }
  if (!offload.gso()) {
    return std::nullopt;
  }
  if (offload.gso_size == 0) {
    return OffloadError::kZeroGsoSize;
  }
  const bool fragment = (be16(datagram.data() + 6) & 0x3fff) != 0;
  if (static_cast<uint8_t>(datagram[9]) != kTcpProtocol || fragment || ihl + 20 > total) {
    return OffloadError::kNotTcp;
  }
  const size_t tcp_header = data_offset(datagram[ihl + 12]);
  if (tcp_header < 20 || ihl + tcp_header >= total) {
    return OffloadError::kNotTcp;  // no payload to segment is no GSO datagram either
  }
  if (!offload.needs_checksum() || offload.checksum_start != link_bytes + ihl ||
      offload.checksum_offset != kTcpChecksumOffset) {
    return OffloadError::kGsoWithoutChecksum;
  }
  return std::nullopt;
}

size_t gso_header_bytes(std::string_view datagram) {
  const size_t ihl = ip_header_bytes(datagram);
  return ihl + data_offset(datagram[ihl + 12]);
}

void complete_checksum(char* datagram, size_t size, const LinkOffload& offload, size_t link_bytes) {
  const size_t start = offload.checksum_start - link_bytes;
  const size_t field = start + offload.checksum_offset;
  InternetChecksum sum;
  sum.add(std::string_view(datagram + start, size - start));  // the field holds the pseudo sum
  uint16_t value = sum.value();
  if (value == 0) {
    value = 0xffff;  // valid for TCP and UDP alike (RFC 768)
  }
  put16(datagram + field, value);
}

size_t TcpSegmenter::segment(std::string_view ip_header, std::string_view rest, uint16_t gso_size,
                             const Emit& emit) {
  const size_t ihl = ip_header.size();
  const size_t tcp_header = data_offset(rest[12]);
  const std::string_view payload = rest.substr(tcp_header);
  const uint16_t id = be16(ip_header.data() + 4);
  const uint32_t seq = be32(rest.data() + 4);
  const auto flags = static_cast<uint8_t>(rest[13]);
  char* h = head_.data();
  char* t = h + ihl;
  std::memcpy(h, ip_header.data(), ihl);
  std::memcpy(t, rest.data(), tcp_header);
  size_t count = 0;
  for (size_t offset = 0; offset < payload.size(); offset += gso_size, ++count) {
    const std::string_view chunk = payload.substr(offset, gso_size);
    const bool last = offset + chunk.size() == payload.size();
    put16(h + 2, static_cast<uint16_t>(ihl + tcp_header + chunk.size()));
    put16(h + 4, static_cast<uint16_t>(id + count));
    put16(h + 10, 0);
    InternetChecksum ip;
    ip.add(std::string_view(h, ihl));
    put16(h + 10, ip.value());

    put32(t + 4, seq + static_cast<uint32_t>(offset));
    uint8_t f = flags;
    if (!last) {
      f = static_cast<uint8_t>(f & ~(kFin | kPsh));
    }
    if (count > 0) {
      f = static_cast<uint8_t>(f & ~kCwr);
    }
    t[13] = static_cast<char>(f);
    put16(t + kTcpChecksumOffset, 0);
    // RFC 9293 §3.1: the pseudo-header (addresses, protocol, TCP length).
    InternetChecksum tcp;
    tcp.add(std::string_view(h + 12, 8));
    tcp.add_u16(kTcpProtocol);
    tcp.add_u16(static_cast<uint16_t>(tcp_header + chunk.size()));
    tcp.add(std::string_view(t, tcp_header));
    tcp.add(chunk);
    put16(t + kTcpChecksumOffset, tcp.value());
    emit(std::string_view(h, ihl + tcp_header), chunk);
  }
  return count;
}

}  // namespace tinytcp::net
