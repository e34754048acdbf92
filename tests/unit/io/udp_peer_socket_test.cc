// UdpPeerSocket on loopback: one socket exchanging datagrams with several
// peers in one batch each way, UDP GSO runs never crossing peers.

#include "io/udp_peer_socket.hh"

#include <gtest/gtest.h>

#include <poll.h>

#include <map>
#include <string>
#include <vector>

namespace tinytcp::io {
namespace {

UdpSocketConfig loopback(bool offload) {
  UdpSocketConfig c;
  c.local = *UdpEndpoint::parse("127.0.0.1:0");
  c.segmentation_offload = offload;
  return c;
}

void wait_readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 2000), 1);
}

// Everything that arrives within a short while, by sender.
std::map<uint16_t, std::vector<std::string>> drain(UdpPeerSocket& s, size_t expect) {
  std::map<uint16_t, std::vector<std::string>> got;
  size_t n = 0;
  while (n < expect) {
    pollfd p{s.fd(), POLLIN, 0};
    if (::poll(&p, 1, 2000) != 1) {
      break;
    }
    n += s.receive_batch([&](const UdpEndpoint& from,
                             std::string_view packet) { got[from.port].emplace_back(packet); },
                         1024);
  }
  return got;
}

class UdpPeerSocketTest : public ::testing::TestWithParam<bool> {};

TEST_P(UdpPeerSocketTest, OneBatchServesSeveralPeersWithoutMixingThem) {
  UdpPeerSocket server(loopback(GetParam()));
  UdpPeerSocket a(loopback(GetParam()));
  UdpPeerSocket b(loopback(GetParam()));
  const UdpEndpoint to_server = server.local_endpoint();
  const UdpEndpoint ea = a.local_endpoint();
  const UdpEndpoint eb = b.local_endpoint();

  // In: both peers send; the server sees each datagram with its sender.
  const std::string_view hello_a = "hello from a", hello_b = "hello from b";
  a.send_batch(&hello_a, &to_server, 1);
  b.send_batch(&hello_b, &to_server, 1);
  const auto in = drain(server, 2);
  ASSERT_EQ(in.size(), 2u);
  EXPECT_EQ(in.at(ea.port), std::vector<std::string>{"hello from a"});
  EXPECT_EQ(in.at(eb.port), std::vector<std::string>{"hello from b"});

  // Out: equal-sized datagrams in runs for a, b, a: one sendmmsg; with GSO a
  // run goes as one message, but never one that mixes the peers.
  std::vector<std::string> bodies;
  std::vector<UdpEndpoint> to;
  for (int i = 0; i < 12; ++i) {
    const bool for_a = i < 4 || i >= 8;
    bodies.push_back(std::string(1000, static_cast<char>('a' + i)));
    to.push_back(for_a ? ea : eb);
  }
  std::vector<std::string_view> views(bodies.begin(), bodies.end());
  server.send_batch(views.data(), to.data(), views.size());
  EXPECT_EQ(server.stats().packets_sent, 12u);
  if (GetParam()) {
    EXPECT_EQ(server.segmented_sends(), 3u);  // three runs, one message each
  }
  const auto at_a = drain(a, 8);
  const auto at_b = drain(b, 4);
  ASSERT_EQ(at_a.at(to_server.port).size(), 8u);
  ASSERT_EQ(at_b.at(to_server.port).size(), 4u);
  for (size_t i = 0; i < 8; ++i) {
    const char c = static_cast<char>('a' + (i < 4 ? i : i + 4));
    EXPECT_EQ(at_a.at(to_server.port)[i], std::string(1000, c));
  }
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(at_b.at(to_server.port)[i], std::string(1000, static_cast<char>('e' + i)));
  }
}

TEST_P(UdpPeerSocketTest, AFilterRefusesDatagramsAndTheyAreNotHandedUp) {
  UdpPeerSocket server(loopback(GetParam()));
  UdpPeerSocket a(loopback(GetParam()));
  const UdpEndpoint to_server = server.local_endpoint();
  const std::string_view d = "x";
  a.send_batch(&d, &to_server, 1);
  wait_readable(server.fd());
  size_t handed = 0;
  const size_t n = server.receive_batch([&](const UdpEndpoint&, std::string_view) { ++handed; }, 16,
                                        [&](const UdpEndpoint&, std::string_view) {
                                          server.count_drop(UdpDrop::kNotPeer);
                                          return false;
                                        });
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(handed, 0u);
  EXPECT_EQ(server.drops()[UdpDrop::kNotPeer], 1u);
  EXPECT_EQ(server.stats().receive_drops, 1u);
}

INSTANTIATE_TEST_SUITE_P(Offload, UdpPeerSocketTest, ::testing::Bool());

}  // namespace
}  // namespace tinytcp::io
