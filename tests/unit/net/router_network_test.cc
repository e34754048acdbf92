// A simulated network of three routers and three hosts on four Ethernet
// segments, on a manual clock: datagrams cross it end to end through ARP,
// the tries and TTL handling, and ICMP comes back to the sender.
//
//   A 10.1.0.10 --[seg 1]-- R1 --[seg 12]-- R2 --[seg 23]-- R3 --[seg 3]-- B 10.3.0.10
//                                            |
//                                         [seg 2]-- C 10.2.0.10

#include <gtest/gtest.h>

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "net/router.hh"
#include "unit/net/net_test_util.hh"
#include "util/random.hh"
#include "wire/icmp.hh"

namespace tinytcp::net {
namespace {

using namespace std::chrono_literals;
using test::ip;
using wire::Ipv4Address;
using wire::MacAddress;

class Network;

// One Ethernet segment: a frame sent by one port reaches every other port.
class Segment {
 public:
  class Port : public FrameSink {
   public:
    Port(Network& net, Segment& segment) : net_(net), segment_(segment) {}
    void send_frame(std::string_view frame) override;
    std::function<void(std::string_view, Instant)> receive;

   private:
    Network& net_;
    Segment& segment_;
  };
  Port& add_port(Network& net) {
    ports_.push_back(std::make_unique<Port>(net, *this));
    return *ports_.back();
  }
  std::vector<std::unique_ptr<Port>> ports_;
};

class Host : public DatagramSink {
 public:
  Host(Network& net, Segment& segment, Ipv4Address address, Ipv4Address gateway, uint8_t id);
  void on_datagram(std::string_view datagram, size_t, Instant, bool) override {
    received.emplace_back(datagram);
  }
  void send(Ipv4Address dst, const std::string& datagram, Instant now) {
    const bool local = (dst.value & 0xffffff00u) == (iface->ip().value & 0xffffff00u);
    iface->send_datagram(datagram, local ? dst : gateway, now);
  }
  std::unique_ptr<NetworkInterface> iface;
  Ipv4Address gateway;
  std::vector<std::string> received;
};

class Network {
 public:
  struct InFlight {
    Segment::Port* from;
    Segment* segment;
    std::string frame;
  };
  void post(Segment::Port* from, Segment* segment, std::string_view frame) {
    queue_.push_back({from, segment, std::string(frame)});
  }
  // Delivers frames until the network is quiet.
  void run(Instant now) {
    size_t delivered = 0;
    while (!queue_.empty()) {
      const InFlight f = std::move(queue_.front());
      queue_.pop_front();
      for (const auto& port : f.segment->ports_) {
        if (port.get() != f.from && port->receive) {
          port->receive(f.frame, now);
        }
      }
      ASSERT_LT(++delivered, 100000u) << "a forwarding loop";
    }
  }

 private:
  std::deque<InFlight> queue_;
};

void Segment::Port::send_frame(std::string_view frame) {
  net_.post(this, &segment_, frame);
}

Host::Host(Network& net, Segment& segment, Ipv4Address address, Ipv4Address gw, uint8_t id)
    : gateway(gw) {
  NetworkInterfaceConfig c;
  c.mac = {{0x02, 0xaa, 0, 0, 0, id}};
  c.ip = address;
  auto& port = segment.add_port(net);
  iface = std::make_unique<NetworkInterface>(c, port);
  iface->set_datagram_sink(this, 0);
  port.receive = [this](std::string_view frame, Instant now) { iface->receive_frame(frame, now); };
}

class RouterNetworkTest : public ::testing::Test {
 protected:
  RouterNetworkTest() {
    r1_ = make_router(1, {{&seg1_, "10.1.0.1"}, {&seg12_, "10.12.0.1"}});
    r2_ = make_router(2, {{&seg12_, "10.12.0.2"}, {&seg23_, "10.23.0.2"}, {&seg2_, "10.2.0.1"}});
    r3_ = make_router(3, {{&seg23_, "10.23.0.3"}, {&seg3_, "10.3.0.1"}});
    r1_->add_route({ip("10.1.0.0"), 24, std::nullopt, 0});
    r1_->add_route({ip("10.12.0.0"), 24, std::nullopt, 1});
    r1_->add_route({ip("0.0.0.0"), 0, ip("10.12.0.2"), 1});
    r2_->add_route({ip("10.12.0.0"), 24, std::nullopt, 0});
    r2_->add_route({ip("10.23.0.0"), 24, std::nullopt, 1});
    r2_->add_route({ip("10.2.0.0"), 24, std::nullopt, 2});
    r2_->add_route({ip("10.1.0.0"), 16, ip("10.12.0.1"), 0});
    r2_->add_route({ip("10.3.0.0"), 16, ip("10.23.0.3"), 1});
    r3_->add_route({ip("10.23.0.0"), 24, std::nullopt, 0});
    r3_->add_route({ip("10.3.0.0"), 24, std::nullopt, 1});
    r3_->add_route({ip("0.0.0.0"), 0, ip("10.23.0.2"), 0});
    a_ = std::make_unique<Host>(net_, seg1_, ip("10.1.0.10"), ip("10.1.0.1"), 1);
    b_ = std::make_unique<Host>(net_, seg3_, ip("10.3.0.10"), ip("10.3.0.1"), 2);
    c_ = std::make_unique<Host>(net_, seg2_, ip("10.2.0.10"), ip("10.2.0.1"), 3);
    for (auto* r : {r1_.get(), r2_.get(), r3_.get()}) {
      r->start(now_);
    }
    for (auto* h : {a_.get(), b_.get(), c_.get()}) {
      h->iface->start(now_);
    }
    net_.run(now_);
  }

  std::unique_ptr<Router> make_router(uint8_t id,
                                      std::vector<std::pair<Segment*, const char*>> links) {
    auto r = std::make_unique<Router>();
    for (const auto& [segment, address] : links) {
      NetworkInterfaceConfig c;
      c.mac = {{0x02, 0xbb, id, 0, 0, static_cast<uint8_t>(r->interface_count())}};
      c.ip = ip(address);
      auto& port = segment->add_port(net_);
      const size_t index = r->add_interface(c, port);
      Router* router = r.get();
      port.receive = [router, index](std::string_view frame, Instant now) {
        router->receive_frame(index, frame, now);
      };
    }
    return r;
  }

  void advance(Duration d) {
    now_ += d;
    for (auto* r : {r1_.get(), r2_.get(), r3_.get()}) {
      r->tick(now_);
    }
    for (auto* h : {a_.get(), b_.get(), c_.get()}) {
      h->iface->tick(now_);
    }
    net_.run(now_);
  }

  std::string icmp_echo(Ipv4Address src, Ipv4Address dst, uint16_t seq) {
    std::string echo(8 + 4, '\0');
    BufferWriter w(echo.data(), echo.size());
    serialize(wire::IcmpMessage::echo(wire::icmp::kEchoRequest, 1, seq, "ping"), w);
    auto d = test::ipv4_datagram(src, dst, 64, echo.size(), 1);
    d.replace(20, echo.size(), echo);
    return d;
  }

  Instant now_;
  Network net_;
  Segment seg1_, seg12_, seg23_, seg2_, seg3_;
  std::unique_ptr<Router> r1_, r2_, r3_;
  std::unique_ptr<Host> a_, b_, c_;
};

TEST_F(RouterNetworkTest, DatagramsCrossThreeRouters) {
  std::vector<std::string> sent;
  for (uint16_t i = 0; i < 50; ++i) {
    sent.push_back(test::ipv4_datagram(ip("10.1.0.10"), ip("10.3.0.10"), 64, 10 + i, 17, i));
    a_->send(ip("10.3.0.10"), sent.back(), now_);
    net_.run(now_);
  }
  ASSERT_EQ(b_->received.size(), sent.size());
  for (size_t i = 0; i < sent.size(); ++i) {
    const auto v = wire::parse_ipv4(b_->received[i]);
    ASSERT_TRUE(v);
    EXPECT_EQ(v->header.ttl, 61);
    EXPECT_EQ(v->payload, wire::parse_ipv4(sent[i])->payload);
  }
  EXPECT_EQ(r2_->stats().forwarded, sent.size());
}

TEST_F(RouterNetworkTest, EveryHostReachesEveryOther) {
  const uint64_t seed = seed_from_env("TINYTCP_SEED", 5);
  Rng rng(seed);
  Host* hosts[] = {a_.get(), b_.get(), c_.get()};
  std::map<Host*, size_t> expected;
  for (int i = 0; i < 300; ++i) {
    Host* from = hosts[rng.uniform(0, 2)];
    Host* to = hosts[rng.uniform(0, 2)];
    if (from == to) {
      continue;
    }
    from->send(to->iface->ip(),
               test::ipv4_datagram(from->iface->ip(), to->iface->ip(), 64, rng.uniform(0, 1400)),
               now_);
    ++expected[to];
    if (rng.chance(0.3)) {
      net_.run(now_);
    }
    advance(std::chrono::milliseconds(rng.uniform(0, 500)));
  }
  net_.run(now_);
  for (Host* h : hosts) {
    EXPECT_EQ(h->received.size(), expected[h]) << "seed " << seed;
  }
}

TEST_F(RouterNetworkTest, PingAFarRouter) {
  a_->send(ip("10.3.0.1"), icmp_echo(ip("10.1.0.10"), ip("10.3.0.1"), 5), now_);
  net_.run(now_);
  ASSERT_EQ(a_->received.size(), 1u);
  const auto v = wire::parse_ipv4(a_->received[0]);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->header.src, ip("10.3.0.1"));
  const auto m = wire::parse_icmp(v->payload);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->type, wire::icmp::kEchoReply);
  EXPECT_EQ(m->echo_sequence(), 5);
}

TEST_F(RouterNetworkTest, TtlExpiryReportedByTheRouterWhereItRunsOut) {
  // TTL 2: R1 forwards with TTL 1, R2 cannot.
  a_->send(ip("10.3.0.10"), test::ipv4_datagram(ip("10.1.0.10"), ip("10.3.0.10"), 2), now_);
  net_.run(now_);
  EXPECT_TRUE(b_->received.empty());
  ASSERT_EQ(a_->received.size(), 1u);
  const auto v = wire::parse_ipv4(a_->received[0]);
  EXPECT_EQ(v->header.src, ip("10.12.0.2"));
  EXPECT_EQ(wire::parse_icmp(v->payload)->type, wire::icmp::kTimeExceeded);
  EXPECT_EQ(r2_->stats().drops[RouterDrop::TtlExpired], 1u);
}

TEST_F(RouterNetworkTest, UnknownNetworkReportedByTheRouterWithoutRoute) {
  a_->send(ip("172.16.0.1"), test::ipv4_datagram(ip("10.1.0.10"), ip("172.16.0.1")), now_);
  net_.run(now_);
  ASSERT_EQ(a_->received.size(), 1u);
  const auto v = wire::parse_ipv4(a_->received[0]);
  EXPECT_EQ(v->header.src, ip("10.12.0.2"));
  const auto m = wire::parse_icmp(v->payload);
  EXPECT_EQ(m->type, wire::icmp::kDestinationUnreachable);
  EXPECT_EQ(m->code, wire::icmp::kNetUnreachable);
}

TEST_F(RouterNetworkTest, UnansweredArpDropsAfterFiveSeconds) {
  // 10.3.0.99 does not exist: R3 asks, nobody answers, the datagram is dropped.
  a_->send(ip("10.3.0.99"), test::ipv4_datagram(ip("10.1.0.10"), ip("10.3.0.99")), now_);
  net_.run(now_);
  EXPECT_EQ(r3_->interface(1).pending_datagrams(), 1u);
  EXPECT_EQ(r3_->next_deadline(), now_ + 5s);
  advance(5s);
  EXPECT_EQ(r3_->interface(1).pending_datagrams(), 0u);
  EXPECT_EQ(r3_->interface(1).stats().drops[InterfaceDrop::PendingTimeout], 1u);
}

}  // namespace
}  // namespace tinytcp::net
