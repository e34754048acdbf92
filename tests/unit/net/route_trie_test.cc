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

// IPv6 (issue 20): the same trie on 128-bit keys.

wire::Ipv6Address addr6(const char* text) {
  return wire::Ipv6Address::parse(text).value();
}

Ipv6Route route6(const char* prefix, uint8_t length, size_t interface) {
  return Ipv6Route{addr6(prefix), length, std::nullopt, interface};
}

// The interface of the route that `dst` matches, or -1.
int match6(Ipv6RouteTrie& trie, const char* dst) {
  const Ipv6Route* r = trie.lookup(addr6(dst));
  return r == nullptr ? -1 : static_cast<int>(r->interface);
}

TEST(Ipv6RouteTrieTest, EmptyTableMatchesNothing) {
  Ipv6RouteTrie trie;
  EXPECT_EQ(match6(trie, "::"), -1);
  EXPECT_EQ(match6(trie, "2001:db8::1"), -1);
}

TEST(Ipv6RouteTrieTest, DefaultRouteMatchesEverything) {
  Ipv6RouteTrie trie;
  ASSERT_TRUE(trie.add(route6("::", 0, 3)));
  for (const char* a :
       {"::", "::1", "2001:db8::1", "fe80::1", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"}) {
    EXPECT_EQ(match6(trie, a), 3) << a;
  }
}

TEST(Ipv6RouteTrieTest, Slash64MatchesItsHostsOnly) {
  Ipv6RouteTrie trie;
  ASSERT_TRUE(trie.add(route6("fd00:1:2:3::", 64, 1)));
  EXPECT_EQ(match6(trie, "fd00:1:2:3::"), 1);
  EXPECT_EQ(match6(trie, "fd00:1:2:3:ffff:ffff:ffff:ffff"), 1);
  EXPECT_EQ(match6(trie, "fd00:1:2:3:1234::5"), 1);
  EXPECT_EQ(match6(trie, "fd00:1:2:4::"), -1);
  EXPECT_EQ(match6(trie, "fd00:1:2:2:ffff:ffff:ffff:ffff"), -1);
  EXPECT_EQ(match6(trie, "fd01:1:2:3::"), -1);
}

TEST(Ipv6RouteTrieTest, Slash128MatchesOneAddress) {
  Ipv6RouteTrie trie;
  ASSERT_TRUE(trie.add(route6("2001:db8::42", 128, 2)));
  EXPECT_EQ(match6(trie, "2001:db8::42"), 2);
  EXPECT_EQ(match6(trie, "2001:db8::43"), -1);
  EXPECT_EQ(match6(trie, "2001:db8::41"), -1);
  EXPECT_EQ(match6(trie, "2001:db8:0:0:1::42"), -1);
}

TEST(Ipv6RouteTrieTest, NestedPrefixesLongestWins) {
  Ipv6RouteTrie trie;
  trie.add(route6("::", 0, 0));
  trie.add(route6("2000::", 3, 1));
  trie.add(route6("2001:db8::", 32, 2));
  trie.add(route6("2001:db8:1::", 48, 3));
  trie.add(route6("2001:db8:1:2::", 64, 4));
  trie.add(route6("2001:db8:1:2::80", 121, 5));
  trie.add(route6("2001:db8:1:2::81", 128, 6));
  EXPECT_EQ(match6(trie, "fd00::1"), 0);
  EXPECT_EQ(match6(trie, "3fff::1"), 1);
  EXPECT_EQ(match6(trie, "2001:db8:ffff::1"), 2);
  EXPECT_EQ(match6(trie, "2001:db8:1:ffff::1"), 3);
  EXPECT_EQ(match6(trie, "2001:db8:1:2::7f"), 4);
  EXPECT_EQ(match6(trie, "2001:db8:1:2::80"), 5);
  EXPECT_EQ(match6(trie, "2001:db8:1:2::ff"), 5);
  EXPECT_EQ(match6(trie, "2001:db8:1:2::81"), 6);
  EXPECT_EQ(match6(trie, "2001:db8:1:2::100"), 4);
  EXPECT_EQ(trie.size(), 7u);
}

TEST(Ipv6RouteTrieTest, ClearsHostBitsAndRejectsLengthOver128) {
  Ipv6RouteTrie trie;
  ASSERT_TRUE(trie.add(route6("fd00:1:2:3:4:5:6:7", 62, 1)));
  const Ipv6Route* r = trie.lookup(addr6("fd00:1:2:0::9"));
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->prefix, addr6("fd00:1:2::"));
  EXPECT_EQ(match6(trie, "fd00:1:2:4::"), -1);
  EXPECT_FALSE(trie.add(route6("fd00::", 129, 2)));
  EXPECT_FALSE(trie.remove(addr6("fd00::"), 129));
  // The same prefix with other host bits replaces the route.
  ASSERT_TRUE(trie.add(route6("fd00:1:2:1::", 62, 7)));
  EXPECT_EQ(trie.size(), 1u);
  EXPECT_EQ(match6(trie, "fd00:1:2:3::1"), 7);
}

TEST(Ipv6RouteTrieTest, RemoveRestoresTheShorterMatch) {
  Ipv6RouteTrie trie;
  trie.add(route6("::", 0, 0));
  trie.add(route6("fd00::", 8, 1));
  trie.add(route6("fd00:aa::", 32, 2));
  trie.add(route6("fd00:aa::1", 128, 3));
  EXPECT_EQ(match6(trie, "fd00:aa::1"), 3);
  ASSERT_TRUE(trie.remove(addr6("fd00:aa::1"), 128));
  EXPECT_EQ(match6(trie, "fd00:aa::1"), 2);
  EXPECT_FALSE(trie.remove(addr6("fd00:aa::1"), 128));
  ASSERT_TRUE(trie.remove(addr6("fd00:aa:ffff::"), 32));  // host bits ignored
  EXPECT_EQ(match6(trie, "fd00:aa::1"), 1);
  ASSERT_TRUE(trie.remove(addr6("fd00::"), 8));
  EXPECT_EQ(match6(trie, "fd00:aa::1"), 0);
  ASSERT_TRUE(trie.remove(addr6("::"), 0));
  EXPECT_EQ(match6(trie, "fd00:aa::1"), -1);
  EXPECT_EQ(trie.size(), 0u);
}

// A reference: the longest matching prefix by scanning every route.
const Ipv6Route* linear_match6(const std::vector<Ipv6Route>& routes, const wire::Ipv6Address& a) {
  const Ipv6Route* best = nullptr;
  for (const auto& r : routes) {
    if (a.in_prefix(r.prefix, r.prefix_length) &&
        (best == nullptr || r.prefix_length > best->prefix_length)) {
      best = &r;
    }
  }
  return best;
}

TEST(Ipv6RouteTrieTest, AgreesWithLinearScanUnderAddsAndRemoves) {
  const uint64_t seed = seed_from_env("TINYTCP_SEED", 66);
  Rng rng(seed);
  Ipv6RouteTrie trie;
  std::vector<Ipv6Route> routes;  // distinct (prefix, length)
  const auto random_address = [&rng] {
    wire::Ipv6Address a;
    // Few distinct top bytes and nibbles, so prefixes nest and share nodes.
    for (size_t i = 0; i < 16; ++i) {
      a.bytes[i] = static_cast<uint8_t>(rng.chance(0.7) ? rng.uniform(0, 3) : rng.uniform(0, 255));
    }
    return a;
  };
  for (int step = 0; step < 800; ++step) {
    if (!routes.empty() && rng.chance(0.3)) {
      const size_t i = rng.uniform(0, routes.size() - 1);
      ASSERT_TRUE(trie.remove(routes[i].prefix, routes[i].prefix_length));
      routes[i] = routes.back();
      routes.pop_back();
    } else {
      Ipv6Route r;
      r.prefix_length = static_cast<uint8_t>(rng.uniform(0, 128));
      r.prefix = Ipv6TrieKey::masked(random_address(), r.prefix_length);
      r.interface = static_cast<size_t>(step);
      trie.add(r);
      bool replaced = false;
      for (auto& old : routes) {
        if (old.prefix == r.prefix && old.prefix_length == r.prefix_length) {
          old = r;
          replaced = true;
        }
      }
      if (!replaced) {
        routes.push_back(r);
      }
    }
    ASSERT_EQ(trie.size(), routes.size()) << "seed " << seed;
    for (int k = 0; k < 5; ++k) {
      wire::Ipv6Address a = random_address();
      if (!routes.empty() && rng.chance(0.7)) {
        // Inside a route: its prefix, then random host bits.
        const auto& r = routes[rng.uniform(0, routes.size() - 1)];
        for (unsigned bit = 0; bit < r.prefix_length; ++bit) {
          const auto mask = static_cast<uint8_t>(0x80u >> (bit % 8));
          a.bytes[bit / 8] =
              static_cast<uint8_t>((a.bytes[bit / 8] & ~mask) | (r.prefix.bytes[bit / 8] & mask));
        }
      }
      const Ipv6Route* got = trie.lookup(a);
      const Ipv6Route* want = linear_match6(routes, a);
      ASSERT_EQ(got == nullptr, want == nullptr) << a.to_string() << " seed " << seed;
      if (want != nullptr) {
        EXPECT_EQ(got->prefix, want->prefix) << a.to_string() << " seed " << seed;
        EXPECT_EQ(got->prefix_length, want->prefix_length) << a.to_string() << " seed " << seed;
        EXPECT_EQ(got->interface, want->interface);
      }
    }
    if (HasFailure()) {
      return;
    }
  }
}

}  // namespace
}  // namespace tinytcp::net
