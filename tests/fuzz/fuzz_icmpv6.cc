// ICMPv6, its error quotes and the NDP messages on any bytes: a parsed
// message re-serializes to the input (the checksum included), a quote's
// upper-layer bytes lie inside the input, and NDP parsing never reads past
// the message. The first 32 bytes are the source and destination addresses
// of the pseudo-header; one bit of the next byte picks hop limit 255 or 64.

#include <cstddef>
#include <cstdint>
#include <string>

#include "util/check.hh"
#include "wire/icmpv6.hh"
#include "wire/ndp.hh"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tinytcp;
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  if (const auto q = wire::parse_icmpv6_quote(all)) {
    TINYTCP_CHECK(q->upper.size() >= 8);
    TINYTCP_CHECK(q->upper.data() >= all.data() + wire::Ipv6Header::kSize);
    TINYTCP_CHECK(q->upper.data() + q->upper.size() == all.data() + all.size());
  }
  if (size < 33) {
    return 0;
  }
  wire::Ipv6Header ip;
  for (size_t i = 0; i < 16; ++i) {
    ip.src.bytes[i] = data[i];
    ip.dst.bytes[i] = data[16 + i];
  }
  ip.hop_limit = (data[32] & 1) != 0 ? 255 : 64;
  const std::string_view in = all.substr(33);
  const auto m = wire::parse_icmpv6(in, ip.src, ip.dst);
  if (!m) {
    return 0;
  }
  std::string out(in.size(), '\0');
  BufferWriter w(out.data(), out.size());
  serialize(*m, ip.src, ip.dst, w);
  TINYTCP_CHECK(w.ok());
  // The same checksum unless the input used the other zero (0x0000/0xffff).
  TINYTCP_CHECK(out.substr(0, 2) == in.substr(0, 2) && out.substr(4) == in.substr(4));
  TINYTCP_CHECK(wire::parse_icmpv6(out, ip.src, ip.dst));

  if (const auto ns = wire::parse_neighbor_solicitation(ip, *m)) {
    TINYTCP_CHECK(!ns->target.is_multicast());
    std::string back(wire::ndp_size(*ns), '\0');
    BufferWriter bw(back.data(), back.size());
    serialize(*ns, ip.src, ip.dst, bw);
    TINYTCP_CHECK(bw.ok());
    const auto again =
        wire::parse_neighbor_solicitation(ip, *wire::parse_icmpv6(back, ip.src, ip.dst));
    TINYTCP_CHECK(again && again->target == ns->target);
    TINYTCP_CHECK(again->source_link_layer == ns->source_link_layer);
  }
  if (const auto na = wire::parse_neighbor_advertisement(ip, *m)) {
    std::string back(wire::ndp_size(*na), '\0');
    BufferWriter bw(back.data(), back.size());
    serialize(*na, ip.src, ip.dst, bw);
    TINYTCP_CHECK(bw.ok());
    const auto again =
        wire::parse_neighbor_advertisement(ip, *wire::parse_icmpv6(back, ip.src, ip.dst));
    TINYTCP_CHECK(again && again->target == na->target);
    TINYTCP_CHECK(again->solicited == na->solicited && again->router == na->router);
    TINYTCP_CHECK(again->target_link_layer == na->target_link_layer);
  }
  if (const auto ra = wire::parse_router_advertisement(ip, *m)) {
    TINYTCP_CHECK(ra->prefix_count <= wire::ndp::kMaxPrefixes);
  }
  return 0;
}
