#include "wire/icmp.hh"

#include "util/checksum.hh"

namespace tinytcp::wire {

const char* to_string(IcmpError e) {
  switch (e) {
    case IcmpError::Truncated:
      return "truncated";
    case IcmpError::BadChecksum:
      return "bad checksum";
    case IcmpError::kCount:
      break;
  }
  return "?";
}

const char* to_string(IcmpQuoteError e) {
  switch (e) {
    case IcmpQuoteError::Truncated:
      return "quote shorter than a header and 8 bytes";
    case IcmpQuoteError::BadVersion:
      return "quoted version is not 4";
    case IcmpQuoteError::BadHeaderLength:
      return "quoted header length below 20";
    case IcmpQuoteError::kCount:
      break;
  }
  return "?";
}

Expected<IcmpMessage, IcmpError> parse_icmp(std::string_view payload) {
  BufferReader in(payload);
  IcmpMessage m;
  m.type = in.u8();
  m.code = in.u8();
  m.checksum = in.u16();
  m.rest = in.u32();
  if (!in.ok()) {
    return make_unexpected(IcmpError::Truncated);
  }
  InternetChecksum sum;
  sum.add(payload);
  if (!sum.verifies()) {
    return make_unexpected(IcmpError::BadChecksum);
  }
  m.data = in.rest();
  return m;
}

void serialize(const IcmpMessage& m, BufferWriter& out) {
  const size_t start = out.size();
  out.u8(m.type);
  out.u8(m.code);
  out.u16(0);
  out.u32(m.rest);
  out.bytes(m.data);
  if (out.ok()) {
    InternetChecksum sum;
    sum.add(out.written().substr(start));
    out.patch_u16(start + 2, sum.value());
  }
}

Expected<IcmpQuote, IcmpQuoteError> parse_icmp_quote(std::string_view data) {
  const auto fixed = read_ipv4_fixed_header(data);
  if (!fixed) {
    return make_unexpected(IcmpQuoteError::Truncated);
  }
  IcmpQuote q;
  Ipv4Header& h = q.header;
  h = fixed->header;
  const size_t header_length = fixed->header_length;
  if (fixed->version != 4) {
    return make_unexpected(IcmpQuoteError::BadVersion);
  }
  if (header_length < Ipv4Header::kMinSize) {
    return make_unexpected(IcmpQuoteError::BadHeaderLength);
  }
  if (data.size() < header_length + icmp::kMinQuotedData) {
    return make_unexpected(IcmpQuoteError::Truncated);
  }
  h.header_length = static_cast<uint8_t>(header_length);
  q.data = data.substr(header_length);
  return q;
}

}  // namespace tinytcp::wire
