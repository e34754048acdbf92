#include "io/tso_batcher.hh"

#include <cstring>

#include "util/buffer.hh"
#include "util/checksum.hh"

namespace tinytcp::io {
namespace {

constexpr size_t kIpHeader = 20;  // only datagrams without IPv4 options
constexpr uint8_t kTcpProtocol = 6;
constexpr uint8_t kAck = 0x10;
constexpr uint8_t kPsh = 0x08;

// What find_tso_run needs of one datagram; ok == false: not a candidate.
struct Segment {
  bool ok = false;
  size_t header_bytes = 0;
  size_t payload = 0;
  uint32_t seq = 0;
  uint8_t flags = 0;
};

Segment inspect(std::string_view d) {
  Segment s;
  BufferReader r(d);
  const uint8_t version_ihl = r.u8();
  r.skip(1);  // TOS
  const uint16_t total = r.u16();
  r.skip(2);  // identification
  const uint16_t fragment = r.u16();
  r.skip(1);  // TTL
  const uint8_t protocol = r.u8();
  r.skip(10);  // checksum, addresses
  r.skip(4);   // ports
  s.seq = r.u32();
  r.skip(4);  // ack
  const uint8_t offset = r.u8();
  s.flags = r.u8();
  if (!r.ok() || version_ihl != 0x45 || total != d.size() || (fragment & 0x3fff) != 0 ||
      protocol != kTcpProtocol) {
    return s;
  }
  const size_t tcp_header = size_t{static_cast<uint8_t>(offset >> 4)} * 4;
  s.header_bytes = kIpHeader + tcp_header;
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

// Everything but identification, checksums, sequence number and PSH matches.
bool same_flow(std::string_view first, std::string_view next, size_t header_bytes) {
  constexpr size_t t = kIpHeader;
  return same(first, next, 0, 2) &&           // version, IHL, TOS
         same(first, next, 6, 10) &&          // fragment field, TTL, protocol
         same(first, next, 12, t + 4) &&      // addresses, ports
         same(first, next, t + 8, t + 13) &&  // ack, data offset
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
  run.header_bytes = first.header_bytes;
  run.payload_bytes = first.payload;
  run.segment_payload = static_cast<uint16_t>(first.payload);
  Segment previous = first;
  for (size_t i = 1; i < count; ++i) {
    const std::string_view d = datagrams[i];
    const Segment s = inspect(d);
    if (!s.ok || s.header_bytes != first.header_bytes || previous.payload != first.payload ||
        s.payload > first.payload ||
        s.seq != previous.seq + static_cast<uint32_t>(previous.payload) ||
        run.header_bytes + run.payload_bytes + s.payload > max_bytes ||
        !same_flow(datagrams[0], d, first.header_bytes)) {
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
  VirtioNetHeader v;
  v.flags = VirtioNetHeader::kNeedsChecksum;
  v.gso_type = VirtioNetHeader::kGsoTcpV4;
  v.header_length = static_cast<uint16_t>(run.header_bytes);
  v.gso_size = run.segment_payload;
  v.checksum_start = kIpHeader;
  v.checksum_offset = 16;  // the TCP checksum field
  serialize(v, out);

  char* h = out + VirtioNetHeader::kSize;
  std::memcpy(h, datagrams[0].data(), run.header_bytes);
  const size_t total = run.header_bytes + run.payload_bytes;
  put16(h + 2, static_cast<uint16_t>(total));
  put16(h + 10, 0);
  InternetChecksum ip;
  ip.add(std::string_view(h, kIpHeader));
  put16(h + 10, ip.value());

  uint8_t flags = static_cast<uint8_t>(h[kIpHeader + 13]);
  for (size_t i = 1; i < run.count; ++i) {
    flags =
        static_cast<uint8_t>(flags | (static_cast<uint8_t>(datagrams[i][kIpHeader + 13]) & kPsh));
  }
  h[kIpHeader + 13] = static_cast<char>(flags);
  // The pseudo-header sum (RFC 9293 §3.1), not complemented: the kernel adds
  // the TCP header and payload of each segment to it (checksum offload).
  InternetChecksum pseudo;
  pseudo.add(std::string_view(h + 12, 8));
  pseudo.add_u16(kTcpProtocol);
  pseudo.add_u16(static_cast<uint16_t>(total - kIpHeader));
  put16(h + kIpHeader + 16, static_cast<uint16_t>(~pseudo.value()));
  return tso_header_bytes(run);
}

}  // namespace tinytcp::io
