#include "wire/tcp_header.hh"

#include <algorithm>

#include "util/checksum.hh"

namespace tinytcp::wire {
namespace {

// RFC 9293 §3.2 option kinds, RFC 7323 and RFC 2018.
constexpr uint8_t kEol = 0;
constexpr uint8_t kNop = 1;
constexpr uint8_t kMss = 2;
constexpr uint8_t kWindowScale = 3;
constexpr uint8_t kSackPermitted = 4;
constexpr uint8_t kSack = 5;
constexpr uint8_t kTimestamps = 8;

constexpr uint8_t kFin = 0x01;
constexpr uint8_t kSyn = 0x02;
constexpr uint8_t kRst = 0x04;
constexpr uint8_t kPsh = 0x08;
constexpr uint8_t kAck = 0x10;
constexpr uint8_t kUrg = 0x20;
constexpr uint8_t kEce = 0x40;
constexpr uint8_t kCwr = 0x80;

constexpr size_t kMaxSegment = 0xffff;

void add_pseudo_header(InternetChecksum& sum, uint32_t src_ip, uint32_t dst_ip, size_t length) {
  sum.add_u32(src_ip);
  sum.add_u32(dst_ip);
  sum.add_u16(TcpHeader::kProtocol);
  sum.add_u16(static_cast<uint16_t>(length));
}

// Parses the option bytes into `h`. RFC 9293 §3.2: EOL ends the list, NOP is
// one byte, every other kind has a length byte covering kind and length; a
// receiver must skip unknown kinds by that length (MUST-68). A known kind with
// the wrong length (MSS of 3 bytes, timestamps of 9) is skipped the same way
// and the rest still parsed, as Linux's tcp_parse_options does (issue 15 item
// 10): the segment is still a good segment, only that option is unusable. An
// illegal length (0 or 1, or past the data offset) leaves nothing to skip by
// (§3.1, MUST-7: "must be prepared to handle an illegal option length"): we
// drop the segment.
std::optional<TcpError> parse_options(std::string_view bytes, TcpHeader& h) {
  BufferReader in(bytes);
  while (in.remaining() > 0) {
    const uint8_t kind = in.u8();
    if (kind == kEol) {
      break;
    }
    if (kind == kNop) {
      continue;
    }
    if (in.remaining() == 0) {
      return TcpError::OptionPastHeader;
    }
    const uint8_t length = in.u8();
    if (length < 2) {
      return TcpError::OptionBadLength;
    }
    if (length - 2u > in.remaining()) {
      return TcpError::OptionPastHeader;
    }
    BufferReader body(in.bytes(length - 2u));
    switch (kind) {
      case kMss:
        if (length == 4) {
          h.mss = body.u16();
        }
        break;
      case kWindowScale:
        if (length == 3) {
          h.window_scale = body.u8();
        }
        break;
      case kSackPermitted:
        if (length == 2) {
          h.sack_permitted = true;
        }
        break;
      case kTimestamps:
        if (length == 10) {
          h.timestamps = TcpTimestampOption{body.u32(), body.u32()};
        }
        break;
      case kSack: {
        // RFC 2018 §3: length 2 + 8n, n >= 1; 40 option bytes hold at most 4.
        const size_t n = (length - 2u) / 8;
        if ((length - 2u) % 8 != 0 || n == 0 || n > TcpHeader::kMaxSackBlocks) {
          break;
        }
        h.sack_count = static_cast<uint8_t>(n);
        for (size_t i = 0; i < n; ++i) {
          h.sack[i].left = body.u32();
          h.sack[i].right = body.u32();
        }
        break;
      }
      default:
        break;  // unknown kind: skipped by its length
    }
  }
  return std::nullopt;
}

size_t sack_blocks_that_fit(const TcpHeader& h, size_t other_bytes) {
  if (h.sack_count == 0 || other_bytes + 4 + 8 > TcpHeader::kMaxOptionBytes) {
    return 0;
  }
  const size_t room = (TcpHeader::kMaxOptionBytes - other_bytes - 4) / 8;
  return std::min<size_t>({room, h.sack_count, TcpHeader::kMaxSackBlocks});
}

size_t non_sack_options_size(const TcpHeader& h) {
  size_t n = 0;
  if (h.mss) {
    n += 4;
  }
  if (h.timestamps) {
    n += 12;  // SACK-permitted (or NOP NOP) + timestamps
  } else if (h.sack_permitted) {
    n += 4;  // NOP NOP SACK-permitted
  }
  if (h.window_scale) {
    n += 4;  // NOP + window scale
  }
  return n;
}

}  // namespace

const char* to_string(TcpError error) {
  switch (error) {
    case TcpError::Truncated:
      return "truncated";
    case TcpError::TooLong:
      return "too long";
    case TcpError::BadDataOffset:
      return "bad data offset";
    case TcpError::BadChecksum:
      return "bad checksum";
    case TcpError::SynFin:
      return "SYN and FIN";
    case TcpError::OptionBadLength:
      return "option length 0 or 1";
    case TcpError::OptionPastHeader:
      return "option past header";
    case TcpError::kCount:
      break;
  }
  return "unknown";
}

Expected<TcpView, TcpError> parse_tcp(std::string_view segment, uint32_t src_ip, uint32_t dst_ip) {
  if (segment.size() < TcpHeader::kMinSize) {
    return make_unexpected(TcpError::Truncated);
  }
  if (segment.size() > kMaxSegment) {
    return make_unexpected(TcpError::TooLong);
  }
  BufferReader in(segment);
  TcpHeader h;
  h.src_port = in.u16();
  h.dst_port = in.u16();
  h.seqno = in.u32();
  h.ackno = in.u32();
  const uint8_t offset_byte = in.u8();
  const uint8_t flags = in.u8();
  h.window = in.u16();
  h.checksum = in.u16();
  h.urgent_pointer = in.u16();
  if (!in.ok()) {
    return make_unexpected(TcpError::Truncated);
  }
  const size_t header_size = size_t{static_cast<uint8_t>(offset_byte >> 4)} * 4;
  if (header_size < TcpHeader::kMinSize || header_size > segment.size()) {
    return make_unexpected(TcpError::BadDataOffset);
  }

  InternetChecksum sum;
  add_pseudo_header(sum, src_ip, dst_ip, segment.size());
  sum.add(segment);
  if (!sum.verifies()) {
    return make_unexpected(TcpError::BadChecksum);
  }

  h.fin = (flags & kFin) != 0;
  h.syn = (flags & kSyn) != 0;
  h.rst = (flags & kRst) != 0;
  h.psh = (flags & kPsh) != 0;
  h.ack = (flags & kAck) != 0;
  h.urg = (flags & kUrg) != 0;
  h.ece = (flags & kEce) != 0;
  h.cwr = (flags & kCwr) != 0;
  if (h.syn && h.fin) {
    return make_unexpected(TcpError::SynFin);
  }

  if (const auto error = parse_options(in.bytes(header_size - TcpHeader::kMinSize), h)) {
    return make_unexpected(*error);
  }
  return TcpView{h, segment.substr(header_size)};
}

size_t tcp_options_size(const TcpHeader& header) {
  const size_t other = non_sack_options_size(header);
  const size_t blocks = sack_blocks_that_fit(header, other);
  return other + (blocks > 0 ? 4 + 8 * blocks : 0);
}

bool serialize_tcp(const TcpHeader& header, std::string_view payload, uint32_t src_ip,
                   uint32_t dst_ip, BufferWriter& out) {
  const size_t other = non_sack_options_size(header);
  const size_t blocks = sack_blocks_that_fit(header, other);
  const size_t header_size = TcpHeader::kMinSize + other + (blocks > 0 ? 4 + 8 * blocks : 0);
  const size_t total = header_size + payload.size();
  if (total > kMaxSegment || total > out.remaining()) {
    out.zeros(out.remaining() + 1);  // sets the sticky error, writes nothing
    return false;
  }
  const size_t start = out.size();

  uint8_t flags = 0;
  flags |= header.fin ? kFin : 0;
  flags |= header.syn ? kSyn : 0;
  flags |= header.rst ? kRst : 0;
  flags |= header.psh ? kPsh : 0;
  flags |= header.ack ? kAck : 0;
  flags |= header.urg ? kUrg : 0;
  flags |= header.ece ? kEce : 0;
  flags |= header.cwr ? kCwr : 0;

  out.u16(header.src_port);
  out.u16(header.dst_port);
  out.u32(header.seqno);
  out.u32(header.ackno);
  out.u8(static_cast<uint8_t>((header_size / 4) << 4));
  out.u8(flags);
  out.u16(header.window);
  out.u16(0);  // checksum, patched below
  out.u16(header.urgent_pointer);

  if (header.mss) {
    out.u8(kMss);
    out.u8(4);
    out.u16(*header.mss);
  }
  if (header.timestamps) {
    if (header.sack_permitted) {
      out.u8(kSackPermitted);
      out.u8(2);
    } else {
      out.u8(kNop);
      out.u8(kNop);
    }
    out.u8(kTimestamps);
    out.u8(10);
    out.u32(header.timestamps->value);
    out.u32(header.timestamps->echo_reply);
  } else if (header.sack_permitted) {
    out.u8(kNop);
    out.u8(kNop);
    out.u8(kSackPermitted);
    out.u8(2);
  }
  if (header.window_scale) {
    out.u8(kNop);
    out.u8(kWindowScale);
    out.u8(3);
    out.u8(*header.window_scale);
  }
  if (blocks > 0) {
    out.u8(kNop);
    out.u8(kNop);
    out.u8(kSack);
    out.u8(static_cast<uint8_t>(2 + 8 * blocks));
    for (size_t i = 0; i < blocks; ++i) {
      out.u32(header.sack[i].left);
      out.u32(header.sack[i].right);
    }
  }
  out.bytes(payload);
  if (!out.ok()) {
    return false;
  }

  InternetChecksum sum;
  add_pseudo_header(sum, src_ip, dst_ip, total);
  sum.add(out.written().substr(start));
  out.patch_u16(start + 16, sum.value());
  return out.ok();
}

}  // namespace tinytcp::wire
