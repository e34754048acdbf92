// The UDP tunnel's outer IPv6 (issue 20): endpoint text and socket addresses,
// UdpPeerSocket over ::1 (batched, GSO runs per peer), a dual-stack socket
// on the unspecified address taking IPv4 and IPv6 peers, and the MTU of a
// tunnel to an IPv6 peer (a full datagram still fits 1500 bytes on the wire).

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "io/udp_endpoint.hh"
#include "io/udp_peer_socket.hh"
#include "io/udp_tunnel.hh"

namespace tinytcp::io {
namespace {

// ::1 can be bound here (a container may run without IPv6).
bool have_ipv6_loopback() {
  const int fd = ::socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return false;
  }
  sockaddr_in6 sa{};
  sa.sin6_family = AF_INET6;
  sa.sin6_addr = in6addr_loopback;
  const bool ok = ::bind(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) == 0;
  ::close(fd);
  return ok;
}

#define REQUIRE_IPV6()                             \
  if (!have_ipv6_loopback()) {                     \
    GTEST_SKIP() << "no IPv6 loopback (::1) here"; \
  }

// Everything that arrives within a short while, by sender's text.
std::map<std::string, std::vector<std::string>> drain(UdpPeerSocket& s, size_t expect) {
  std::map<std::string, std::vector<std::string>> got;
  size_t n = 0;
  while (n < expect) {
    pollfd p{s.fd(), POLLIN, 0};
    if (::poll(&p, 1, 2000) != 1) {
      break;
    }
    n += s.receive_batch(
        [&](const UdpEndpoint& from, std::string_view packet) {
          got[from.to_string()].emplace_back(packet);
        },
        1024);
  }
  return got;
}

UdpSocketConfig at(const char* local, bool offload = true) {
  UdpSocketConfig c;
  c.local = *UdpEndpoint::parse(local);
  c.segmentation_offload = offload;
  return c;
}

TEST(UdpEndpointIpv6Test, ParsesAndFormatsBracketedAddresses) {
  const auto e = UdpEndpoint::parse("[fd00:7474:1::9]:5000");
  ASSERT_TRUE(e);
  EXPECT_TRUE(e->ipv6);
  EXPECT_EQ(e->port, 5000);
  EXPECT_EQ(e->address6[0], 0xfd);
  EXPECT_EQ(e->address6[15], 9);
  EXPECT_EQ(e->to_string(), "[fd00:7474:1::9]:5000");
  EXPECT_EQ(e->address_text(), "fd00:7474:1::9");
  EXPECT_EQ(UdpEndpoint::parse("[::1]:65535")->to_string(), "[::1]:65535");
  EXPECT_TRUE(UdpEndpoint::parse("[::]:0")->is_unspecified());
  EXPECT_FALSE(UdpEndpoint::parse("[::1]:1")->is_unspecified());
  // IPv4 and IPv6 endpoints never compare equal, not even the mapped form.
  EXPECT_NE(*UdpEndpoint::parse("[::ffff:127.0.0.1]:1"), *UdpEndpoint::parse("127.0.0.1:1"));
}

TEST(UdpEndpointIpv6Test, RejectsMalformedIpv6) {
  for (const char* bad : {"::1:80", "[::1]", "[::1]:", "[::1:80", "::1]:80", "[::1]:65536",
                          "[1.2.3.4]:80", "[::g]:80", "[]:80", "[::1]:80x", "[fe80::1%lo]:80",
                          "[::1]]:80", "[[::1]:80", "[::1] :80", "[1:2:3:4:5:6:7:8:9]:80"}) {
    EXPECT_FALSE(UdpEndpoint::parse(bad)) << bad;
  }
}

TEST(UdpEndpointIpv6Test, ParsesAnAddressAlone) {
  EXPECT_EQ(UdpEndpoint::parse_address("::1", 7)->to_string(), "[::1]:7");
  EXPECT_EQ(UdpEndpoint::parse_address("[::1]", 7)->to_string(), "[::1]:7");
  EXPECT_EQ(UdpEndpoint::parse_address("10.0.0.1", 7)->to_string(), "10.0.0.1:7");
  EXPECT_FALSE(UdpEndpoint::parse_address("[10.0.0.1]", 7));
  EXPECT_FALSE(UdpEndpoint::parse_address("::1:", 7));
  EXPECT_FALSE(UdpEndpoint::parse_address("", 7));
}

TEST(UdpEndpointIpv6Test, SocketAddressesOfEitherFamily) {
  sockaddr_storage sa{};
  const UdpEndpoint v4 = *UdpEndpoint::parse("127.0.0.1:80");
  const UdpEndpoint v6 = *UdpEndpoint::parse("[::1]:80");
  ASSERT_EQ(v4.to_sockaddr(AF_INET, sa), sizeof(sockaddr_in));
  EXPECT_EQ(UdpEndpoint::from_sockaddr(sa), v4);
  // On an IPv6 socket an IPv4 endpoint is IPv4-mapped and reads back as IPv4.
  ASSERT_EQ(v4.to_sockaddr(AF_INET6, sa), sizeof(sockaddr_in6));
  EXPECT_TRUE(IN6_IS_ADDR_V4MAPPED(&reinterpret_cast<const sockaddr_in6&>(sa).sin6_addr));
  EXPECT_EQ(UdpEndpoint::from_sockaddr(sa), v4);
  ASSERT_EQ(v6.to_sockaddr(AF_INET6, sa), sizeof(sockaddr_in6));
  EXPECT_EQ(UdpEndpoint::from_sockaddr(sa), v6);
  // 0.0.0.0 on an IPv6 socket is :: (bind to any address).
  ASSERT_EQ(UdpEndpoint::parse("0.0.0.0:9")->to_sockaddr(AF_INET6, sa), sizeof(sockaddr_in6));
  EXPECT_TRUE(IN6_IS_ADDR_UNSPECIFIED(&reinterpret_cast<const sockaddr_in6&>(sa).sin6_addr));
  // An IPv6 endpoint has no IPv4 socket address.
  EXPECT_EQ(v6.to_sockaddr(AF_INET, sa), 0u);
}

class UdpIpv6SocketTest : public ::testing::TestWithParam<bool> {};

TEST_P(UdpIpv6SocketTest, OneBatchServesSeveralIpv6PeersWithoutMixingThem) {
  REQUIRE_IPV6();
  UdpPeerSocket server(at("[::1]:0", GetParam()));
  UdpPeerSocket a(at("[::1]:0", GetParam()));
  UdpPeerSocket b(at("[::1]:0", GetParam()));
  EXPECT_EQ(server.family(), AF_INET6);
  const UdpEndpoint to_server = server.local_endpoint();
  ASSERT_TRUE(to_server.ipv6);
  const UdpEndpoint ea = a.local_endpoint();
  const UdpEndpoint eb = b.local_endpoint();
  const std::string_view hello_a = "hello from a", hello_b = "hello from b";
  a.send_batch(&hello_a, &to_server, 1);
  b.send_batch(&hello_b, &to_server, 1);
  const auto in = drain(server, 2);
  ASSERT_EQ(in.size(), 2u);
  EXPECT_EQ(in.at(ea.to_string()), std::vector<std::string>{"hello from a"});
  EXPECT_EQ(in.at(eb.to_string()), std::vector<std::string>{"hello from b"});

  // Runs for a, b, a in one sendmmsg; with GSO one message per run.
  std::vector<std::string> bodies;
  std::vector<UdpEndpoint> to;
  for (int i = 0; i < 12; ++i) {
    bodies.push_back(std::string(1000, static_cast<char>('a' + i)));
    to.push_back(i < 4 || i >= 8 ? ea : eb);
  }
  std::vector<std::string_view> views(bodies.begin(), bodies.end());
  server.send_batch(views.data(), to.data(), views.size());
  EXPECT_EQ(server.stats().packets_sent, 12u);
  if (GetParam()) {
    EXPECT_EQ(server.segmented_sends(), 3u);
  }
  const auto at_a = drain(a, 8);
  const auto at_b = drain(b, 4);
  ASSERT_EQ(at_a.at(to_server.to_string()).size(), 8u);
  ASSERT_EQ(at_b.at(to_server.to_string()).size(), 4u);
  EXPECT_EQ(at_b.at(to_server.to_string())[0], std::string(1000, 'e'));
}

TEST_P(UdpIpv6SocketTest, TheUnspecifiedAddressTakesBothFamilies) {
  REQUIRE_IPV6();
  UdpPeerSocket server(at("0.0.0.0:0", GetParam()));
  EXPECT_EQ(server.family(), AF_INET6);
  const uint16_t port = server.local_endpoint().port;
  UdpPeerSocket v4(at("127.0.0.1:0", GetParam()));
  UdpPeerSocket v6(at("[::1]:0", GetParam()));
  const UdpEndpoint to_v4{0x7f000001, port};
  const UdpEndpoint to_v6 = *UdpEndpoint::parse_address("::1", port);
  const std::string_view d4 = "over ipv4", d6 = "over ipv6";
  v4.send_batch(&d4, &to_v4, 1);
  v6.send_batch(&d6, &to_v6, 1);
  const auto in = drain(server, 2);
  // The IPv4 peer is handed up as the IPv4 endpoint it is, not ::ffff:...
  const UdpEndpoint from_v4 = v4.local_endpoint();
  const UdpEndpoint from_v6 = v6.local_endpoint();
  EXPECT_FALSE(from_v4.ipv6);
  ASSERT_EQ(in.count(from_v4.to_string()), 1u) << from_v4.to_string();
  ASSERT_EQ(in.count(from_v6.to_string()), 1u) << from_v6.to_string();
  EXPECT_EQ(in.at(from_v4.to_string()), std::vector<std::string>{"over ipv4"});
  // Replies in one batch reach both.
  const std::string_view replies[] = {"to v4", "to v6"};
  const UdpEndpoint peers[] = {from_v4, from_v6};
  server.send_batch(replies, peers, 2);
  EXPECT_EQ(drain(v4, 1).at(UdpEndpoint{0x7f000001, port}.to_string()),
            std::vector<std::string>{"to v4"});
  EXPECT_EQ(drain(v6, 1).at(to_v6.to_string()), std::vector<std::string>{"to v6"});
}

INSTANTIATE_TEST_SUITE_P(Offload, UdpIpv6SocketTest, ::testing::Bool());

TEST(UdpIpv6SocketTest, AnIpv4OnlySocketCountsAnIpv6Destination) {
  UdpSocketConfig c = at("0.0.0.0:0");
  c.dual_stack = false;
  UdpPeerSocket s(c);
  EXPECT_EQ(s.family(), AF_INET);
  const std::string_view d = "x";
  const UdpEndpoint to = *UdpEndpoint::parse("[::1]:9");
  s.send_batch(&d, &to, 1);
  EXPECT_EQ(s.drops()[UdpDrop::kFamily], 1u);
  EXPECT_EQ(s.stats().send_drops, 1u);
}

// Outer IPv6 + UDP headers are 48 bytes, 20 more than IPv4's 28: the tunnel
// to an IPv6 peer offers 1452 bytes, so its largest datagram is still 1500 on
// the wire; one byte more is refused and counted.
TEST(UdpIpv6TunnelTest, AFullDatagramFits1500OnTheWire) {
  REQUIRE_IPV6();
  UdpTunnelConfig server_config;
  server_config.local = *UdpEndpoint::parse("[::1]:0");
  UdpTunnel server(server_config);
  UdpTunnelConfig client_config;
  client_config.local = *UdpEndpoint::parse("0.0.0.0:0");  // binds [::] for an IPv6 peer
  client_config.peer = server.local_endpoint();
  UdpTunnel client(client_config);
  EXPECT_TRUE(client.local_endpoint().ipv6);
  EXPECT_EQ(client.mtu(), 1452u);
  EXPECT_EQ(client.mtu() + 40 + 8, 1500u);
  const std::string full(client.mtu(), 'f');
  const std::string over(client.mtu() + 1, 'o');
  client.send(full);
  client.send(over);
  EXPECT_EQ(client.stats().packets_sent, 1u);
  EXPECT_EQ(client.drops()[UdpDrop::kTooBig], 1u);
  pollfd p{server.fd(), POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 2000), 1);
  std::vector<std::string> got;
  server.receive_batch([&](std::string_view d) { got.emplace_back(d); });
  EXPECT_EQ(got, std::vector<std::string>{full});
  // The listening side adopted the IPv6 peer: the same 1452 back.
  ASSERT_TRUE(server.peer());
  EXPECT_TRUE(server.peer()->ipv6);
  EXPECT_EQ(server.mtu(), 1452u);
  // An IPv4 tunnel keeps 1472 (+ 20 + 8 = 1500).
  UdpTunnelConfig v4_config;
  v4_config.local = *UdpEndpoint::parse("127.0.0.1:0");
  v4_config.peer = *UdpEndpoint::parse("127.0.0.1:9");
  EXPECT_EQ(UdpTunnel(v4_config).mtu() + 20 + 8, 1500u);
}

TEST(UdpIpv6TunnelTest, AListeningTunnelAdoptsAnIpv6OrAnIpv4Peer) {
  REQUIRE_IPV6();
  for (const char* client_local : {"[::1]:0", "127.0.0.1:0"}) {
    UdpTunnelConfig listen;
    listen.local = *UdpEndpoint::parse("0.0.0.0:0");
    UdpTunnel server(listen);
    const uint16_t port = server.local_endpoint().port;
    UdpTunnelConfig c;
    c.local = *UdpEndpoint::parse(client_local);
    const bool v6 = c.local.ipv6;
    c.peer = v6 ? *UdpEndpoint::parse_address("::1", port) : UdpEndpoint{0x7f000001, port};
    UdpTunnel client(c);
    client.send("hello");
    pollfd p{server.fd(), POLLIN, 0};
    ASSERT_EQ(::poll(&p, 1, 2000), 1) << client_local;
    std::vector<std::string> got;
    server.receive_batch([&](std::string_view d) { got.emplace_back(d); });
    EXPECT_EQ(got, std::vector<std::string>{"hello"}) << client_local;
    ASSERT_TRUE(server.peer());
    EXPECT_EQ(*server.peer(), client.local_endpoint()) << client_local;
    server.send("back");
    p = pollfd{client.fd(), POLLIN, 0};
    ASSERT_EQ(::poll(&p, 1, 2000), 1) << client_local;
    got.clear();
    client.receive_batch([&](std::string_view d) { got.emplace_back(d); });
    EXPECT_EQ(got, std::vector<std::string>{"back"}) << client_local;
  }
}

}  // namespace
}  // namespace tinytcp::io
