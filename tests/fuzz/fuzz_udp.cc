// parse_udp on any bytes (addresses from the first 8 bytes); a parsed
// datagram re-serializes and parses back to the same ports and payload.

#include <cstddef>
#include <cstdint>
#include <string>

#include "util/buffer.hh"
#include "util/check.hh"
#include "wire/udp.hh"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tinytcp;
  BufferReader r(std::string_view(reinterpret_cast<const char*>(data), size));
  const wire::Ipv4Address src{r.u32()};
  const wire::Ipv4Address dst{r.u32()};
  if (!r.ok()) {
    return 0;
  }
  const auto v = wire::parse_udp(r.rest(), src, dst);
  if (!v) {
    return 0;
  }
  TINYTCP_CHECK(v->payload.size() + wire::UdpHeader::kSize == v->header.length);
  std::string out(v->header.length, '\0');
  BufferWriter w(out.data(), out.size());
  serialize(v->header, v->payload, src, dst, w);
  TINYTCP_CHECK(w.ok());
  const auto back = wire::parse_udp(out, src, dst);
  TINYTCP_CHECK(back);
  TINYTCP_CHECK(back->header.src_port == v->header.src_port);
  TINYTCP_CHECK(back->header.dst_port == v->header.dst_port);
  TINYTCP_CHECK(back->payload == v->payload);
  return 0;
}
