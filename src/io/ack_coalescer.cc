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

struct PureAck {
  bool ok = false;
  std::string_view flow;  // addresses and ports: 12 bytes
  uint32_t ack = 0;
  bool sack = false;
};

bool has_sack(std::string_view options) {
  BufferReader r(options);
  while (r.remaining() > 0) {
    const uint8_t kind = r.u8();
    if (kind == kOptionEnd) {
      return false;
    }
    if (kind == kOptionNop) {
      continue;
    }
    const uint8_t length = r.u8();
    if (!r.ok() || length < 2) {
      return false;
    }
    if (kind == kOptionSack) {
      return true;
    }
    r.skip(length - 2u);
  }
  return false;
}

PureAck inspect(std::string_view d) {
  PureAck a;
  BufferReader r(d);
  const uint8_t version_ihl = r.u8();
  r.skip(1);
  const uint16_t total = r.u16();
  r.skip(2);
  const uint16_t fragment = r.u16();
  r.skip(1);
  const uint8_t protocol = r.u8();
  r.skip(2);
  const std::string_view addresses = r.bytes(8);
  const std::string_view ports = r.bytes(4);
  r.skip(4);  // seq
  a.ack = r.u32();
  const uint8_t offset = r.u8();
  const uint8_t flags = r.u8();
  if (!r.ok() || version_ihl != 0x45 || total != d.size() || (fragment & 0x3fff) != 0 ||
      protocol != kTcpProtocol || flags != kAck) {
    return a;
  }
  const size_t header = 20 + size_t{static_cast<uint8_t>(offset >> 4)} * 4;
  if (header < 40 || header != d.size()) {
    return a;  // malformed, or it carries data
  }
  a.flow = std::string_view(addresses.data(), addresses.size() + ports.size());
  a.sack = has_sack(d.substr(40));
  a.ok = true;
  return a;
}

}  // namespace

size_t coalesce_acks(std::string_view* datagrams, size_t count) {
  // Newest first: the latest pure ACK of each connection seen so far.
  struct Latest {
    std::string_view flow;
    uint32_t ack;
    bool sack;
  };
  std::array<Latest, kAckCoalescerMaxFlows> latest{};
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
    while (f < flows && latest[f].flow != a.flow) {
      ++f;
    }
    if (f == flows) {
      if (flows < latest.size()) {
        latest[flows++] = Latest{a.flow, a.ack, a.sack};
      }
      continue;
    }
    const auto ahead = static_cast<int32_t>(latest[f].ack - a.ack);  // RFC 1982 order
    if (ahead > 0 || (ahead == 0 && a.sack && latest[f].sack)) {
      keep[i] = false;
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
