#pragma once

// The IPv6 extension-header chain (RFC 8200 §4): hop-by-hop options, routing,
// fragment and destination options headers between the fixed header and the
// upper-layer header. The walk is bounded (at most `max_headers` headers and
// `max_bytes` bytes of them) and enforces what RFC 8200 asks of a receiver:
//
// - §4.1: hop-by-hop options only directly after the fixed header;
// - §4.2: options whose type is not recognized are handled by the two high
//   bits of the type (00 skip, 01 discard, 10 discard and report, 11 discard
//   and report unless the destination was multicast); an option that runs
//   past its header is malformed;
// - §4.4: a routing header with segments left is processed only if its type
//   is known; we know none (RFC 5095 deprecated type 0), so one with segments
//   left != 0 is reported, and one with segments left == 0 is skipped;
// - §4.5: the walk stops at a Fragment header, since what follows it belongs
//   to the fragmentable part; net/ reassembles, then walks the whole again.
//   continue_ipv6_chain() walks on inside a first fragment (RFC 7112 checks
//   that the whole chain is there).
//
// Any other Next Header value ends the chain: it is the upper-layer protocol
// (TCP, UDP, ICMPv6, No Next Header, or one the stack does not know and
// answers with a Parameter Problem). A failure carries the offset, from the
// start of the IPv6 header, of the byte at fault: the pointer of an ICMPv6
// Parameter Problem (RFC 4443 §3.4).
//
//   Hop-by-hop / destination options (8 + 8 x Hdr Ext Len bytes):
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//   |  Next Header  |  Hdr Ext Len  |  Options (type, length, data) |
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//   Routing (8 + 8 x Hdr Ext Len bytes):
//   |  Next Header  |  Hdr Ext Len  |  Routing Type | Segments Left |
//   Fragment (8 bytes):
//   |  Next Header  |   Reserved    |      Fragment Offset    |Res|M|
//   |                         Identification                        |

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "util/expected.hh"
#include "wire/ipv6.hh"

namespace tinytcp::wire {

struct Ipv6FragmentHeader {
  static constexpr size_t kSize = 8;

  uint8_t next_header = 0;
  uint16_t offset = 0;  // bytes (a multiple of 8)
  bool more_fragments = false;
  uint32_t identification = 0;

  // RFC 6946: offset 0 and M clear: a whole datagram in one "fragment".
  bool is_atomic() const { return offset == 0 && !more_fragments; }
};

// Writes an 8-byte Fragment header (reserved bits zero).
void serialize(const Ipv6FragmentHeader& header, BufferWriter& out);

struct Ipv6ChainLimits {
  size_t max_headers = 8;  // extension headers in one chain
  size_t max_bytes = 512;  // their bytes together
};

struct Ipv6Chain {
  uint8_t protocol = 0;  // upper-layer Next Header; kFragment while `fragment` is set
  size_t offset = 0;     // payload offset of the upper-layer header (or of the fragment data)
  size_t headers = 0;    // extension headers walked
  // Datagram offset of the Next Header field holding `protocol` (6 when the
  // fixed header names the upper layer): reassembly rewrites it.
  size_t next_header_field = 6;
  // Set when the walk stopped at a Fragment header, which begins at payload
  // offset `fragment_header_offset`.
  std::optional<Ipv6FragmentHeader> fragment;
  size_t fragment_header_offset = 0;
};

enum class Ipv6ChainError {
  Truncated,                        // a header runs past the payload
  HopByHopNotFirst,                 // RFC 8200 §4.1
  TooManyHeaders,                   // more than max_headers
  ChainTooLong,                     // more than max_bytes of extension headers
  BadOptionLength,                  // an option runs past its header
  UnrecognizedOption,               // type 01xxxxxx: discard silently
  UnrecognizedOptionReport,         // type 10xxxxxx: discard, Parameter Problem code 2
  UnrecognizedOptionReportUnicast,  // type 11xxxxxx: the same unless sent to multicast
  UnsupportedRouting,               // unknown routing type with segments left
  kCount
};
const char* to_string(Ipv6ChainError e);

struct Ipv6ChainFailure {
  Ipv6ChainError error = Ipv6ChainError::Truncated;
  uint32_t pointer = 0;  // datagram offset of the byte at fault
};

// The ICMPv6 Parameter Problem code (RFC 4443 §3.4) that reports `e`, or
// nullopt for a silent drop. UnrecognizedOptionReportUnicast gets code 2; the
// caller sends nothing when the destination was multicast.
std::optional<uint8_t> parameter_problem_code(Ipv6ChainError e);

// Walks the chain of a parsed datagram.
Expected<Ipv6Chain, Ipv6ChainFailure> parse_ipv6_chain(const Ipv6View& datagram,
                                                       const Ipv6ChainLimits& limits = {});
// Walks on past the Fragment header where `stopped` ended (stopped.fragment
// set), over the same payload: the headers of the fragmentable part of a first
// fragment. Counts and bounds include the headers already walked.
Expected<Ipv6Chain, Ipv6ChainFailure> continue_ipv6_chain(const Ipv6Chain& stopped,
                                                          std::string_view payload,
                                                          const Ipv6ChainLimits& limits = {});

// The fixed header size of an upper-layer protocol that RFC 7112 wants in a
// first fragment: TCP 20, UDP 8, ICMPv6 8 (as Linux's
// ipv6_frag_thdr_truncated), else 0.
size_t ipv6_upper_layer_min_size(uint8_t protocol);

}  // namespace tinytcp::wire
