#include "io/udp_tunnel.hh"

#include <arpa/inet.h>
#include <poll.h>
#include <sys/socket.h>

#include <gtest/gtest.h>

#include <string>
#include <system_error>
#include <vector>

namespace tinytcp::io {
namespace {

constexpr uint32_t kLoopback = 0x7f000001;

// Waits (bounded) until `fd` is readable: loopback delivery is immediate, but
// the test must not assume it happened before the next line.
bool wait_readable(int fd, int timeout_ms = 2000) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, timeout_ms) == 1;
}

UdpTunnelConfig loopback_config() {
  UdpTunnelConfig c;
  c.local = UdpEndpoint{kLoopback, 0};
  return c;
}

class UdpTunnelTest : public ::testing::Test {
 protected:
  // Two tunnels on 127.0.0.1 connected to each other.
  void connect_pair(UdpTunnelConfig a = loopback_config(), UdpTunnelConfig b = loopback_config()) {
    a_.emplace(a);
    b_.emplace(b);
    a_->connect(b_->local_endpoint());
    b_->connect(a_->local_endpoint());
  }
  // Receives until `n` packets arrived (or nothing more comes).
  static std::vector<std::string> receive(UdpTunnel& t, size_t n) {
    std::vector<std::string> got;
    while (got.size() < n && wait_readable(t.fd())) {
      t.receive_batch([&](std::string_view p) { got.emplace_back(p); });
    }
    return got;
  }

  std::optional<UdpTunnel> a_;
  std::optional<UdpTunnel> b_;
};

TEST(UdpEndpointTest, ParsesAndFormats) {
  const auto e = UdpEndpoint::parse("169.254.144.9:5000");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->address, 0xa9fe9009u);
  EXPECT_EQ(e->port, 5000);
  EXPECT_EQ(e->to_string(), "169.254.144.9:5000");
  EXPECT_EQ(UdpEndpoint::parse("0.0.0.0:0")->port, 0);
  EXPECT_EQ(UdpEndpoint::parse("1.2.3.4:65535")->port, 65535);
}

TEST(UdpEndpointTest, RejectsMalformed) {
  for (const char* bad : {"", "1.2.3.4", "1.2.3.4:", ":80", "1.2.3:80", "1.2.3.4:65536",
                          "1.2.3.4:-1", "1.2.3.4:80x", "host:80", "1.2.3.4: 80", "256.1.1.1:1"}) {
    EXPECT_FALSE(UdpEndpoint::parse(bad)) << bad;
  }
}

TEST_F(UdpTunnelTest, CarriesDatagramsBothWays) {
  connect_pair();
  a_->send("from a");
  b_->send("from b");
  EXPECT_EQ(receive(*b_, 1), (std::vector<std::string>{"from a"}));
  EXPECT_EQ(receive(*a_, 1), (std::vector<std::string>{"from b"}));
  EXPECT_EQ(a_->stats().packets_sent, 1u);
  EXPECT_EQ(a_->stats().bytes_sent, 6u);
  EXPECT_EQ(b_->stats().packets_received, 1u);
  EXPECT_EQ(b_->stats().bytes_received, 6u);
  EXPECT_EQ(a_->link_type(), LinkType::kRawIp);
}

TEST_F(UdpTunnelTest, BatchArrivesIntactAndInOrder) {
  connect_pair();
  std::vector<std::string> sent;
  for (int i = 0; i < 300; ++i) {
    sent.push_back(std::to_string(i) + std::string(static_cast<size_t>(i % 1400), 'p'));
  }
  std::vector<std::string_view> views(sent.begin(), sent.end());
  a_->send_batch(views.data(), views.size());
  EXPECT_EQ(a_->stats().packets_sent, 300u);
  EXPECT_EQ(receive(*b_, 300), sent);
  EXPECT_EQ(b_->drops().total(), 0u);
}

// Packets of the given sizes, each filled with its own index so any mix-up shows.
std::vector<std::string> sized_packets(const std::vector<size_t>& sizes) {
  std::vector<std::string> packets;
  for (size_t i = 0; i < sizes.size(); ++i) {
    packets.emplace_back(sizes[i], static_cast<char>('A' + i % 26));
  }
  return packets;
}

class UdpTunnelOffloadTest : public UdpTunnelTest, public ::testing::WithParamInterface<bool> {
 protected:
  void SetUp() override {
    UdpTunnelConfig c = loopback_config();
    c.segmentation_offload = GetParam();
    connect_pair(c, c);
  }
  void expect_carried(const std::vector<std::string>& packets) {
    const std::vector<std::string_view> views(packets.begin(), packets.end());
    const uint64_t before = a_->stats().packets_sent;
    a_->send_batch(views.data(), views.size());
    EXPECT_EQ(a_->stats().packets_sent - before, packets.size());
    EXPECT_EQ(receive(*b_, packets.size()), packets);
  }
};

TEST_P(UdpTunnelOffloadTest, EqualSizedRunArrivesAsSeparateDatagrams) {
  std::vector<size_t> sizes(200, 1000);
  sizes.push_back(300);  // a shorter last packet may end a segmented run
  expect_carried(sized_packets(sizes));
  EXPECT_EQ(b_->stats().packets_received, 201u);
  EXPECT_EQ(b_->stats().bytes_received, 200u * 1000u + 300u);
  if (GetParam()) {
    EXPECT_GT(a_->segmented_sends(), 0u);
  } else {
    EXPECT_EQ(a_->segmented_sends(), 0u);
    EXPECT_EQ(b_->coalesced_receives(), 0u);
  }
}

TEST_P(UdpTunnelOffloadTest, RunBoundariesKept) {
  expect_carried(sized_packets(
      {1000, 1000, 500, 1000, 1000, 0, 1000, 1, 1, 1, 1400, 1400, 1399, 1400, 20, 20}));
}

TEST_P(UdpTunnelOffloadTest, TooBigPacketInsideARunIsTheOnlyLoss) {
  const auto packets = sized_packets({1000, 1000, 1600, 1000, 1000});
  const std::vector<std::string_view> views(packets.begin(), packets.end());
  a_->send_batch(views.data(), views.size());
  EXPECT_EQ(a_->drops()[UdpTunnelDrop::kTooBig], 1u);
  EXPECT_EQ(receive(*b_, 4),
            (std::vector<std::string>{packets[0], packets[1], packets[3], packets[4]}));
}

TEST_P(UdpTunnelOffloadTest, LongBatchOfFullSizePackets) {
  expect_carried(sized_packets(std::vector<size_t>(1000, 1400)));
}

INSTANTIATE_TEST_SUITE_P(Offload, UdpTunnelOffloadTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& param) {
                           return param.param ? "Gso" : "NoGso";
                         });

TEST_F(UdpTunnelTest, ReceiveBatchHonoursLimit) {
  connect_pair();
  for (int i = 0; i < 10; ++i) {
    a_->send("x");
  }
  ASSERT_TRUE(wait_readable(b_->fd()));
  size_t got = 0;
  EXPECT_LE(b_->receive_batch([&](std::string_view) { ++got; }, 3), 3u);
  EXPECT_LE(got, 3u);
}

TEST_F(UdpTunnelTest, EmptyDatagramIsAPacket) {
  connect_pair();
  a_->send("");
  EXPECT_EQ(receive(*b_, 1), (std::vector<std::string>{""}));
}

TEST_F(UdpTunnelTest, SendWithoutPeerIsCountedDrop) {
  UdpTunnel t(loopback_config());
  t.send("nowhere");
  EXPECT_EQ(t.drops()[UdpTunnelDrop::kNoPeer], 1u);
  EXPECT_EQ(t.stats().send_drops, 1u);
  EXPECT_EQ(t.stats().packets_sent, 0u);
}

TEST_F(UdpTunnelTest, PacketLargerThanMtuIsCountedDrop) {
  UdpTunnelConfig c = loopback_config();
  c.mtu = 100;
  connect_pair(c, loopback_config());
  a_->send(std::string(101, 'x'));
  a_->send(std::string(100, 'y'));
  EXPECT_EQ(a_->drops()[UdpTunnelDrop::kTooBig], 1u);
  EXPECT_EQ(receive(*b_, 1), (std::vector<std::string>{std::string(100, 'y')}));
}

TEST_F(UdpTunnelTest, OversizedReceivedDatagramIsCountedDrop) {
  UdpTunnelConfig small = loopback_config();
  small.receive_slot_bytes = 100;
  connect_pair(loopback_config(), small);
  a_->send(std::string(101, 'x'));
  a_->send("fits");
  EXPECT_EQ(receive(*b_, 1), (std::vector<std::string>{"fits"}));
  EXPECT_EQ(b_->drops()[UdpTunnelDrop::kTruncated], 1u);
  EXPECT_EQ(b_->stats().receive_drops, 1u);
}

TEST_F(UdpTunnelTest, RefusedPeerIsALossNotAnError) {
  // A port where nothing listens: the kernel answers with ICMP port
  // unreachable, and the connected socket reports ECONNREFUSED.
  UdpEndpoint dead;
  {
    UdpTunnel probe(loopback_config());
    dead = probe.local_endpoint();
  }
  UdpTunnelConfig c = loopback_config();
  c.peer = dead;
  UdpTunnel t(c);
  for (int i = 0; i < 5; ++i) {
    EXPECT_NO_THROW(t.send("hello?"));
    EXPECT_NO_THROW(t.receive_batch([](std::string_view) { FAIL(); }));
    pollfd p{t.fd(), POLLERR, 0};
    ::poll(&p, 1, 50);
  }
  EXPECT_GE(t.drops()[UdpTunnelDrop::kRefused], 1u);
}

TEST_F(UdpTunnelTest, ListeningSideAdoptsFirstSender) {
  UdpTunnel server(loopback_config());
  EXPECT_FALSE(server.peer());
  UdpTunnelConfig c = loopback_config();
  c.peer = server.local_endpoint();
  UdpTunnel client(c);
  client.send("hello");
  EXPECT_EQ(receive(server, 1), (std::vector<std::string>{"hello"}));
  ASSERT_TRUE(server.peer());
  EXPECT_EQ(*server.peer(), client.local_endpoint());
  server.send("welcome");
  EXPECT_EQ(receive(client, 1), (std::vector<std::string>{"welcome"}));
}

TEST_F(UdpTunnelTest, DatagramsQueuedBeforeTheAdoptionFromOthersAreDropped) {
  UdpTunnel server(loopback_config());
  UdpTunnelConfig c = loopback_config();
  c.peer = server.local_endpoint();
  UdpTunnel first(c);
  UdpTunnel second(c);
  first.send("first");
  // Queued before the server adopts anyone: the kernel's filter comes too
  // late for it, the tunnel's own check does not.
  second.send("second");
  EXPECT_EQ(receive(server, 1), (std::vector<std::string>{"first"}));
  EXPECT_EQ(server.drops()[UdpTunnelDrop::kNotPeer], 1u);
  ASSERT_TRUE(server.peer());
  EXPECT_EQ(*server.peer(), first.local_endpoint());
  EXPECT_EQ(server.receive_batch([](std::string_view) {}), 0u);
  first.send("data");
  EXPECT_EQ(receive(server, 1), (std::vector<std::string>{"data"}));
}

TEST_F(UdpTunnelTest, StrangersAreFilteredOnceConnected) {
  connect_pair();
  UdpTunnelConfig c = loopback_config();
  c.peer = b_->local_endpoint();
  UdpTunnel stranger(c);
  stranger.send("intruder");  // queued first, so it would be read first if it got in
  a_->send("friend");
  EXPECT_EQ(receive(*b_, 1), (std::vector<std::string>{"friend"}));
  EXPECT_EQ(b_->receive_batch([](std::string_view) {}), 0u);
}

TEST_F(UdpTunnelTest, BindingABusyPortThrowsNamingIt) {
  UdpTunnel first(loopback_config());
  UdpTunnelConfig c = loopback_config();
  c.local = first.local_endpoint();
  try {
    UdpTunnel second(c);
    FAIL() << "no exception";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code().value(), EADDRINUSE);
    EXPECT_NE(std::string(e.what()).find(c.local.to_string()), std::string::npos) << e.what();
  }
}

TEST(UdpTunnelDropTest, EveryDropHasAName) {
  for (size_t i = 0; i < static_cast<size_t>(UdpTunnelDrop::kCount); ++i) {
    EXPECT_STRNE(to_string(static_cast<UdpTunnelDrop>(i)), "unknown");
  }
}

}  // namespace
}  // namespace tinytcp::io
