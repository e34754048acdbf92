// Speed of the network layer: longest-prefix lookups (trie and linear
// table), whole-datagram forwarding through Router::route() with a warm ARP
// cache and with every destination an ARP miss, and IPv4 parse + checksum.
// Every benchmark reports items_per_second (lookups, datagrams or parses)
// and checks that the work was done.

#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "net/frame_sink.hh"
#include "net/linear_route_table.hh"
#include "net/route_trie.hh"
#include "net/router.hh"
#include "util/buffer.hh"
#include "util/random.hh"
#include "wire/ipv4.hh"

namespace tinytcp::net {
namespace {

using namespace std::chrono_literals;
using wire::Ipv4Address;

// `n` routes with prefix lengths uniform in 1..32 (plus a default route),
// on `interfaces` interfaces, with gateways from `gateways` when not empty.
std::vector<Route> random_routes(size_t n, uint64_t seed, size_t interfaces,
                                 const std::vector<Ipv4Address>& gateways) {
  Rng rng(seed);
  std::vector<Route> routes;
  routes.reserve(n + 1);
  routes.push_back({Ipv4Address{}, 0, std::nullopt, 0});
  for (size_t i = 0; i < n; ++i) {
    Route r;
    r.prefix_length = static_cast<uint8_t>(rng.uniform(1, 32));
    r.prefix.value = static_cast<uint32_t>(rng.next()) & wire::prefix_mask(r.prefix_length);
    if (!gateways.empty()) {
      const size_t g = rng.uniform(0, gateways.size() - 1);
      r.next_hop = gateways[g];
      r.interface = g % interfaces;
    } else {
      r.interface = rng.uniform(0, interfaces - 1);
    }
    routes.push_back(r);
  }
  if (!gateways.empty()) {
    routes[0].next_hop = gateways[0];
  }
  return routes;
}

std::vector<Ipv4Address> random_addresses(size_t n, uint64_t seed) {
  Rng rng(seed);
  std::vector<Ipv4Address> out(n);
  for (auto& a : out) {
    a.value = static_cast<uint32_t>(rng.next());
  }
  return out;
}

constexpr size_t kBatch = 1 << 16;  // lookups per iteration, from a fixed random set

void bm_lookup(benchmark::State& state, RouteTable& table, size_t routes) {
  for (const auto& r : random_routes(routes, 1, 4, {})) {
    table.add(r);
  }
  const auto addresses = random_addresses(kBatch, 2);
  table.lookup(addresses[0]);  // compiles the trie outside the timed loop
  uint64_t found = 0;
  for (auto _ : state) {
    for (const auto a : addresses) {
      const Route* r = table.lookup(a);
      benchmark::DoNotOptimize(r);
      found += r != nullptr ? 1u : 0u;
    }
  }
  // The default route matches everything.
  if (found != kBatch * static_cast<uint64_t>(state.iterations())) {
    state.SkipWithError("a lookup found no route");
  }
  state.SetItemsProcessed(static_cast<int64_t>(kBatch) * state.iterations());
}

void bm_lookup_trie(benchmark::State& state, size_t routes) {
  RouteTrie trie;
  bm_lookup(state, trie, routes);
  state.counters["compiled_MiB"] = static_cast<double>(trie.compiled_bytes()) / (1 << 20);
}

void bm_lookup_linear(benchmark::State& state, size_t routes) {
  LinearRouteTable table;
  bm_lookup(state, table, routes);
}

// A path-compressed binary (Patricia-style) trie, built once from a route
// list: only here, to measure the alternative to RouteTrie's 16-8-8 layout
// (docs/net.md). Nodes with a route or two children are kept; the others are
// skipped, and each kept node checks the bits it skipped.
class PathCompressedTrie {
 public:
  explicit PathCompressedTrie(const std::vector<Route>& routes) : routes_(routes) {
    std::vector<BinaryNode> bin(1);
    for (size_t i = 0; i < routes.size(); ++i) {
      int32_t n = 0;
      for (unsigned depth = 0; depth < routes[i].prefix_length; ++depth) {
        const unsigned bit = (routes[i].prefix.value >> (31 - depth)) & 1;
        if (bin[static_cast<size_t>(n)].child[bit] < 0) {
          bin[static_cast<size_t>(n)].child[bit] = static_cast<int32_t>(bin.size());
          bin.emplace_back();
        }
        n = bin[static_cast<size_t>(n)].child[bit];
      }
      bin[static_cast<size_t>(n)].route = static_cast<int32_t>(i);
    }
    root_ = compress(bin, 0, 0, 0);
  }

  const Route* lookup(Ipv4Address dst) const {
    const uint32_t a = dst.value;
    int32_t best = -1;
    int32_t n = root_;
    while (n >= 0) {
      const Node& c = nodes_[static_cast<size_t>(n)];
      if (((a ^ c.prefix) & wire::prefix_mask(c.length)) != 0) {
        break;
      }
      if (c.route >= 0) {
        best = c.route;
      }
      if (c.length == 32) {
        break;
      }
      n = c.child[(a >> (31 - c.length)) & 1];
    }
    return best < 0 ? nullptr : &routes_[static_cast<size_t>(best)];
  }

 private:
  struct BinaryNode {
    int32_t child[2] = {-1, -1};
    int32_t route = -1;
  };
  struct Node {
    uint32_t prefix;
    uint32_t length;
    int32_t child[2];
    int32_t route;
  };

  int32_t compress(const std::vector<BinaryNode>& bin, int32_t n, uint32_t prefix,
                   uint32_t length) {
    // Skip single-child nodes without a route.
    for (;;) {
      const BinaryNode& b = bin[static_cast<size_t>(n)];
      const bool both = b.child[0] >= 0 && b.child[1] >= 0;
      if (b.route >= 0 || both || (b.child[0] < 0 && b.child[1] < 0)) {
        break;
      }
      const unsigned bit = b.child[0] >= 0 ? 0 : 1;
      prefix |= bit << (31 - length);
      ++length;
      n = b.child[bit];
    }
    const auto index = static_cast<int32_t>(nodes_.size());
    nodes_.push_back({prefix, length, {-1, -1}, bin[static_cast<size_t>(n)].route});
    for (unsigned bit = 0; bit < 2; ++bit) {
      const int32_t c = bin[static_cast<size_t>(n)].child[bit];
      if (c >= 0) {
        const int32_t k = compress(bin, c, prefix | (bit << (31 - length)), length + 1);
        nodes_[static_cast<size_t>(index)].child[bit] = k;
      }
    }
    return index;
  }

  std::vector<Route> routes_;
  std::vector<Node> nodes_;
  int32_t root_ = -1;
};

void bm_lookup_path_compressed(benchmark::State& state, size_t routes) {
  const PathCompressedTrie trie(random_routes(routes, 1, 4, {}));
  const auto addresses = random_addresses(kBatch, 2);
  uint64_t found = 0;
  for (auto _ : state) {
    for (const auto a : addresses) {
      const Route* r = trie.lookup(a);
      benchmark::DoNotOptimize(r);
      found += r != nullptr ? 1u : 0u;
    }
  }
  if (found != kBatch * static_cast<uint64_t>(state.iterations())) {
    state.SkipWithError("a lookup found no route");
  }
  state.SetItemsProcessed(static_cast<int64_t>(kBatch) * state.iterations());
}

// Counts frames instead of sending them.
class CountingSink : public FrameSink {
 public:
  void send_frame(std::string_view frame) override {
    ++frames;
    bytes += frame.size();
    benchmark::DoNotOptimize(frame.data());
  }
  uint64_t frames = 0;
  uint64_t bytes = 0;
};

constexpr size_t kInterfaces = 4;
constexpr size_t kDatagramSize = 64;

// A router with four interfaces and 10,000 random routes (+ default).
struct BenchRouter {
  explicit BenchRouter(bool with_gateways, size_t arp_entries) {
    for (size_t i = 0; i < kInterfaces; ++i) {
      NetworkInterfaceConfig c;
      c.mac = {{0x02, 0, 0, 0, 0, static_cast<uint8_t>(i)}};
      c.ip = Ipv4Address::from_octets(10, static_cast<uint8_t>(i), 0, 1);
      c.arp.max_entries = arp_entries;
      router.add_interface(c, sinks[i]);
    }
    std::vector<Ipv4Address> gateways;
    if (with_gateways) {
      for (uint8_t g = 0; g < 16; ++g) {
        gateways.push_back(Ipv4Address::from_octets(10, g % kInterfaces, 0, 100 + g));
      }
    }
    for (const auto& r : random_routes(10000, 3, kInterfaces, gateways)) {
      router.add_route(r);
    }
    router.table().lookup(Ipv4Address{});  // compile
    // Warm ARP: each gateway asks for its router address, which teaches the
    // router the gateway's MAC.
    for (size_t g = 0; g < gateways.size(); ++g) {
      const size_t i = g % kInterfaces;
      const wire::MacAddress mac{{0x02, 1, 0, 0, 0, static_cast<uint8_t>(g)}};
      std::string frame(wire::EthernetHeader::kSize + wire::ArpMessage::kSize, '\0');
      BufferWriter w(frame.data(), frame.size());
      serialize(wire::EthernetHeader{wire::MacAddress::broadcast(), mac,
                                     static_cast<uint16_t>(wire::EtherType::kArp)},
                w);
      serialize(
          wire::ArpMessage{
              wire::ArpOpcode::kRequest, mac, gateways[g], {}, router.interface(i).ip()},
          w);
      router.receive_frame(i, frame, now);
    }
  }
  uint64_t frames() const {
    uint64_t n = 0;
    for (const auto& s : sinks) {
      n += s.frames;
    }
    return n;
  }
  uint64_t arp_requests() {
    uint64_t n = 0;
    for (size_t i = 0; i < kInterfaces; ++i) {
      n += router.interface(i).stats().arp_requests_sent;
    }
    return n;
  }

  Instant now;
  CountingSink sinks[kInterfaces];
  Router router;
};

// 64-byte UDP datagrams to `destinations`, all in one buffer.
std::string make_datagrams(const std::vector<Ipv4Address>& destinations) {
  std::string all(destinations.size() * kDatagramSize, 'd');
  for (size_t i = 0; i < destinations.size(); ++i) {
    wire::Ipv4Header h;
    h.total_length = kDatagramSize;
    h.protocol = 17;
    h.ttl = 64;
    h.src = Ipv4Address::from_octets(10, 0, 0, 9);
    h.dst = destinations[i];
    BufferWriter w(all.data() + i * kDatagramSize, kDatagramSize);
    serialize(h, w);
  }
  return all;
}

// Distinct unicast destinations outside the router's own 10/8, not loopback.
std::vector<Ipv4Address> random_destinations(size_t n, uint64_t seed) {
  Rng rng(seed);
  std::unordered_set<uint32_t> seen;
  std::vector<Ipv4Address> out;
  out.reserve(n);
  while (out.size() < n) {
    // 11.0.0.0 .. 222.255.255.255
    uint32_t a = static_cast<uint32_t>(rng.uniform(0x0b000000u, 0xdeffffffu));
    if ((a >> 24) == 127) {
      continue;
    }
    if (seen.insert(a).second) {
      out.push_back(Ipv4Address{a});
    }
  }
  return out;
}

void bm_route_warm_arp(benchmark::State& state) {
  BenchRouter b(true, 4096);
  constexpr size_t kCount = 4096;
  const std::string datagrams = make_datagrams(random_destinations(kCount, 4));
  const uint64_t before = b.frames();
  for (auto _ : state) {
    for (size_t i = 0; i < kCount; ++i) {
      b.router.route(std::string_view(datagrams).substr(i * kDatagramSize, kDatagramSize), 0,
                     b.now);
    }
  }
  if (b.frames() - before != kCount * static_cast<uint64_t>(state.iterations()) ||
      b.router.stats().forwarded != b.frames() - before) {
    state.SkipWithError("not every datagram was forwarded at once");
  }
  state.SetItemsProcessed(static_cast<int64_t>(kCount) * state.iterations());
}

// 10,000 random routes, 100,000 datagrams to random destinations, all
// directly attached: every datagram is an ARP miss (a request is sent and
// the datagram queued). Between batches the clock moves 6 s, so the pending
// requests time out (tick() is timed too) and the next batch misses again.
// The datagrams come from a pool of 200,000 (12.8 MB, about what a NIC's
// receive rings hold), so a destination recurs only after two batches, 12 s
// later, when its request has long expired: it is a miss again.
void bm_route_arp_miss(benchmark::State& state) {
  BenchRouter b(false, 1 << 15);
  constexpr size_t kPool = 200000;
  constexpr size_t kBatchSize = 100000;
  const std::string datagrams = make_datagrams(random_destinations(kPool, 5));
  const uint64_t requests_before = b.arp_requests();
  size_t next = 0;
  for (auto _ : state) {
    for (size_t i = 0; i < kBatchSize; ++i) {
      b.router.route(std::string_view(datagrams).substr(next * kDatagramSize, kDatagramSize), 0,
                     b.now);
      next = next + 1 == kPool ? 0 : next + 1;
    }
    b.now += 6s;
    b.router.tick(b.now);
  }
  if (b.arp_requests() - requests_before !=
      kBatchSize * static_cast<uint64_t>(state.iterations())) {
    state.SkipWithError("not every datagram was an ARP miss");
  }
  state.SetItemsProcessed(static_cast<int64_t>(kBatchSize) * state.iterations());
}

void bm_ipv4_parse_verify(benchmark::State& state) {
  constexpr size_t kCount = 1024;
  const std::string datagrams = make_datagrams(random_destinations(kCount, 6));
  uint64_t ok = 0;
  for (auto _ : state) {
    for (size_t i = 0; i < kCount; ++i) {
      const auto v =
          wire::parse_ipv4(std::string_view(datagrams).substr(i * kDatagramSize, kDatagramSize));
      benchmark::DoNotOptimize(v);
      ok += v ? 1u : 0u;
    }
  }
  if (ok != kCount * static_cast<uint64_t>(state.iterations())) {
    state.SkipWithError("a datagram failed to parse");
  }
  state.SetItemsProcessed(static_cast<int64_t>(kCount) * state.iterations());
}

BENCHMARK_CAPTURE(bm_lookup_trie, 10k, 10000)->Name("Router/lookup/trie/routes:10000");
BENCHMARK_CAPTURE(bm_lookup_trie, 1m, 1000000)->Name("Router/lookup/trie/routes:1000000");
BENCHMARK_CAPTURE(bm_lookup_linear, 10k, 10000)->Name("Router/lookup/linear/routes:10000");
BENCHMARK_CAPTURE(bm_lookup_path_compressed, 10k, 10000)
    ->Name("Router/lookup/path_compressed/routes:10000");
BENCHMARK_CAPTURE(bm_lookup_path_compressed, 1m, 1000000)
    ->Name("Router/lookup/path_compressed/routes:1000000");
BENCHMARK(bm_route_warm_arp)->Name("Router/route/warm_arp");
BENCHMARK(bm_route_arp_miss)->Name("Router/route/arp_miss");
BENCHMARK(bm_ipv4_parse_verify)->Name("Ipv4/parse_verify");

}  // namespace
}  // namespace tinytcp::net
