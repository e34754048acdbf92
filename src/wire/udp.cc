#include "wire/udp.hh"

#include "util/checksum.hh"

namespace tinytcp::wire {

namespace {
uint16_t udp_checksum(std::string_view segment, Ipv4Address src, Ipv4Address dst) {
  InternetChecksum sum;
  sum.add_u32(src.value);
  sum.add_u32(dst.value);
  sum.add_u16(static_cast<uint16_t>(IpProtocol::kUdp));
  sum.add_u16(static_cast<uint16_t>(segment.size()));
  sum.add(segment);
  return sum.value();
}
}  // namespace

const char* to_string(UdpError e) {
  switch (e) {
    case UdpError::Truncated:
      return "truncated";
    case UdpError::BadLength:
      return "length field inconsistent with the payload";
    case UdpError::BadChecksum:
      return "bad checksum";
    case UdpError::kCount:
      break;
  }
  return "?";
}

Expected<UdpView, UdpError> parse_udp(std::string_view payload, Ipv4Address src, Ipv4Address dst) {
  BufferReader in(payload);
  UdpView view;
  view.header.src_port = in.u16();
  view.header.dst_port = in.u16();
  view.header.length = in.u16();
  view.header.checksum = in.u16();
  if (!in.ok()) {
    return make_unexpected(UdpError::Truncated);
  }
  if (view.header.length < UdpHeader::kSize || view.header.length > payload.size()) {
    return make_unexpected(UdpError::BadLength);
  }
  const auto segment = payload.substr(0, view.header.length);
  // RFC 768: an all-zero checksum field means the sender computed none.
  if (view.header.checksum != 0 && udp_checksum(segment, src, dst) != 0) {
    return make_unexpected(UdpError::BadChecksum);
  }
  view.payload = segment.substr(UdpHeader::kSize);
  return view;
}

void serialize(const UdpHeader& header, std::string_view data, Ipv4Address src, Ipv4Address dst,
               BufferWriter& out) {
  const size_t length = UdpHeader::kSize + data.size();
  if (length > 0xffff) {
    out.zeros(out.remaining() + 1);  // sets the sticky error without writing
    return;
  }
  const size_t start = out.size();
  out.u16(header.src_port);
  out.u16(header.dst_port);
  out.u16(static_cast<uint16_t>(length));
  out.u16(0);
  out.bytes(data);
  if (out.ok()) {
    uint16_t checksum = udp_checksum(out.written().substr(start), src, dst);
    // RFC 768: a computed zero is transmitted as all ones.
    if (checksum == 0) {
      checksum = 0xffff;
    }
    out.patch_u16(start + 6, checksum);
  }
}

}  // namespace tinytcp::wire
