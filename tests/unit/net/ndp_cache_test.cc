#include "net/ndp_cache.hh"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "util/random.hh"

namespace tinytcp::net {
namespace {

using namespace std::chrono_literals;
using wire::Ipv6Address;
using wire::MacAddress;

Ipv6Address addr(const char* text) {
  return Ipv6Address::parse(text).value();
}

const Ipv6Address kA = addr("fe80::a");
const Ipv6Address kB = addr("fe80::b");
const MacAddress kMacA{{0x02, 0, 0, 0, 0, 0x0a}};
const MacAddress kMacA2{{0x02, 0, 0, 0, 0, 0xaa}};

class RecordingOutput : public NdpCache::Output {
 public:
  struct Sent {
    MacAddress dst;
    std::string packet;
  };
  struct Solicitation {
    Ipv6Address target;
    std::optional<MacAddress> unicast_to;
  };
  void send_packet(const MacAddress& dst, std::string_view packet) override {
    sent.push_back({dst, std::string(packet)});
  }
  void send_solicitation(const Ipv6Address& target, const MacAddress* unicast_to) override {
    solicitations.push_back(
        {target, unicast_to ? std::optional<MacAddress>(*unicast_to) : std::nullopt});
  }
  void on_unreachable(const Ipv6Address& target, std::string_view packet) override {
    unreachable.push_back({target, std::string(packet)});
  }
  std::vector<Sent> sent;
  std::vector<Solicitation> solicitations;
  std::vector<std::pair<Ipv6Address, std::string>> unreachable;
};

class NdpCacheTest : public ::testing::Test {
 protected:
  void make(const NdpCache::Config& config) { cache_ = std::make_unique<NdpCache>(config, out_); }
  void send(const Ipv6Address& ip, const std::string& packet) { cache_->send(ip, packet, now_); }
  void advertise(const Ipv6Address& ip, std::optional<MacAddress> mac, bool solicited,
                 bool override_flag) {
    wire::NeighborAdvertisement na;
    na.target = ip;
    na.target_link_layer = mac;
    na.solicited = solicited;
    na.override_flag = override_flag;
    cache_->on_advertisement(na, now_);
  }
  void hear(const Ipv6Address& ip, const MacAddress& mac) {
    cache_->on_link_layer_address(ip, mac, now_);
  }
  void tick(Duration d) {
    now_ += d;
    cache_->tick(now_);
  }
  std::optional<NeighborState> state(const Ipv6Address& ip) const {
    return cache_->state(ip, now_);
  }
  // Brings kA to REACHABLE with kMacA (a solicited advertisement).
  void make_reachable() {
    send(kA, "first");
    advertise(kA, kMacA, true, true);
    ASSERT_EQ(state(kA), NeighborState::Reachable);
    out_.sent.clear();
    out_.solicitations.clear();
  }
  void make_stale() {
    hear(kA, kMacA);
    ASSERT_EQ(state(kA), NeighborState::Stale);
  }
  uint64_t drops(NdpCacheDrop d) const { return cache_->stats().drops[d]; }

  NdpCache::Config config_;
  RecordingOutput out_;
  std::unique_ptr<NdpCache> cache_ = std::make_unique<NdpCache>(config_, out_);
  Instant now_;
};

TEST_F(NdpCacheTest, MissCreatesIncompleteQueuesAndSolicits) {
  send(kA, "p1");
  EXPECT_EQ(state(kA), NeighborState::Incomplete);
  ASSERT_EQ(out_.solicitations.size(), 1u);
  EXPECT_EQ(out_.solicitations[0].target, kA);
  EXPECT_FALSE(out_.solicitations[0].unicast_to);  // multicast
  EXPECT_TRUE(out_.sent.empty());
  EXPECT_EQ(cache_->queued_packets(kA), 1u);
  EXPECT_EQ(cache_->next_deadline(), now_ + 1s);
  EXPECT_EQ(cache_->link_layer_address(kA), nullptr);
  send(kA, "p2");  // queued, no new solicitation
  EXPECT_EQ(out_.solicitations.size(), 1u);
  EXPECT_EQ(cache_->queued_packets(kA), 2u);
  EXPECT_EQ(cache_->stats().packets_queued, 2u);
}

TEST_F(NdpCacheTest, IncompleteRetransmitsThenGivesUp) {
  send(kA, "p1");
  send(kA, "p2");
  tick(1s - 1ns);
  EXPECT_EQ(out_.solicitations.size(), 1u);
  tick(1ns);
  EXPECT_EQ(out_.solicitations.size(), 2u);
  tick(1s);
  EXPECT_EQ(out_.solicitations.size(), 3u);  // MAX_MULTICAST_SOLICIT
  EXPECT_EQ(state(kA), NeighborState::Incomplete);
  tick(1s);
  EXPECT_EQ(out_.solicitations.size(), 3u);
  EXPECT_FALSE(state(kA));
  ASSERT_EQ(out_.unreachable.size(), 2u);  // §7.2.2: each reported for an ICMPv6 error
  EXPECT_EQ(out_.unreachable[0].first, kA);
  EXPECT_EQ(out_.unreachable[0].second, "p1");
  EXPECT_EQ(out_.unreachable[1].second, "p2");
  EXPECT_EQ(drops(NdpCacheDrop::ResolutionFailed), 2u);
  EXPECT_EQ(cache_->stats().unreachable, 1u);
  EXPECT_EQ(cache_->stats().multicast_solicitations, 3u);
  EXPECT_EQ(cache_->size(), 0u);
  EXPECT_FALSE(cache_->next_deadline());
}

TEST_F(NdpCacheTest, QueueDropsTheOldestWhenFull) {
  config_.queue_packets = 2;
  make(config_);
  send(kA, "p1");
  send(kA, "p2");
  send(kA, "p3");
  EXPECT_EQ(cache_->queued_packets(kA), 2u);
  EXPECT_EQ(drops(NdpCacheDrop::QueueFull), 1u);
  advertise(kA, kMacA, true, false);
  ASSERT_EQ(out_.sent.size(), 2u);
  EXPECT_EQ(out_.sent[0].packet, "p2");
  EXPECT_EQ(out_.sent[1].packet, "p3");
  EXPECT_EQ(out_.sent[0].dst, kMacA);
}

TEST_F(NdpCacheTest, QueueBoundsBytes) {
  config_.queue_bytes = 10;
  make(config_);
  send(kA, std::string(6, 'a'));
  send(kA, std::string(6, 'b'));  // 12 > 10: the first goes
  EXPECT_EQ(cache_->queued_packets(kA), 1u);
  send(kA, std::string(11, 'c'));  // larger than the whole queue
  EXPECT_EQ(drops(NdpCacheDrop::QueueFull), 3u);
  EXPECT_EQ(cache_->queued_packets(kA), 0u);
}

TEST_F(NdpCacheTest, SolicitedAdvertisementMakesIncompleteReachable) {
  send(kA, "p1");
  advertise(kA, kMacA, true, false);
  EXPECT_EQ(state(kA), NeighborState::Reachable);
  ASSERT_NE(cache_->link_layer_address(kA), nullptr);
  EXPECT_EQ(*cache_->link_layer_address(kA), kMacA);
  ASSERT_EQ(out_.sent.size(), 1u);
  EXPECT_EQ(out_.sent[0].packet, "p1");
  EXPECT_EQ(cache_->stats().resolved, 1u);
  send(kA, "p2");  // at once
  EXPECT_EQ(out_.sent.size(), 2u);
  EXPECT_EQ(out_.solicitations.size(), 1u);
  tick(10s);  // no retransmissions once resolved
  EXPECT_EQ(out_.solicitations.size(), 1u);
}

TEST_F(NdpCacheTest, UnsolicitedAdvertisementMakesIncompleteStale) {
  send(kA, "p1");
  advertise(kA, kMacA, false, true);
  EXPECT_EQ(state(kA), NeighborState::Stale);
  EXPECT_EQ(out_.sent.size(), 1u);
}

TEST_F(NdpCacheTest, AdvertisementWithoutLinkLayerLeavesIncomplete) {
  send(kA, "p1");
  advertise(kA, std::nullopt, true, true);
  EXPECT_EQ(state(kA), NeighborState::Incomplete);
  EXPECT_EQ(drops(NdpCacheDrop::NoLinkLayer), 1u);
  EXPECT_TRUE(out_.sent.empty());
}

TEST_F(NdpCacheTest, AdvertisementForUnknownAddressIsIgnored) {
  advertise(kA, kMacA, true, true);
  EXPECT_FALSE(state(kA));
  EXPECT_EQ(drops(NdpCacheDrop::UnknownAdvertised), 1u);
}

TEST_F(NdpCacheTest, ReachableTurnsStaleAfterReachableTime) {
  make_reachable();
  now_ += 30s - 1ns;
  EXPECT_EQ(state(kA), NeighborState::Reachable);
  tick(1ns);
  EXPECT_EQ(state(kA), NeighborState::Stale);
  EXPECT_FALSE(cache_->next_deadline());  // lazily: no timer for it
}

TEST_F(NdpCacheTest, StaleSendEntersDelayThenProbesThenGivesUp) {
  make_stale();
  send(kA, "p1");
  EXPECT_EQ(state(kA), NeighborState::Delay);
  ASSERT_EQ(out_.sent.size(), 1u);  // sent at once to the stale address
  EXPECT_EQ(out_.sent[0].dst, kMacA);
  EXPECT_EQ(cache_->next_deadline(), now_ + 5s);
  tick(5s - 1ns);
  EXPECT_EQ(state(kA), NeighborState::Delay);
  EXPECT_TRUE(out_.solicitations.empty());
  tick(1ns);
  EXPECT_EQ(state(kA), NeighborState::Probe);
  ASSERT_EQ(out_.solicitations.size(), 1u);
  EXPECT_EQ(out_.solicitations[0].unicast_to, kMacA);  // unicast
  send(kA, "p2");                                      // PROBE still sends
  EXPECT_EQ(out_.sent.size(), 2u);
  tick(1s);
  tick(1s);
  EXPECT_EQ(out_.solicitations.size(), 3u);  // MAX_UNICAST_SOLICIT
  EXPECT_EQ(cache_->stats().unicast_solicitations, 3u);
  tick(1s);
  EXPECT_FALSE(state(kA));  // §7.3.3: deleted
  EXPECT_EQ(cache_->stats().unreachable, 1u);
  EXPECT_TRUE(out_.unreachable.empty());  // nothing was waiting
}

TEST_F(NdpCacheTest, ConfirmationDuringDelayMakesReachable) {
  make_stale();
  send(kA, "p1");
  cache_->confirm_reachable(kA, now_);
  EXPECT_EQ(state(kA), NeighborState::Reachable);
  tick(5s);
  EXPECT_EQ(state(kA), NeighborState::Reachable);
  EXPECT_TRUE(out_.solicitations.empty());
}

TEST_F(NdpCacheTest, SolicitedAdvertisementDuringProbeMakesReachable) {
  make_stale();
  send(kA, "p1");
  tick(5s);
  ASSERT_EQ(state(kA), NeighborState::Probe);
  advertise(kA, kMacA, true, false);
  EXPECT_EQ(state(kA), NeighborState::Reachable);
  tick(3s);
  EXPECT_EQ(out_.solicitations.size(), 1u);
}

TEST_F(NdpCacheTest, ConfirmationIsIgnoredWhileIncompleteOrAbsent) {
  cache_->confirm_reachable(kA, now_);
  EXPECT_FALSE(state(kA));
  send(kA, "p1");
  cache_->confirm_reachable(kA, now_);
  EXPECT_EQ(state(kA), NeighborState::Incomplete);
}

// RFC 4861 Appendix C, advertisements to an entry that is not INCOMPLETE.
TEST_F(NdpCacheTest, AdvertisementWithoutOverrideAndANewAddress) {
  make_reachable();
  advertise(kA, kMacA2, false, false);  // REACHABLE -> STALE, address kept
  EXPECT_EQ(state(kA), NeighborState::Stale);
  EXPECT_EQ(*cache_->link_layer_address(kA), kMacA);
  advertise(kA, kMacA2, false, false);  // STALE: unchanged
  EXPECT_EQ(state(kA), NeighborState::Stale);
  EXPECT_EQ(*cache_->link_layer_address(kA), kMacA);
  advertise(kA, kMacA2, true, false);  // solicited, still no override: unchanged
  EXPECT_EQ(state(kA), NeighborState::Stale);
  EXPECT_EQ(*cache_->link_layer_address(kA), kMacA);
}

TEST_F(NdpCacheTest, SolicitedAdvertisementWithoutOverrideAndANewAddressDemotesReachable) {
  make_reachable();
  advertise(kA, kMacA2, true, false);
  EXPECT_EQ(state(kA), NeighborState::Stale);
  EXPECT_EQ(*cache_->link_layer_address(kA), kMacA);
}

TEST_F(NdpCacheTest, UnsolicitedOverrideWithANewAddress) {
  make_reachable();
  advertise(kA, kMacA2, false, true);
  EXPECT_EQ(state(kA), NeighborState::Stale);
  EXPECT_EQ(*cache_->link_layer_address(kA), kMacA2);
}

TEST_F(NdpCacheTest, SolicitedOverrideWithANewAddress) {
  make_stale();
  advertise(kA, kMacA2, true, true);
  EXPECT_EQ(state(kA), NeighborState::Reachable);
  EXPECT_EQ(*cache_->link_layer_address(kA), kMacA2);
}

TEST_F(NdpCacheTest, SolicitedWithoutLinkLayerConfirms) {
  make_stale();
  advertise(kA, std::nullopt, true, false);
  EXPECT_EQ(state(kA), NeighborState::Reachable);
  EXPECT_EQ(*cache_->link_layer_address(kA), kMacA);
}

TEST_F(NdpCacheTest, UnsolicitedWithTheSameAddressChangesNothing) {
  make_reachable();
  advertise(kA, kMacA, false, true);
  EXPECT_EQ(state(kA), NeighborState::Reachable);
  now_ += 30s;
  ASSERT_EQ(state(kA), NeighborState::Stale);
  advertise(kA, kMacA, false, false);
  EXPECT_EQ(state(kA), NeighborState::Stale);
}

TEST_F(NdpCacheTest, HeardAddressCreatesStale) {
  hear(kA, kMacA);
  EXPECT_EQ(state(kA), NeighborState::Stale);
  EXPECT_EQ(*cache_->link_layer_address(kA), kMacA);
  EXPECT_TRUE(out_.solicitations.empty());
}

TEST_F(NdpCacheTest, HeardAddressResolvesIncompleteToStale) {
  send(kA, "p1");
  hear(kA, kMacA);
  EXPECT_EQ(state(kA), NeighborState::Stale);
  ASSERT_EQ(out_.sent.size(), 1u);
  EXPECT_EQ(out_.sent[0].dst, kMacA);
  tick(5s);
  EXPECT_EQ(out_.solicitations.size(), 1u);  // no more retransmissions
}

TEST_F(NdpCacheTest, HeardNewAddressMakesReachableStale) {
  make_reachable();
  hear(kA, kMacA);  // the same address: unchanged
  EXPECT_EQ(state(kA), NeighborState::Reachable);
  hear(kA, kMacA2);
  EXPECT_EQ(state(kA), NeighborState::Stale);
  EXPECT_EQ(*cache_->link_layer_address(kA), kMacA2);
}

TEST_F(NdpCacheTest, FullTableReclaimsAStaleEntry) {
  config_.max_entries = 2;
  make(config_);
  hear(kA, kMacA);
  send(kB, "b");
  send(addr("fe80::c"), "c");  // kA (STALE) gives way
  EXPECT_FALSE(state(kA));
  EXPECT_EQ(state(addr("fe80::c")), NeighborState::Incomplete);
  send(addr("fe80::d"), "d");  // both INCOMPLETE: refused
  EXPECT_FALSE(state(addr("fe80::d")));
  EXPECT_EQ(drops(NdpCacheDrop::TableFull), 1u);
  EXPECT_EQ(cache_->size(), 2u);
}

TEST_F(NdpCacheTest, DeletionsKeepTheOthersFindable) {
  config_.max_entries = 64;
  make(config_);
  const uint64_t seed = seed_from_env("TINYTCP_SEED", 13);
  Rng rng(seed);
  std::vector<Ipv6Address> stale;
  std::vector<Ipv6Address> failing;
  for (int i = 0; i < 60; ++i) {
    Ipv6Address a = kA;
    const std::string low = rng.bytes(2);
    a.bytes[14] = static_cast<uint8_t>(low[0]);
    a.bytes[15] = static_cast<uint8_t>(low[1]);
    if (state(a)) {
      continue;
    }
    if (i % 2 == 0) {
      hear(a, MacAddress{{0x02, 0, 0, 0, a.bytes[14], a.bytes[15]}});
      stale.push_back(a);
    } else {
      send(a, "x");
      failing.push_back(a);
    }
  }
  tick(1s);
  tick(1s);
  tick(1s);  // every INCOMPLETE entry gives up after its third solicitation
  EXPECT_EQ(out_.unreachable.size(), failing.size());
  EXPECT_EQ(cache_->size(), stale.size());
  for (const auto& a : stale) {
    ASSERT_EQ(state(a), NeighborState::Stale) << a.to_string() << " seed " << seed;
    EXPECT_EQ(cache_->link_layer_address(a)->bytes[5], a.bytes[15]);
  }
  for (const auto& a : failing) {
    EXPECT_FALSE(state(a)) << a.to_string();
  }
}

TEST_F(NdpCacheTest, EveryDropAndStateHasAName) {
  for (size_t i = 0; i < static_cast<size_t>(NdpCacheDrop::kCount); ++i) {
    EXPECT_STRNE(to_string(static_cast<NdpCacheDrop>(i)), "?");
  }
  for (const auto s : {NeighborState::Incomplete, NeighborState::Reachable, NeighborState::Stale,
                       NeighborState::Delay, NeighborState::Probe}) {
    EXPECT_STRNE(to_string(s), "?");
  }
}

}  // namespace
}  // namespace tinytcp::net
