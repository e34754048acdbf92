#include "net/route_trie.hh"

#include <gtest/gtest.h>

#include <vector>

#include "net/linear_route_table.hh"
#include "unit/net/net_test_util.hh"
#include "util/random.hh"

namespace tinytcp::net {
namespace {

using test::ip;
using wire::Ipv4Address;

Route route(const char* prefix, uint8_t length, size_t interface) {
  return Route{ip(prefix), length, std::nullopt, interface};
}

Route random_route(Rng& rng, uint8_t min_length = 0) {
  Route r;
  r.prefix_length = static_cast<uint8_t>(rng.uniform(min_length, 32));
  r.prefix.value = static_cast<uint32_t>(rng.next()) & wire::prefix_mask(r.prefix_length);
  r.interface = rng.uniform(0, 7);
  if (rng.chance(0.5)) {
    r.next_hop = Ipv4Address{static_cast<uint32_t>(rng.next())};
  }
  return r;
}

// Addresses that exercise the table: random ones, and ones inside, at the
// edges of and just past random routes' prefixes.
Ipv4Address probe(Rng& rng, const std::vector<Route>& routes) {
  if (routes.empty() || rng.chance(0.3)) {
    return Ipv4Address{static_cast<uint32_t>(rng.next())};
  }
  const Route& r = routes[rng.uniform(0, routes.size() - 1)];
  const uint32_t host = ~wire::prefix_mask(r.prefix_length);
  switch (rng.uniform(0, 3)) {
    case 0:
      return r.prefix;
    case 1:
      return Ipv4Address{r.prefix.value | host};
    case 2:
      return Ipv4Address{r.prefix.value + host + 1};
    default:
      return Ipv4Address{r.prefix.value | (static_cast<uint32_t>(rng.next()) & host)};
  }
}

void expect_same(const Route* got, const Route* want, Ipv4Address a, uint64_t seed) {
  ASSERT_EQ(got == nullptr, want == nullptr) << fmt::format("{} seed {}", a, seed);
  if (want != nullptr) {
    EXPECT_EQ(got->prefix, want->prefix) << fmt::format("{} seed {}", a, seed);
    EXPECT_EQ(got->prefix_length, want->prefix_length) << fmt::format("{} seed {}", a, seed);
    EXPECT_EQ(got->interface, want->interface);
    EXPECT_EQ(got->next_hop, want->next_hop);
  }
}

TEST(RouteTrieTest, EmptyTableMatchesNothing) {
  RouteTrie trie;
  EXPECT_EQ(trie.lookup(ip("1.2.3.4")), nullptr);
  EXPECT_EQ(trie.size(), 0u);
}

TEST(RouteTrieTest, LongestPrefixWins) {
  RouteTrie trie;
  trie.add(route("0.0.0.0", 0, 0));
  trie.add(route("10.0.0.0", 8, 1));
  trie.add(route("10.1.0.0", 16, 2));
  trie.add(route("10.1.2.0", 24, 3));
  trie.add(route("10.1.2.128", 25, 4));
  trie.add(route("10.1.2.200", 32, 5));
  EXPECT_EQ(trie.lookup(ip("11.0.0.0"))->interface, 0u);
  EXPECT_EQ(trie.lookup(ip("10.2.0.0"))->interface, 1u);
  EXPECT_EQ(trie.lookup(ip("10.1.3.0"))->interface, 2u);
  EXPECT_EQ(trie.lookup(ip("10.1.2.127"))->interface, 3u);
  EXPECT_EQ(trie.lookup(ip("10.1.2.128"))->interface, 4u);
  EXPECT_EQ(trie.lookup(ip("10.1.2.200"))->interface, 5u);
  EXPECT_EQ(trie.lookup(ip("10.1.2.201"))->interface, 4u);
}

TEST(RouteTrieTest, ClearsHostBitsAndReplacesSamePrefix) {
  RouteTrie trie;
  trie.add(route("10.1.2.3", 16, 1));
  trie.add(route("10.1.0.0", 16, 2));
  EXPECT_EQ(trie.size(), 1u);
  const Route* r = trie.lookup(ip("10.1.9.9"));
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->prefix, ip("10.1.0.0"));
  EXPECT_EQ(r->interface, 2u);
}

TEST(RouteTrieTest, RemoveRestoresTheShorterMatch) {
  RouteTrie trie;
  trie.add(route("10.0.0.0", 8, 1));
  trie.add(route("10.1.2.0", 24, 2));
  EXPECT_EQ(trie.lookup(ip("10.1.2.3"))->interface, 2u);
  EXPECT_TRUE(trie.remove(ip("10.1.2.0"), 24));
  EXPECT_EQ(trie.lookup(ip("10.1.2.3"))->interface, 1u);
  EXPECT_FALSE(trie.remove(ip("10.1.2.0"), 24));
  EXPECT_FALSE(trie.remove(ip("10.0.0.0"), 9));
  EXPECT_TRUE(trie.remove(ip("10.0.0.0"), 8));
  EXPECT_EQ(trie.lookup(ip("10.1.2.3")), nullptr);
  EXPECT_EQ(trie.size(), 0u);
}

TEST(RouteTrieTest, RejectsPrefixLengthOver32) {
  RouteTrie trie;
  EXPECT_FALSE(trie.add(route("10.0.0.0", 33, 1)));
  EXPECT_FALSE(trie.remove(ip("10.0.0.0"), 33));
  EXPECT_EQ(trie.size(), 0u);
}

TEST(RouteTrieTest, HostRoutesAtEveryByteBoundary) {
  RouteTrie trie;
  trie.add(route("255.255.255.255", 32, 1));
  trie.add(route("0.0.0.0", 32, 2));
  trie.add(route("128.0.0.0", 1, 3));
  EXPECT_EQ(trie.lookup(ip("255.255.255.255"))->interface, 1u);
  EXPECT_EQ(trie.lookup(ip("255.255.255.254"))->interface, 3u);
  EXPECT_EQ(trie.lookup(ip("0.0.0.0"))->interface, 2u);
  EXPECT_EQ(trie.lookup(ip("0.0.0.1")), nullptr);
}

// The trie agrees with the linear table on random tables of 1 to 100,000
// routes.
class RouteTrieRandomTest : public ::testing::TestWithParam<size_t> {};

TEST_P(RouteTrieRandomTest, AgreesWithLinearTable) {
  const size_t n = GetParam();
  const uint64_t seed = seed_from_env("TINYTCP_SEED", 1000 + n);
  Rng rng(seed);
  RouteTrie trie;
  LinearRouteTable linear;
  std::vector<Route> routes;
  for (size_t i = 0; i < n; ++i) {
    // Bias a few tables towards short prefixes, which stress the painting.
    routes.push_back(random_route(rng, n < 100 ? 0 : static_cast<uint8_t>(rng.uniform(0, 16))));
    ASSERT_TRUE(trie.add(routes.back()));
    ASSERT_TRUE(linear.add(routes.back()));
  }
  ASSERT_EQ(trie.size(), linear.size());
  const size_t probes = n >= 10000 ? 300 : 3000;
  for (size_t i = 0; i < probes; ++i) {
    const auto a = probe(rng, routes);
    expect_same(trie.lookup(a), linear.lookup(a), a, seed);
    if (HasFailure()) {
      return;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, RouteTrieRandomTest,
                         ::testing::Values(1, 2, 10, 100, 1000, 10000, 100000));

TEST(RouteTrieTest, AgreesWithLinearTableUnderAddsAndRemoves) {
  const uint64_t seed = seed_from_env("TINYTCP_SEED", 77);
  Rng rng(seed);
  RouteTrie trie;
  LinearRouteTable linear;
  std::vector<Route> routes;
  for (int step = 0; step < 4000; ++step) {
    if (!routes.empty() && rng.chance(0.4)) {
      const size_t i = rng.uniform(0, routes.size() - 1);
      EXPECT_EQ(trie.remove(routes[i].prefix, routes[i].prefix_length),
                linear.remove(routes[i].prefix, routes[i].prefix_length));
      routes[i] = routes.back();
      routes.pop_back();
    } else {
      // Concentrate on a few /16s so blocks are recompiled often.
      Route r = random_route(rng);
      r.prefix.value = (r.prefix.value & 0x0003ffffu) | 0x0a000000u;
      r.prefix.value &= wire::prefix_mask(r.prefix_length);
      routes.push_back(r);
      trie.add(r);
      linear.add(r);
    }
    ASSERT_EQ(trie.size(), linear.size()) << "seed " << seed;
    for (int k = 0; k < 5; ++k) {
      const auto a = probe(rng, routes);
      expect_same(trie.lookup(a), linear.lookup(a), a, seed);
    }
    if (HasFailure()) {
      return;
    }
  }
}

}  // namespace
}  // namespace tinytcp::net
