// Feeds arbitrary bytes to parse_tcp. Whatever parses must serialize again and
// parse to the same header and payload (options that matter are kept; the
// layout may differ from the input's).

#include <cstddef>
#include <cstdint>
#include <string>

#include "util/buffer.hh"
#include "util/check.hh"
#include "util/checksum.hh"
#include "wire/tcp_header.hh"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tinytcp;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  constexpr uint32_t kSrc = 0x0a000001;
  constexpr uint32_t kDst = 0x0a000002;
  // Half the inputs get a correct checksum so the option parser is reached.
  std::string segment(bytes);
  if (segment.size() >= 20 && (segment[0] & 1) != 0) {
    segment[16] = 0;
    segment[17] = 0;
    InternetChecksum sum;
    sum.add_u32(kSrc);
    sum.add_u32(kDst);
    sum.add_u16(6);
    sum.add_u16(static_cast<uint16_t>(segment.size()));
    sum.add(segment);
    const uint16_t c = sum.value();
    segment[16] = static_cast<char>(c >> 8);
    segment[17] = static_cast<char>(c);
  }
  const auto v = wire::parse_tcp(segment, kSrc, kDst);
  if (!v) {
    TINYTCP_CHECK(std::string(wire::to_string(v.error())) != "unknown");
    return 0;
  }
  TINYTCP_CHECK(!(v->header.syn && v->header.fin));
  std::string out(wire::tcp_header_size(v->header) + v->payload.size(), '\0');
  if (out.size() > 0xffff) {
    return 0;  // our option layout may be longer than a tightly packed input's
  }
  BufferWriter writer(out.data(), out.size());
  TINYTCP_CHECK(wire::serialize_tcp(v->header, v->payload, kSrc, kDst, writer));
  const auto again = wire::parse_tcp(writer.written(), kSrc, kDst);
  TINYTCP_CHECK(again);
  TINYTCP_CHECK(again->payload == v->payload);
  TINYTCP_CHECK(again->header.seqno == v->header.seqno);
  TINYTCP_CHECK(again->header.ackno == v->header.ackno);
  TINYTCP_CHECK(again->header.mss == v->header.mss);
  TINYTCP_CHECK(again->header.window_scale == v->header.window_scale);
  TINYTCP_CHECK(again->header.timestamps.has_value() == v->header.timestamps.has_value());
  TINYTCP_CHECK(again->header.sack_count <= v->header.sack_count);
  return 0;
}
