// parse_arp on any bytes; what parses re-serializes to the same 28 bytes.

#include <cstddef>
#include <cstdint>
#include <string>

#include "util/check.hh"
#include "wire/arp.hh"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tinytcp;
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const auto m = wire::parse_arp(in);
  if (!m) {
    return 0;
  }
  std::string out(wire::ArpMessage::kSize, '\0');
  BufferWriter w(out.data(), out.size());
  serialize(*m, w);
  TINYTCP_CHECK(w.ok());
  TINYTCP_CHECK(out == in.substr(0, wire::ArpMessage::kSize));
  return 0;
}
