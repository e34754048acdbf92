// Drives PeerHosts (one Host per peer of the UDP tunnel's listening side)
// with datagrams from a handful of peers: raw bytes, valid SYNs, ACKs that
// return (or mangle) the SYN-ACK each peer was last sent, data segments, and
// time passing. Small limits, so eviction, the cookie gate and the peer
// limit are all reached. Odd peers come from an outer IPv6 address, even
// ones from IPv4, two by two on the same port, so only a key's family keeps
// them apart. Checks the table's bounds besides the sanitizers.

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "stack/datagram_codec.hh"
#include "stack/peer_hosts.hh"
#include "util/buffer.hh"
#include "util/check.hh"

namespace {

using namespace tinytcp;
using namespace tinytcp::stack;

const wire::Ipv4Address kServer = wire::Ipv4Address::from_octets(169, 254, 0, 1);
const wire::Ipv4Address kClient = wire::Ipv4Address::from_octets(169, 254, 0, 2);
constexpr uint16_t kPort = 9000;
constexpr size_t kPeers = 8;

std::string datagram_of(const tcp::TcpSegment& s, uint16_t client_port) {
  std::string buf(2048, '\0');
  BufferWriter w(buf.data(), buf.size());
  if (!serialize_datagram(s, FourTuple{kClient, client_port, kServer, kPort}, 64, w)) {
    return {};
  }
  buf.resize(w.size());
  return buf;
}

// Peer `peer`'s outer endpoint: IPv6 for odd peers, IPv4 for even ones, on
// port peer / 2; index_of() turns it back into the peer's number.
PeerKey key_of(uint16_t peer) {
  const auto port = static_cast<uint16_t>(peer / 2);
  if ((peer & 1) != 0) {
    return PeerKey{wire::Ipv6Address::from_groups({0xfd00, 0, 0, 0, 0, 0, 0, 1}), port};
  }
  return PeerKey{wire::Ipv4Address{0x7f000001}, port};
}

size_t index_of(const PeerKey& key) {
  return size_t{key.port} * 2 + (key.address.is_v6() ? 1 : 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  BufferReader in(std::string_view(reinterpret_cast<const char*>(data), size));
  PeerHostsConfig config;
  config.host.address = kServer;
  config.host.secret = "fuzz-secret-0123456789abcdef";
  config.host.tcp.receive_buffer_bytes = 8192;
  config.host.tcp.send_buffer_bytes = 8192;
  config.ports = {kPort};
  config.max_peers = 4;
  config.max_embryonic = 2;
  config.syn_cookies = (in.u8() & 1) != 0;
  // The SYN-ACK each peer was last sent (its ISN and our TSval).
  std::array<uint32_t, kPeers> isn{};
  std::array<uint32_t, kPeers> tsval{};
  PeerHosts peers(config, [&](PeerId, const PeerKey& to, std::string_view d) {
    const auto seg = parse_datagram(d);
    const size_t i = index_of(to);
    if (seg && seg->segment.syn && seg->segment.ack && i < kPeers) {
      isn[i] = seg->segment.seqno.raw();
      tsval[i] = seg->segment.options.timestamps ? seg->segment.options.timestamps->value : 0;
    }
  });
  Instant now;
  while (in.ok() && in.remaining() > 0) {
    const uint8_t op = in.u8();
    const uint16_t peer = static_cast<uint16_t>((op >> 4) % kPeers);
    const PeerKey key = key_of(peer);
    const uint16_t client_port = static_cast<uint16_t>(40000 + (op >> 7));
    tcp::TcpSegment s;
    s.window = in.u16();
    switch (op % 5) {
      case 0: {  // raw bytes
        const size_t n = in.u8();
        const std::string_view bytes = in.bytes(std::min(n, in.remaining()));
        peers.receive(key, bytes, now);
        break;
      }
      case 1: {  // a valid SYN, options at the input's choice
        s.syn = true;
        s.seqno = tcp::Wrap32{in.u32()};
        const uint8_t o = in.u8();
        if (o & 1)
          s.options.mss = static_cast<uint16_t>(in.u16() | 64);
        if (o & 2)
          s.options.window_scale = static_cast<uint8_t>(o >> 4);
        if (o & 4)
          s.options.sack_permitted = true;
        if (o & 8)
          s.options.timestamps = tcp::Timestamps{in.u32(), 0};
        peers.receive(key, datagram_of(s, client_port), now);
        break;
      }
      case 2: {  // an ACK for the last SYN-ACK, maybe mangled
        const uint8_t mangle = in.u8();
        s.ack = true;
        s.seqno = tcp::Wrap32{in.u32()};
        s.ackno = tcp::Wrap32{isn[peer] + 1 + ((mangle & 1) ? in.u32() : 0)};
        if (mangle & 2)
          s.options.timestamps = tcp::Timestamps{in.u32(), tsval[peer]};
        if (mangle & 4)
          s.fin = true;
        const std::string_view payload = in.bytes(std::min<size_t>(mangle >> 3, in.remaining()));
        s.payload = payload;
        peers.receive(key, datagram_of(s, client_port), now);
        break;
      }
      case 3: {  // time passes
        now += std::chrono::milliseconds(in.u16()) * 4;
        peers.tick(now);
        break;
      }
      case 4: {  // any segment, flags and numbers from the input
        const uint8_t flags = in.u8();
        s.syn = flags & 1;
        s.ack = flags & 2;
        s.fin = flags & 4;
        s.rst = flags & 8;
        s.seqno = tcp::Wrap32{in.u32()};
        s.ackno = tcp::Wrap32{in.u32()};
        if (s.syn && s.fin)
          s.fin = false;
        const std::string_view payload = in.bytes(std::min<size_t>(flags >> 4, in.remaining()));
        s.payload = payload;
        peers.receive(key, datagram_of(s, client_port), now);
        break;
      }
    }
    while (const auto accepted = peers.accept()) {
      if (Host* host = peers.host(accepted->peer)) {
        host->write(accepted->socket, "hello", now);
      }
    }
    TINYTCP_CHECK(peers.size() <= config.max_peers);
    TINYTCP_CHECK(peers.embryonic() <= config.max_embryonic);
  }
  return 0;
}
