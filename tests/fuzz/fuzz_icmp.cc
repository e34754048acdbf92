// parse_icmp and parse_icmp_quote on any bytes; a parsed message
// re-serializes to the input exactly (the checksum included).

#include <cstddef>
#include <cstdint>
#include <string>

#include "util/check.hh"
#include "wire/icmp.hh"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tinytcp;
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  if (const auto q = wire::parse_icmp_quote(in)) {
    TINYTCP_CHECK(q->data.size() + q->header.header_length == size);
  }
  const auto m = wire::parse_icmp(in);
  if (!m) {
    return 0;
  }
  std::string out(size, '\0');
  BufferWriter w(out.data(), out.size());
  serialize(*m, w);
  TINYTCP_CHECK(w.ok());
  // The checksum is the same value unless the input used the other zero
  // (0x0000 vs 0xffff); everything else must match.
  TINYTCP_CHECK(out.substr(0, 2) == in.substr(0, 2) && out.substr(4) == in.substr(4));
  TINYTCP_CHECK(wire::parse_icmp(out));
  return 0;
}
