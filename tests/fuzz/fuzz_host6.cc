// Drives a whole stack::Host with an IPv4 and an IPv6 address through its
// IPv6 receive path (issue 20), on a virtual clock, with a little program
// decoded from the input: raw IPv6 datagrams; valid IPv6+TCP segments to our
// listener or from the peers of our connections, with sequence numbers near
// those the Host last sent; the same behind hop-by-hop or destination
// options, or cut into fragments; ICMPv6 echo requests and Packet Too Big
// quoting the Host's last datagram; time passing; connect and write.
//
// Checks besides the sanitizers: every datagram the Host sends is IPv4 or
// IPv6 that parses, with its upper-layer checksum right, and no IPv6 one
// exceeds 1500 bytes; the socket count stays within its bound.

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stack/host.hh"
#include "util/buffer.hh"
#include "wire/icmpv6.hh"
#include "wire/ipv4.hh"
#include "wire/ipv6.hh"
#include "wire/ipv6_chain.hh"

namespace {

using namespace tinytcp;
using stack::FourTuple;
using stack::IpAddress;

const wire::Ipv6Address kLocal = *wire::Ipv6Address::parse("fd00::1");
const std::array<wire::Ipv6Address, 2> kRemotes = {*wire::Ipv6Address::parse("fd00::2"),
                                                   *wire::Ipv6Address::parse("2001:db8::9")};
constexpr std::array<uint16_t, 2> kLocalPorts = {80, 7};
constexpr size_t kMaxSockets = 64;

struct Input {
  std::string_view data;
  size_t at = 0;
  bool done() const { return at >= data.size(); }
  uint8_t u8() { return at < data.size() ? static_cast<uint8_t>(data[at++]) : 0; }
  uint16_t u16() { return static_cast<uint16_t>((u8() << 8) | u8()); }
  uint32_t u32() { return (uint32_t{u16()} << 16) | u16(); }
  std::string_view bytes(size_t n) {
    n = std::min(n, data.size() - std::min(at, data.size()));
    const std::string_view out = data.substr(at, n);
    at += n;
    return out;
  }
};

std::string ipv6(const wire::Ipv6Address& src, uint8_t next, std::string_view payload) {
  std::string out(wire::Ipv6Header::kSize + payload.size(), '\0');
  BufferWriter w(out.data(), out.size());
  wire::Ipv6Header h;
  h.payload_length = static_cast<uint16_t>(payload.size());
  h.next_header = next;
  h.src = src;
  h.dst = kLocal;
  wire::serialize(h, w);
  w.bytes(payload);
  return out;
}

void check_output(std::string_view d) {
  if (!d.empty() && (static_cast<uint8_t>(d[0]) >> 4) == 4) {
    if (!wire::parse_ipv4(d)) {
      std::abort();
    }
    return;
  }
  const auto ip = wire::parse_ipv6(d);
  if (!ip || d.size() > 1500 || ip->header.src != kLocal) {
    std::abort();
  }
  const uint8_t next = ip->header.next_header;
  if ((next == wire::ipv6::kTcp || next == wire::ipv6::kIcmpv6) &&
      wire::ipv6_upper_layer_checksum(ip->header.src, ip->header.dst, next, ip->payload) != 0) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in{std::string_view(reinterpret_cast<const char*>(data), size)};
  stack::HostConfig config;
  config.address = wire::Ipv4Address::from_octets(10, 0, 0, 1);
  config.ipv6 = kLocal;
  config.secret = "fuzz-host6-secret-0123456789";
  config.max_sockets = kMaxSockets;
  config.tcp.send_buffer_bytes = 16384;
  config.tcp.receive_buffer_bytes = 16384;
  Instant now;
  std::string last_sent;
  std::optional<stack::InboundSegment> last_segment;
  std::string last_segment_bytes;
  stack::Host host(config, [&](std::string_view d) {
    check_output(d);
    last_sent.assign(d);
    if (stack::parse_datagram(d)) {
      last_segment_bytes.assign(d);
      if (auto s = stack::parse_datagram(last_segment_bytes)) {
        last_segment = *s;
      }
    }
  });
  std::vector<stack::SocketId> ids;
  for (const uint16_t port : kLocalPorts) {
    if (const auto l = host.listen(port, 4)) {
      ids.push_back(*l);
    }
  }
  for (int steps = 0; !in.done() && steps < 256; ++steps) {
    const uint8_t op = in.u8();
    switch (op % 8) {
      case 0: {  // raw bytes with version 6
        std::string raw(in.bytes(in.u8()));
        if (!raw.empty()) {
          raw[0] = static_cast<char>(0x60 | (raw[0] & 0x0f));
        }
        host.receive_datagram(raw, now);
        break;
      }
      case 1:
      case 2: {  // a TCP segment, maybe behind options or in fragments
        const size_t how = in.u8();
        FourTuple tuple{IpAddress(kRemotes[how & 1]), static_cast<uint16_t>(40000 + (how >> 1 & 3)),
                        IpAddress(kLocal), kLocalPorts[(how >> 3) & 1]};
        tcp::TcpSegment seg;
        const uint8_t flags = in.u8();
        seg.syn = flags & 1;
        seg.ack = flags & 2;
        seg.fin = flags & 4;
        seg.rst = flags & 8;
        seg.window = in.u16();
        seg.seqno = tcp::Wrap32{in.u32()};
        seg.ackno = tcp::Wrap32{in.u32()};
        if ((how & 0x20) && last_segment) {
          // The peer of our last segment answers near its numbers.
          tuple = last_segment->tuple;
          seg.ackno = last_segment->segment.seqno + uint32_t{in.u8()} % 64;
          seg.seqno = last_segment->segment.ackno + uint32_t{in.u8()} % 64;
        }
        if (flags & 16) {
          seg.options.mss = in.u16();
        }
        const std::string payload(in.bytes(in.u8()));
        seg.payload = payload;
        std::string buf(2000, '\0');
        BufferWriter w(buf.data(), buf.size());
        if (!stack::serialize_datagram(seg, tuple, 64, w)) {
          break;
        }
        std::string d(w.written());
        if (how & 0x40) {  // behind a destination options header with a fuzzed option
          std::string opts{static_cast<char>(wire::ipv6::kTcp), 0, static_cast<char>(in.u8()), 4};
          opts += std::string(in.bytes(4));
          opts.resize(8, '\0');
          d = ipv6(tuple.local_ip.v6(), wire::ipv6::kDestinationOptions,
                   opts + d.substr(wire::Ipv6Header::kSize));
        } else if (how & 0x80) {  // in two fragments, cut at a fuzzed multiple of 8
          const std::string body = d.substr(wire::Ipv6Header::kSize);
          const size_t cut = std::min<size_t>(body.size(), 8 * (size_t{in.u8()} % 8));
          const uint32_t id = in.u8();
          for (const bool first : {true, false}) {
            std::string f(8, '\0');
            BufferWriter fw(f.data(), f.size());
            wire::serialize(
                wire::Ipv6FragmentHeader{wire::ipv6::kTcp, static_cast<uint16_t>(first ? 0 : cut),
                                         first, id},
                fw);
            const std::string piece = first ? body.substr(0, cut) : body.substr(cut);
            host.receive_datagram(ipv6(tuple.local_ip.v6(), wire::ipv6::kFragment, f + piece), now);
          }
          break;
        }
        host.receive_datagram(d, now);
        break;
      }
      case 3: {  // ICMPv6: echo or Packet Too Big about our last datagram
        wire::Icmpv6Message m;
        const size_t kind = in.u8();
        if (kind & 1) {
          m = wire::Icmpv6Message::echo(wire::icmpv6::kEchoRequest, in.u16(), in.u16(),
                                        in.bytes(in.u8()));
        } else {
          m = wire::Icmpv6Message::error(wire::icmpv6::kPacketTooBig, 0, in.u16(), last_sent);
        }
        std::string msg(8 + m.data.size(), '\0');
        BufferWriter w(msg.data(), msg.size());
        wire::serialize(m, kRemotes[kind >> 1 & 1], kLocal, w);
        host.receive_datagram(ipv6(kRemotes[kind >> 1 & 1], wire::ipv6::kIcmpv6, msg), now);
        break;
      }
      case 4:  // time passes
        now += std::chrono::milliseconds(in.u16());
        host.tick(now);
        break;
      case 5:  // to the next deadline
        if (const auto d = host.next_deadline()) {
          now = std::max(now, *d);
          host.tick(now);
        }
        break;
      case 6: {  // the application
        const size_t what = in.u8();
        if (what & 1) {
          if (const auto id = host.connect(IpAddress(kRemotes[what >> 1 & 1]), 80, now)) {
            ids.push_back(*id);
          }
        } else if (!ids.empty()) {
          const stack::SocketId id = ids[(what >> 1) % ids.size()];
          if (const auto a = host.accept(id)) {
            ids.push_back(*a);
          }
          host.write(id, std::string(size_t{in.u8()} * 16, 'w'), now);
          char sink[4096];
          host.read(id, sink, sizeof sink, now);
        }
        break;
      }
      default:
        if (!ids.empty() && (op & 0x80) != 0) {
          host.close(ids[size_t{op} % ids.size()], now);
        }
        break;
    }
    if (host.socket_count() > kMaxSockets) {
      std::abort();
    }
  }
  return 0;
}
