#include "wire/icmpv6.hh"

#include "util/checksum.hh"
#include "wire/ipv6_chain.hh"

namespace tinytcp::wire {

const char* to_string(Icmpv6Error e) {
  switch (e) {
    case Icmpv6Error::Truncated:
      return "truncated";
    case Icmpv6Error::BadChecksum:
      return "bad checksum";
    case Icmpv6Error::kCount:
      break;
  }
  return "?";
}

const char* to_string(Icmpv6QuoteError e) {
  switch (e) {
    case Icmpv6QuoteError::Truncated:
      return "quote shorter than the headers and 8 bytes";
    case Icmpv6QuoteError::BadVersion:
      return "quoted version is not 6";
    case Icmpv6QuoteError::BadChain:
      return "quoted extension headers malformed";
    case Icmpv6QuoteError::NotFirstFragment:
      return "quote of a non-first fragment";
    case Icmpv6QuoteError::kCount:
      break;
  }
  return "?";
}

Expected<Icmpv6Message, Icmpv6Error> parse_icmpv6(std::string_view message, const Ipv6Address& src,
                                                  const Ipv6Address& dst) {
  BufferReader in(message);
  Icmpv6Message m;
  m.type = in.u8();
  m.code = in.u8();
  m.checksum = in.u16();
  m.rest = in.u32();
  if (!in.ok()) {
    return make_unexpected(Icmpv6Error::Truncated);
  }
  // RFC 4443 §2.3: the checksum is mandatory (no "zero means none" as in UDP
  // over IPv4).
  if (ipv6_upper_layer_checksum(src, dst, ipv6::kIcmpv6, message) != 0) {
    return make_unexpected(Icmpv6Error::BadChecksum);
  }
  m.data = in.rest();
  return m;
}

void serialize(const Icmpv6Message& m, const Ipv6Address& src, const Ipv6Address& dst,
               BufferWriter& out) {
  const size_t start = out.size();
  out.u8(m.type);
  out.u8(m.code);
  out.u16(0);
  out.u32(m.rest);
  out.bytes(m.data);
  if (out.ok()) {
    out.patch_u16(start + 2,
                  ipv6_upper_layer_checksum(src, dst, ipv6::kIcmpv6, out.written().substr(start)));
  }
}

Expected<Icmpv6Quote, Icmpv6QuoteError> parse_icmpv6_quote(std::string_view data) {
  const auto fixed = read_ipv6_fixed_header(data);
  if (!fixed) {
    return make_unexpected(Icmpv6QuoteError::Truncated);
  }
  if (fixed->version != 6) {
    return make_unexpected(Icmpv6QuoteError::BadVersion);
  }
  // The quoted payload length is the original's: the walk ends where the
  // quote does.
  Icmpv6Quote q;
  q.header = fixed->header;
  const Ipv6View view{q.header, data.substr(Ipv6Header::kSize)};
  auto chain = parse_ipv6_chain(view);
  if (chain && chain->fragment) {
    if (chain->fragment->offset != 0) {
      return make_unexpected(Icmpv6QuoteError::NotFirstFragment);
    }
    chain = continue_ipv6_chain(*chain, view.payload);
  }
  if (!chain) {
    return make_unexpected(chain.error().error == Ipv6ChainError::Truncated
                               ? Icmpv6QuoteError::Truncated
                               : Icmpv6QuoteError::BadChain);
  }
  if (chain->fragment) {
    return make_unexpected(Icmpv6QuoteError::BadChain);  // a second Fragment header
  }
  q.protocol = chain->protocol;
  q.upper = view.payload.substr(chain->offset);
  if (q.upper.size() < 8) {
    return make_unexpected(Icmpv6QuoteError::Truncated);
  }
  return q;
}

}  // namespace tinytcp::wire
