// parse_ipv6 and the extension-header chain walk on any bytes: views lie
// inside the input, the chain stays within its bounds, a parsed header
// re-serializes to the same bytes, and a first fragment's continued walk
// stays within the payload.

#include <cstddef>
#include <cstdint>
#include <string>

#include "util/check.hh"
#include "wire/ipv6.hh"
#include "wire/ipv6_chain.hh"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tinytcp;
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const auto v = wire::parse_ipv6(in);
  if (!v) {
    return 0;
  }
  const auto& h = v->header;
  TINYTCP_CHECK(v->payload.size() == h.payload_length);
  TINYTCP_CHECK(v->payload.data() == in.data() + wire::Ipv6Header::kSize);
  std::string out(wire::Ipv6Header::kSize, '\0');
  BufferWriter w(out.data(), out.size());
  serialize(h, w);
  TINYTCP_CHECK(w.ok());
  TINYTCP_CHECK(out == in.substr(0, wire::Ipv6Header::kSize));

  const wire::Ipv6ChainLimits limits;
  const auto chain = wire::parse_ipv6_chain(*v, limits);
  if (!chain) {
    TINYTCP_CHECK(chain.error().pointer < wire::Ipv6Header::kSize + v->payload.size() + 8);
    TINYTCP_CHECK(chain.error().error != wire::Ipv6ChainError::kCount);
    return 0;
  }
  TINYTCP_CHECK(chain->offset <= v->payload.size());
  TINYTCP_CHECK(chain->headers <= limits.max_headers);
  TINYTCP_CHECK(chain->offset <= limits.max_bytes + wire::Ipv6FragmentHeader::kSize);
  TINYTCP_CHECK(chain->next_header_field < wire::Ipv6Header::kSize + chain->offset);
  if (chain->fragment) {
    TINYTCP_CHECK(chain->fragment_header_offset + 8 == chain->offset);
    const auto rest = wire::continue_ipv6_chain(*chain, v->payload, limits);
    if (rest) {
      TINYTCP_CHECK(rest->offset <= v->payload.size());
      TINYTCP_CHECK(rest->headers <= limits.max_headers);
    }
  }
  return 0;
}
