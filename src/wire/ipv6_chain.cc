#include "wire/ipv6_chain.hh"

#include <algorithm>

namespace tinytcp::wire {
namespace {

constexpr uint8_t kPad1 = 0;
constexpr uint8_t kPadN = 1;
constexpr uint8_t kRouterAlert = 5;  // RFC 2711, hop-by-hop only

Ipv6ChainFailure failure(Ipv6ChainError e, size_t pointer) {
  return Ipv6ChainFailure{e, static_cast<uint32_t>(pointer)};
}

// The options of a hop-by-hop or destination options header (RFC 8200 §4.2);
// `options` begins at datagram offset `base`.
std::optional<Ipv6ChainFailure> check_options(std::string_view options, size_t base,
                                              bool hop_by_hop) {
  BufferReader in(options);
  while (in.remaining() > 0) {
    const size_t at = base + in.position();
    const uint8_t type = in.u8();
    if (type == kPad1) {
      continue;
    }
    const uint8_t length = in.u8();
    in.skip(length);
    if (!in.ok()) {
      return failure(Ipv6ChainError::BadOptionLength, at);
    }
    if (type == kPadN || (hop_by_hop && type == kRouterAlert && length == 2)) {
      continue;
    }
    // §4.2: the two high bits of an unrecognized type say what to do.
    switch (type >> 6) {
      case 0:
        continue;
      case 1:
        return failure(Ipv6ChainError::UnrecognizedOption, at);
      case 2:
        return failure(Ipv6ChainError::UnrecognizedOptionReport, at);
      default:
        return failure(Ipv6ChainError::UnrecognizedOptionReportUnicast, at);
    }
  }
  return std::nullopt;
}

// Walks from chain.protocol at payload offset chain.offset until an upper
// layer or a Fragment header. `bytes_used` counts extension header bytes.
Expected<Ipv6Chain, Ipv6ChainFailure> walk(Ipv6Chain chain, std::string_view payload,
                                           size_t bytes_used, const Ipv6ChainLimits& limits) {
  constexpr size_t kBase = Ipv6Header::kSize;  // payload offset -> datagram offset
  while (true) {
    const uint8_t type = chain.protocol;
    if (type != ipv6::kHopByHop && type != ipv6::kRouting && type != ipv6::kFragment &&
        type != ipv6::kDestinationOptions) {
      return chain;
    }
    const size_t at = chain.offset;
    if (type == ipv6::kHopByHop && at != 0) {
      // §4.1; Linux answers Parameter Problem code 1 at the Next Header field.
      return make_unexpected(failure(Ipv6ChainError::HopByHopNotFirst, chain.next_header_field));
    }
    if (chain.headers >= limits.max_headers) {
      return make_unexpected(failure(Ipv6ChainError::TooManyHeaders, chain.next_header_field));
    }
    BufferReader in(payload.substr(std::min(at, payload.size())));
    const uint8_t next = in.u8();
    const uint8_t length_byte = in.u8();
    const size_t length =
        type == ipv6::kFragment ? Ipv6FragmentHeader::kSize : 8 + size_t{length_byte} * 8;
    if (bytes_used + length > limits.max_bytes) {
      return make_unexpected(failure(Ipv6ChainError::ChainTooLong, kBase + at));
    }
    const auto rest = in.bytes(length - 2);
    if (!in.ok()) {
      return make_unexpected(failure(Ipv6ChainError::Truncated, kBase + at));
    }
    if (type == ipv6::kHopByHop || type == ipv6::kDestinationOptions) {
      if (const auto f = check_options(rest, kBase + at + 2, type == ipv6::kHopByHop)) {
        return make_unexpected(*f);
      }
    } else if (type == ipv6::kRouting) {
      const auto segments_left = static_cast<uint8_t>(rest[1]);
      if (segments_left != 0) {
        return make_unexpected(failure(Ipv6ChainError::UnsupportedRouting, kBase + at + 2));
      }
    } else {
      // The reserved byte (read as length_byte) and bits are ignored (§4.5).
      BufferReader f(rest);
      const uint16_t offset_flags = f.u16();
      Ipv6FragmentHeader h;
      h.next_header = next;
      h.offset = static_cast<uint16_t>(offset_flags & 0xfff8);
      h.more_fragments = (offset_flags & 1) != 0;
      h.identification = f.u32();
      chain.fragment = h;
      chain.fragment_header_offset = at;
      chain.offset = at + length;
      ++chain.headers;
      return chain;
    }
    ++chain.headers;
    bytes_used += length;
    chain.protocol = next;
    chain.next_header_field = kBase + at;
    chain.offset = at + length;
  }
}

}  // namespace

void serialize(const Ipv6FragmentHeader& h, BufferWriter& out) {
  out.u8(h.next_header);
  out.u8(0);
  out.u16(static_cast<uint16_t>((h.offset & 0xfff8) | (h.more_fragments ? 1 : 0)));
  out.u32(h.identification);
}

const char* to_string(Ipv6ChainError e) {
  switch (e) {
    case Ipv6ChainError::Truncated:
      return "extension header truncated";
    case Ipv6ChainError::HopByHopNotFirst:
      return "hop-by-hop options not directly after the IPv6 header";
    case Ipv6ChainError::TooManyHeaders:
      return "too many extension headers";
    case Ipv6ChainError::ChainTooLong:
      return "extension headers too long";
    case Ipv6ChainError::BadOptionLength:
      return "option runs past its header";
    case Ipv6ChainError::UnrecognizedOption:
      return "unrecognized option (discard)";
    case Ipv6ChainError::UnrecognizedOptionReport:
      return "unrecognized option (discard and report)";
    case Ipv6ChainError::UnrecognizedOptionReportUnicast:
      return "unrecognized option (discard and report unless multicast)";
    case Ipv6ChainError::UnsupportedRouting:
      return "unsupported routing type with segments left";
    case Ipv6ChainError::kCount:
      break;
  }
  return "?";
}

std::optional<uint8_t> parameter_problem_code(Ipv6ChainError e) {
  // RFC 4443 §3.4 codes: 0 erroneous header field, 1 unrecognized Next
  // Header, 2 unrecognized option.
  switch (e) {
    case Ipv6ChainError::Truncated:
    case Ipv6ChainError::BadOptionLength:
    case Ipv6ChainError::UnsupportedRouting:
      return uint8_t{0};
    case Ipv6ChainError::HopByHopNotFirst:
      return uint8_t{1};
    case Ipv6ChainError::UnrecognizedOptionReport:
    case Ipv6ChainError::UnrecognizedOptionReportUnicast:
      return uint8_t{2};
    case Ipv6ChainError::TooManyHeaders:
    case Ipv6ChainError::ChainTooLong:
    case Ipv6ChainError::UnrecognizedOption:
    case Ipv6ChainError::kCount:
      break;
  }
  return std::nullopt;
}

Expected<Ipv6Chain, Ipv6ChainFailure> parse_ipv6_chain(const Ipv6View& datagram,
                                                       const Ipv6ChainLimits& limits) {
  Ipv6Chain chain;
  chain.protocol = datagram.header.next_header;
  return walk(chain, datagram.payload, 0, limits);
}

Expected<Ipv6Chain, Ipv6ChainFailure> continue_ipv6_chain(const Ipv6Chain& stopped,
                                                          std::string_view payload,
                                                          const Ipv6ChainLimits& limits) {
  if (!stopped.fragment) {
    return stopped;
  }
  Ipv6Chain chain = stopped;
  chain.protocol = stopped.fragment->next_header;
  chain.next_header_field = Ipv6Header::kSize + stopped.fragment_header_offset;
  chain.fragment.reset();
  // Bytes walked so far: everything before the fragment data.
  return walk(chain, payload, stopped.offset, limits);
}

size_t ipv6_upper_layer_min_size(uint8_t protocol) {
  switch (protocol) {
    case ipv6::kTcp:
      return 20;
    case ipv6::kUdp:
      return 8;
    case ipv6::kIcmpv6:
      return 8;
    default:
      return 0;
  }
}

}  // namespace tinytcp::wire
