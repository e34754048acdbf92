#pragma once

// Helpers of the whole-host fuzz target (fuzz_host.cc): the peer's side of
// the conversation. FlowTable learns, from every datagram the Host sends, the
// numbers a peer would need to reach deep states (the Host's SND.NXT, its
// RCV.NXT as the ACK field says, its last TSval, and the bytes of its last
// segment for ICMP errors to quote); the free functions build well-formed
// IPv4 datagrams (TCP, ICMP, fragments) with correct checksums, as a peer or
// a router would send them.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "stack/four_tuple.hh"
#include "util/buffer.hh"
#include "wire/icmp.hh"
#include "wire/ipv4.hh"
#include "wire/tcp_header.hh"

namespace tinytcp::fuzz {

// One connection as the fuzzer's peer sees it; tuple is from the Host's side
// (local = the Host).
struct Flow {
  stack::FourTuple tuple;
  uint32_t host_next = 0;   // the Host's SND.NXT: its last seqno + sequence length
  uint32_t host_ack = 0;    // the Host's RCV.NXT, from its last ACK
  uint32_t peer_next = 0;   // what the peer sends next (host_ack or further)
  uint32_t host_tsval = 0;  // to echo in TSecr
  std::string last;         // the Host's last datagram on this flow (its first bytes)
};

class FlowTable {
 public:
  static constexpr size_t kFlows = 8;
  static constexpr size_t kQuotedBytes = 68;  // IPv4 + TCP headers with options, and a little

  // Learns from a TCP datagram the Host sent (already parsed).
  void observe(const wire::Ipv4Header& ip, const wire::TcpView& tcp, std::string_view bytes) {
    const stack::FourTuple tuple{ip.src, tcp.header.src_port, ip.dst, tcp.header.dst_port};
    Flow& f = find_or_add(tuple);
    const uint32_t length = static_cast<uint32_t>(tcp.payload.size()) + (tcp.header.syn ? 1 : 0) +
                            (tcp.header.fin ? 1 : 0);
    f.host_next = tcp.header.seqno + length;
    if (tcp.header.ack) {
      f.host_ack = tcp.header.ackno;
      f.peer_next = tcp.header.ackno;
    }
    if (tcp.header.timestamps) {
      f.host_tsval = tcp.header.timestamps->value;
    }
    f.last.assign(bytes.substr(0, kQuotedBytes));
  }

  // A flow the peer opens (its SYN carries `isn`).
  Flow& open(const stack::FourTuple& tuple, uint32_t isn) {
    Flow& f = find_or_add(tuple);
    f.peer_next = isn + 1;
    return f;
  }

  size_t size() const { return size_; }
  Flow& at(size_t i) { return flows_[i % size_]; }

 private:
  Flow& find_or_add(const stack::FourTuple& tuple) {
    for (size_t i = 0; i < size_; ++i) {
      if (flows_[i].tuple == tuple) {
        return flows_[i];
      }
    }
    Flow& f = flows_[size_ < kFlows ? size_++ : next_++ % kFlows];
    f = Flow{};
    f.tuple = tuple;
    return f;
  }

  std::array<Flow, kFlows> flows_{};
  size_t size_ = 0;
  size_t next_ = 0;
};

// An IPv4 datagram around `payload` (flags, offset and id from `header`).
inline std::string ipv4_datagram(wire::Ipv4Header header, std::string_view payload) {
  header.total_length = static_cast<uint16_t>(wire::Ipv4Header::kMinSize + payload.size());
  std::string out(header.total_length, '\0');
  BufferWriter w(out.data(), out.size());
  wire::serialize(header, w);
  w.bytes(payload);
  return w.ok() ? out : std::string{};
}

inline wire::Ipv4Header ipv4_header(wire::Ipv4Address src, wire::Ipv4Address dst,
                                    uint8_t protocol) {
  wire::Ipv4Header h;
  h.src = src;
  h.dst = dst;
  h.protocol = protocol;
  h.dont_fragment = true;
  return h;
}

// A TCP segment from the flow's peer to the Host, in an IPv4 datagram.
inline std::string tcp_datagram(const stack::FourTuple& tuple, const wire::TcpHeader& header,
                                std::string_view payload) {
  std::string segment(wire::TcpHeader::kMaxSize + payload.size(), '\0');
  BufferWriter w(segment.data(), segment.size());
  if (!wire::serialize_tcp(header, payload, tuple.remote_ip.v4().value, tuple.local_ip.v4().value,
                           w)) {
    return {};
  }
  segment.resize(w.size());
  return ipv4_datagram(
      ipv4_header(tuple.remote_ip.v4(), tuple.local_ip.v4(), wire::TcpHeader::kProtocol), segment);
}

// An ICMP message from `src` to `dst`.
inline std::string icmp_datagram(wire::Ipv4Address src, wire::Ipv4Address dst,
                                 const wire::IcmpMessage& message) {
  std::string icmp(wire::IcmpMessage::kHeaderSize + message.data.size(), '\0');
  BufferWriter w(icmp.data(), icmp.size());
  wire::serialize(message, w);
  return w.ok() ? ipv4_datagram(ipv4_header(src, dst, 1), icmp) : std::string{};
}

// The fragment of `datagram`'s payload at [offset, offset + length) (offset
// a multiple of 8), with `more` as the MF flag and `id` as the IPv4 id.
inline std::string fragment_of(std::string_view datagram, size_t offset, size_t length, bool more,
                               uint16_t id) {
  const auto ip = wire::parse_ipv4(datagram);
  if (!ip || offset > ip->payload.size()) {
    return {};
  }
  wire::Ipv4Header h = ip->header;
  h.dont_fragment = false;
  h.more_fragments = more;
  h.fragment_offset = static_cast<uint16_t>(offset);
  h.id = id;
  return ipv4_datagram(h, ip->payload.substr(offset, length));
}

}  // namespace tinytcp::fuzz
