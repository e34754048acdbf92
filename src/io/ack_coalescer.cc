#include "io/ack_coalescer.hh"

#include <array>
#include <cstdint>
#include <cstring>

#include "util/buffer.hh"

namespace tinytcp::io {
namespace {

constexpr uint8_t kTcpProtocol = 6;
constexpr uint8_t kAck = 0x10;
constexpr uint8_t kOptionEnd = 0;
constexpr uint8_t kOptionNop = 1;
constexpr uint8_t kOptionSack = 5;  // RFC 2018 §3

constexpr size_t kMaxSackBlocks = 4;  // 40 option bytes hold at most four

// RFC 1982 order of 32-bit sequence numbers.
bool before_or_at(uint32_t a, uint32_t b) {
  return static_cast<int32_t>(b - a) >= 0;
}

struct SackBlock {
  uint32_t left = 0;
  uint32_t right = 0;
};

struct PureAck {
  bool ok = false;
  std::string_view flow;  // addresses and ports: 12 bytes
  uint32_t ack = 0;
  bool sack = false;  // a SACK option is present (even an unreadable one)
  bool exact = true;  // false: a SACK option that could not be read
  std::array<SackBlock, kMaxSackBlocks> blocks{};
  size_t block_count = 0;
};

// Reads the SACK option of `options` (RFC 2018 §3) into `a`.
void read_sack(std::string_view options, PureAck& a) {
  BufferReader r(options);
  while (r.remaining() > 0) {
    const uint8_t kind = r.u8();
    if (kind == kOptionEnd) {
      return;
    }
    if (kind == kOptionNop) {
      continue;
    }
    const uint8_t length = r.u8();
    if (!r.ok() || length < 2) {
      return;
    }
    if (kind == kOptionSack) {
      a.sack = true;
      a.exact = false;
      const size_t n = (length - 2u) / 8;
      if ((length - 2u) % 8 != 0 || n == 0 || n > kMaxSackBlocks) {
        return;  // malformed: never judged covered
      }
      for (size_t i = 0; i < n; ++i) {
        a.blocks[i].left = r.u32();
        a.blocks[i].right = r.u32();
      }
      a.block_count = n;
      a.exact = r.ok();
      return;
    }
    r.skip(length - 2u);
  }
}

// RFC 2883: a first block at or below the cumulative ACK, or inside the
// second block, reports a duplicate segment (D-SACK). The peer uses it to undo
// a spurious retransmission; it is never coalesced away.
bool has_dsack(const PureAck& a) {
  if (a.block_count == 0) {
    return false;
  }
  const SackBlock& first = a.blocks[0];
  if (before_or_at(first.right, a.ack)) {
    return true;
  }
  return a.block_count > 1 && before_or_at(a.blocks[1].left, first.left) &&
         before_or_at(first.right, a.blocks[1].right);
}

// What the ACKs of one connection that stay in the batch tell the peer: the
// newest ACK, and the SACK blocks of the other kept ACKs (newest first, each
// tagged with its ACK), up to kMaxKnownBlocks of them.
constexpr size_t kMaxKnownBlocks = 32;
// How many kept ACKs other than the newest must name a block the newest does
// not list before an older ACK naming it goes.
constexpr size_t kNamedBy = 2;
struct KnownBlock {
  SackBlock block;
  size_t ack = 0;  // which kept ACK named it
};
struct FlowAcks {
  PureAck newest;
  std::array<KnownBlock, kMaxKnownBlocks> known{};
  size_t known_count = 0;
  size_t kept = 0;

  void learn(const PureAck& a) {
    ++kept;
    if (!a.exact) {
      return;
    }
    // A D-SACK's first block reports a duplicate, not data held: left out.
    for (size_t i = has_dsack(a) ? 1 : 0; i < a.block_count; ++i) {
      if (known_count < known.size()) {
        known[known_count++] = KnownBlock{a.blocks[i], kept};
      }
    }
  }
};

bool inside(const SackBlock& outer, const SackBlock& b) {
  return before_or_at(outer.left, b.left) && before_or_at(b.right, outer.right);
}

// True when everything `older` said reaches the peer anyway: its cumulative
// ACK is at or below the newest one, and each of its SACK blocks is below
// that, inside a block of the newest ACK, or inside blocks of kNamedBy other
// kept ACKs.
bool covers(const FlowAcks& later, const PureAck& older) {
  const PureAck& newest = later.newest;
  if (!before_or_at(older.ack, newest.ack)) {
    return false;
  }
  if (!older.sack) {
    return true;
  }
  if (!older.exact || !newest.exact || has_dsack(older)) {
    return false;
  }
  for (size_t i = 0; i < older.block_count; ++i) {
    const SackBlock& b = older.blocks[i];
    if (before_or_at(b.right, newest.ack)) {
      continue;
    }
    bool named_by_newest = false;
    for (size_t j = 0; j < newest.block_count && !named_by_newest; ++j) {
      named_by_newest = inside(newest.blocks[j], b);
    }
    if (named_by_newest) {
      continue;
    }
    // Count kept ACKs, not blocks: one ACK naming it twice is one name.
    size_t named = 0;
    size_t last_ack = 0;
    for (size_t j = 0; j < later.known_count && named < kNamedBy; ++j) {
      if (later.known[j].ack != last_ack && inside(later.known[j].block, b)) {
        ++named;
        last_ack = later.known[j].ack;
      }
    }
    if (named < kNamedBy) {
      return false;
    }
  }
  return true;
}

// Where the TCP header of `d` starts and its flow (addresses and ports: 12
// bytes for IPv4, 36 for IPv6, so the families never match) if `d` is an
// IPv4 datagram without options or fragmentation, or an IPv6 one whose next
// header is TCP, holding exactly the bytes its header says; 0 otherwise.
size_t tcp_offset(std::string_view d, std::string_view& flow) {
  BufferReader r(d);
  const uint8_t first = r.u8();
  if ((first >> 4) == 6) {
    r.skip(3);  // traffic class, flow label
    const uint16_t payload_length = r.u16();
    const uint8_t next_header = r.u8();
    if (!r.ok() || next_header != kTcpProtocol || size_t{payload_length} + 40 != d.size() ||
        d.size() < 44) {
      return 0;
    }
    flow = d.substr(8, 36);
    return 40;
  }
  r.skip(1);
  const uint16_t total = r.u16();
  r.skip(2);
  const uint16_t fragment = r.u16();
  r.skip(1);
  const uint8_t protocol = r.u8();
  if (!r.ok() || first != 0x45 || total != d.size() || (fragment & 0x3fff) != 0 ||
      protocol != kTcpProtocol || d.size() < 24) {
    return 0;
  }
  flow = d.substr(12, 12);
  return 20;
}

PureAck inspect(std::string_view d) {
  PureAck a;
  std::string_view flow;
  const size_t ip = tcp_offset(d, flow);
  if (ip == 0) {
    return a;
  }
  BufferReader r(d);
  r.skip(ip + 8);  // IP header, ports, seq
  a.ack = r.u32();
  const uint8_t offset = r.u8();
  const uint8_t flags = r.u8();
  if (!r.ok() || flags != kAck) {
    return a;
  }
  const size_t header = ip + size_t{static_cast<uint8_t>(offset >> 4)} * 4;
  if (header < ip + 20 || header != d.size()) {
    return a;  // malformed, or it carries data
  }
  a.flow = flow;
  read_sack(d.substr(ip + 20), a);
  a.ok = true;
  return a;
}

}  // namespace

size_t coalesce_acks(std::string_view* datagrams, size_t count) {
  // Walking newest first: per connection, what the ACKs kept so far say.
  std::array<FlowAcks, kAckCoalescerMaxFlows> latest{};
  size_t flows = 0;
  std::array<bool, 1024> keep{};
  // Batches are bounded by the caller; past 1024 nothing is removed.
  if (count > keep.size()) {
    return count;
  }
  for (size_t i = count; i-- > 0;) {
    keep[i] = true;
    const PureAck a = inspect(datagrams[i]);
    if (!a.ok) {
      continue;
    }
    size_t f = 0;
    while (f < flows && latest[f].newest.flow != a.flow) {
      ++f;
    }
    if (f == flows) {
      if (flows < latest.size()) {
        latest[flows++].newest = a;  // its blocks are checked apart from the rest
      }
      continue;
    }
    // A duplicate ACK without SACK counts toward fast retransmit: kept.
    const bool duplicate_without_sack = latest[f].newest.ack == a.ack && !a.sack;
    if (!duplicate_without_sack && covers(latest[f], a)) {
      keep[i] = false;
    } else {
      latest[f].learn(a);
    }
  }
  size_t kept = 0;
  for (size_t i = 0; i < count; ++i) {
    if (keep[i]) {
      datagrams[kept++] = datagrams[i];
    }
  }
  return kept;
}

}  // namespace tinytcp::io
