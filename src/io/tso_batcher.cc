#include "io/tso_batcher.hh"

#include <cstring>

#include "util/buffer.hh"
#include "util/checksum.hh"

namespace tinytcp::io {
namespace {

constexpr size_t kIpv4Header = 20;  // only datagrams without IPv4 options
constexpr size_t kIpv6Header = 40;  // only datagrams without extension headers
constexpr uint8_t kTcpProtocol = 6;
constexpr uint8_t kAck = 0x10;
constexpr uint8_t kPsh = 0x08;

// What find_tso_run needs of one datagram; ok == false: not a candidate.
struct Segment {
  bool ok = false;
  size_t ip_header = 0;  // kIpv4Header or kIpv6Header
  size_t header_bytes = 0;
  size_t payload = 0;
  uint32_t seq = 0;
  uint8_t flags = 0;
};

// The IP header's length if `d` is an IPv4 datagram without options or
// fragmentation, or an IPv6 one whose next header is TCP, holding exactly the
// bytes it says; 0 otherwise.
size_t ip_header_of(std::string_view d) {
  BufferReader r(d);
  const uint8_t first = r.u8();
  if ((first >> 4) == 6) {
    r.skip(3);  // traffic class, flow label
    const uint16_t payload_length = r.u16();
    const uint8_t next_header = r.u8();
    return r.ok() && next_header == kTcpProtocol && size_t{payload_length} + kIpv6Header == d.size()
               ? kIpv6Header
               : 0;
  }
  r.skip(1);  // TOS
  const uint16_t total = r.u16();
  r.skip(2);  // identification
  const uint16_t fragment = r.u16();
  r.skip(1);  // TTL
  const uint8_t protocol = r.u8();
  return r.ok() && first == 0x45 && total == d.size() && (fragment & 0x3fff) == 0 &&
                 protocol == kTcpProtocol
             ? kIpv4Header
             : 0;
}

Segment inspect(std::string_view d) {
  Segment s;
  s.ip_header = ip_header_of(d);
  if (s.ip_header == 0) {
    return s;
  }
  BufferReader r(d);
  r.skip(s.ip_header + 4);  // IP header, ports
  s.seq = r.u32();
  r.skip(4);  // ack
  const uint8_t offset = r.u8();
  s.flags = r.u8();
  if (!r.ok()) {
    return s;
  }
  const size_t tcp_header = size_t{static_cast<uint8_t>(offset >> 4)} * 4;
  s.header_bytes = s.ip_header + tcp_header;
  // Only ACK, optionally PSH: no SYN, FIN, RST, URG, ECE, CWR.
  if (tcp_header < 20 || s.header_bytes >= d.size() || (s.flags & ~kPsh) != kAck) {
    return s;
  }
  s.payload = d.size() - s.header_bytes;
  s.ok = true;
  return s;
}

void put16(char* at, uint16_t v) {
  at[0] = static_cast<char>(v >> 8);
  at[1] = static_cast<char>(v & 0xff);
}

bool same(std::string_view a, std::string_view b, size_t from, size_t to) {
  return std::memcmp(a.data() + from, b.data() + from, to - from) == 0;
}

// Everything but the IPv4 identification, lengths, checksums, sequence number
// and PSH matches (`ip_header` bytes of IP header, the same in both).
bool same_flow(std::string_view first, std::string_view next, size_t ip_header,
               size_t header_bytes) {
  const size_t t = ip_header;
  const bool same_ip = ip_header == kIpv6Header
                           ? same(first, next, 0, 4) &&       // version, traffic class, flow label
                                 same(first, next, 6, t + 4)  // next header, hop limit, addresses,
                                                              // ports
                           : same(first, next, 0, 2) &&       // version, IHL, TOS
                                 same(first, next, 6, 10) &&  // fragment field, TTL, protocol
                                 same(first, next, 12, t + 4);  // addresses, ports
  return same_ip && same(first, next, t + 8, t + 13) &&         // ack, data offset
         ((first[t + 13] ^ next[t + 13]) & ~kPsh) == 0 &&
         same(first, next, t + 14, t + 16) &&      // window
         same(first, next, t + 18, header_bytes);  // urgent pointer, options
}

}  // namespace

TsoRun find_tso_run(const std::string_view* datagrams, size_t count, size_t max_bytes) {
  TsoRun run;
  if (count < 2) {
    return run;
  }
  const Segment first = inspect(datagrams[0]);
  if (!first.ok || first.payload > 0xffff) {
    return run;
  }
  run.ip_header_bytes = first.ip_header;
  run.header_bytes = first.header_bytes;
  run.payload_bytes = first.payload;
  run.segment_payload = static_cast<uint16_t>(first.payload);
  Segment previous = first;
  for (size_t i = 1; i < count; ++i) {
    const std::string_view d = datagrams[i];
    const Segment s = inspect(d);
    if (!s.ok || s.ip_header != first.ip_header || s.header_bytes != first.header_bytes ||
        previous.payload != first.payload || s.payload > first.payload ||
        s.seq != previous.seq + static_cast<uint32_t>(previous.payload) ||
        run.header_bytes + run.payload_bytes + s.payload > max_bytes ||
        !same_flow(datagrams[0], d, first.ip_header, first.header_bytes)) {
      break;
    }
    run.payload_bytes += s.payload;
    run.count = i + 1;
    previous = s;
  }
  if (run.count == 1) {
    run.payload_bytes = first.payload;
  }
  return run;
}

size_t write_tso_header(const std::string_view* datagrams, const TsoRun& run, char* out) {
  const size_t t = run.ip_header_bytes;
  const bool v6 = t == kIpv6Header;
  VirtioNetHeader v;
  v.flags = VirtioNetHeader::kNeedsChecksum;
  v.gso_type = v6 ? VirtioNetHeader::kGsoTcpV6 : VirtioNetHeader::kGsoTcpV4;
  v.header_length = static_cast<uint16_t>(run.header_bytes);
  v.gso_size = run.segment_payload;
  v.checksum_start = static_cast<uint16_t>(t);
  v.checksum_offset = 16;  // the TCP checksum field
  serialize(v, out);

  char* h = out + VirtioNetHeader::kSize;
  std::memcpy(h, datagrams[0].data(), run.header_bytes);
  const size_t total = run.header_bytes + run.payload_bytes;
  const auto tcp_length = static_cast<uint16_t>(total - t);
  if (v6) {
    put16(h + 4, tcp_length);  // payload length (no extension headers)
  } else {
    put16(h + 2, static_cast<uint16_t>(total));
    put16(h + 10, 0);
    InternetChecksum ip;
    ip.add(std::string_view(h, kIpv4Header));
    put16(h + 10, ip.value());
  }

  uint8_t flags = static_cast<uint8_t>(h[t + 13]);
  for (size_t i = 1; i < run.count; ++i) {
    flags = static_cast<uint8_t>(flags | (static_cast<uint8_t>(datagrams[i][t + 13]) & kPsh));
  }
  h[t + 13] = static_cast<char>(flags);
  // The pseudo-header sum (RFC 9293 §3.1; RFC 8200 §8.1 for IPv6: the two
  // addresses, the upper-layer length and next header), not complemented: the
  // kernel adds the TCP header and payload of each segment to it (checksum
  // offload). The IPv6 length is 32 bits, under 2^16 here: its high word is 0.
  InternetChecksum pseudo;
  pseudo.add(v6 ? std::string_view(h + 8, 32) : std::string_view(h + 12, 8));
  pseudo.add_u16(kTcpProtocol);
  pseudo.add_u16(tcp_length);
  put16(h + t + 16, static_cast<uint16_t>(~pseudo.value()));
  return tso_header_bytes(run);
}

}  // namespace tinytcp::io
