// parse_ethernet on any bytes; what parses re-serializes to the same header.

#include <cstddef>
#include <cstdint>
#include <string>

#include "util/check.hh"
#include "wire/ethernet.hh"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tinytcp;
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const auto f = wire::parse_ethernet(in);
  if (!f) {
    return 0;
  }
  TINYTCP_CHECK(f->payload.size() + wire::EthernetHeader::kSize == size);
  std::string out(wire::EthernetHeader::kSize, '\0');
  BufferWriter w(out.data(), out.size());
  serialize(f->header, w);
  TINYTCP_CHECK(w.ok());
  TINYTCP_CHECK(out == in.substr(0, wire::EthernetHeader::kSize));
  return 0;
}
