// parse_ipv4 on any bytes; a parsed datagram's views lie inside the input,
// and re-serializing its header (without options) parses back to the same
// fields and payload.

#include <cstddef>
#include <cstdint>
#include <string>

#include "util/check.hh"
#include "wire/ipv4.hh"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tinytcp;
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const auto v = wire::parse_ipv4(in);
  if (!v) {
    return 0;
  }
  const auto& h = v->header;
  TINYTCP_CHECK(h.header_length >= 20 && h.header_length <= h.total_length);
  TINYTCP_CHECK(h.total_length <= size);
  TINYTCP_CHECK(v->payload.size() == h.total_length - h.header_length);
  TINYTCP_CHECK(v->payload.data() == in.data() + h.header_length);
  std::string out(20 + v->payload.size(), '\0');
  wire::Ipv4Header copy = h;
  copy.total_length = static_cast<uint16_t>(out.size());
  BufferWriter w(out.data(), out.size());
  serialize(copy, w);
  w.bytes(v->payload);
  TINYTCP_CHECK(w.ok());
  const auto back = wire::parse_ipv4(out);
  TINYTCP_CHECK(back);
  TINYTCP_CHECK(back->header.src == h.src && back->header.dst == h.dst);
  TINYTCP_CHECK(back->header.ttl == h.ttl && back->header.protocol == h.protocol);
  TINYTCP_CHECK(back->header.fragment_offset == h.fragment_offset);
  TINYTCP_CHECK(back->header.dont_fragment == h.dont_fragment);
  TINYTCP_CHECK(back->header.more_fragments == h.more_fragments);
  TINYTCP_CHECK(back->payload == v->payload);
  return 0;
}
