// Any bytes into a Router with three interfaces: each record is
// [interface][time step][length][frame or datagram], fed either as an Ethernet
// frame through the interface or as a raw datagram into route(). Checks the
// bounds: pending ARP queues, reassembly memory, and that every frame sent is
// a well-formed Ethernet frame that fits the MTU. With bit 0x40 of the
// selector, a frame comes with a LinkOffload made of the record's next 10
// bytes (interface 1 offloads, the others do not): what leaves with a header
// is IPv4 whose header check_ipv4_offload accepts, and plain frames still fit
// the MTU (GSO super-frames towards a plain interface are segmented). Seeds in
// tests/fuzz/seeds/fuzz_router: a TCP super-frame towards interface 1, then 2
// (segments of 500 and 300 bytes), around the next hop's ARP reply.
//
// The routes are the same for every input, so one RouteTrie serves them all
// (SharedTrie): building a trie costs about 20 ms under the sanitizers (its
// per-/16 tables), which held the target to 50 executions a second; the
// interfaces' ARP queues are small for the same reason (and to reach their
// byte limit).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "net/frame_sink.hh"
#include "net/route_trie.hh"
#include "net/router.hh"
#include "util/buffer.hh"
#include "util/check.hh"

namespace {

using namespace tinytcp;

class CheckingSink : public net::FrameSink {
 public:
  void send_frame(std::string_view frame) override {
    const auto eth = wire::parse_ethernet(frame);
    TINYTCP_CHECK(eth);
    TINYTCP_CHECK(eth->payload.size() <= 1500);
    if (eth->header.type == static_cast<uint16_t>(wire::EtherType::kIpv4)) {
      TINYTCP_CHECK(wire::parse_ipv4(eth->payload));
    } else {
      TINYTCP_CHECK(wire::parse_arp(eth->payload));
    }
  }
  void send_offloaded_frame(std::string_view frame, const net::LinkOffload& offload) override {
    const auto eth = wire::parse_ethernet(frame);
    TINYTCP_CHECK(eth);
    TINYTCP_CHECK(eth->header.type == static_cast<uint16_t>(wire::EtherType::kIpv4));
    TINYTCP_CHECK(wire::parse_ipv4(eth->payload));
    TINYTCP_CHECK(!net::check_ipv4_offload(offload, eth->payload, wire::EthernetHeader::kSize));
    if (!offload.gso()) {
      TINYTCP_CHECK(eth->payload.size() <= 1500);
    } else {
      TINYTCP_CHECK(net::gso_header_bytes(eth->payload) + offload.gso_size <= 1500);
    }
  }
};

// The Router's table: lookups go to one trie built once with the routes
// every input adds; adding them again is a no-op.
class SharedTrie : public net::RouteTable {
 public:
  explicit SharedTrie(net::RouteTrie& trie) : trie_(trie) {}
  bool add(const net::Route& route) override {
    static_cast<void>(route);
    return true;
  }
  bool remove(wire::Ipv4Address, uint8_t) override { return false; }
  const net::Route* lookup(wire::Ipv4Address dst) override { return trie_.lookup(dst); }
  size_t size() const override { return trie_.size(); }

 private:
  net::RouteTrie& trie_;
};

std::vector<net::Route> routes() {
  std::vector<net::Route> r;
  for (uint8_t i = 0; i < 3; ++i) {
    r.push_back({wire::Ipv4Address::from_octets(10, 0, i, 0), 24, std::nullopt, i});
  }
  r.push_back({wire::Ipv4Address{}, 0, wire::Ipv4Address::from_octets(10, 0, 1, 2), 1});
  r.push_back({wire::Ipv4Address::from_octets(192, 168, 0, 0), 16, std::nullopt, 7});
  return r;
}

net::RouteTrie& shared_trie() {
  static net::RouteTrie* trie = [] {
    auto* t = new net::RouteTrie;
    for (const auto& r : routes()) {
      t->add(r);
    }
    return t;
  }();
  return *trie;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace std::chrono_literals;
  static CheckingSink sinks[3];
  net::RouterConfig config;
  config.reassembly.max_bytes = 1 << 16;
  net::Router router(config, std::make_unique<SharedTrie>(shared_trie()));
  for (uint8_t i = 0; i < 3; ++i) {
    net::NetworkInterfaceConfig c;
    c.mac = {{0x02, 0, 0, 0, 0, i}};
    c.ip = wire::Ipv4Address::from_octets(10, 0, i, 1);
    c.mtu = i == 2 ? 576 : 1500;
    c.arp.max_entries = 16;
    c.pending_datagrams = 4;
    c.pending_bytes = 4 * 1500;  // small, so the byte limit is reached too
    c.offload = i == 1;
    router.add_interface(c, sinks[i]);
  }
  Instant now;
  router.start(now);
  BufferReader in(std::string_view(reinterpret_cast<const char*>(data), size));
  while (in.ok() && in.remaining() > 0) {
    const uint8_t selector = in.u8();
    now += std::chrono::milliseconds(in.u8()) * 64;
    const auto bytes = in.bytes(std::min<size_t>(in.u16() % 1600, in.remaining()));
    const size_t index = selector % 3;
    if ((selector & 0x80) != 0) {
      router.route(bytes, index, now);
    } else if ((selector & 0x40) != 0 && bytes.size() >= 10) {
      BufferReader h(bytes);
      net::LinkOffload offload;
      offload.flags = h.u8();
      offload.gso_type = h.u8();
      offload.header_length = h.u16();
      offload.gso_size = h.u16();
      offload.checksum_start = h.u16();
      offload.checksum_offset = h.u16();
      router.receive_frame(index, bytes.substr(10), now, &offload);
    } else {
      router.receive_frame(index, bytes, now);
    }
    router.tick(now);
    for (size_t i = 0; i < 3; ++i) {
      TINYTCP_CHECK(router.interface(i).pending_datagrams() <= 4);
      TINYTCP_CHECK(router.interface(i).arp_cache().size() <= 16);
    }
    TINYTCP_CHECK(router.reassembler().bytes_buffered() <= (1u << 16));
    if (const auto t = router.next_deadline()) {
      TINYTCP_CHECK(*t > now);
    }
  }
  return 0;
}
