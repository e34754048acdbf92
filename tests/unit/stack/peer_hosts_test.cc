// PeerHosts: one Host per peer of a many-peer link. Clients are Hosts of their
// own, each behind a PeerKey (its outer address and port), on a manual clock.

#include "stack/peer_hosts.hh"

#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <memory>
#include <string>

#include "stack/datagram_codec.hh"
#include "util/buffer.hh"

namespace tinytcp::stack {
namespace {

using namespace std::chrono_literals;

const wire::Ipv4Address kServer = wire::Ipv4Address::from_octets(169, 254, 0, 1);
const wire::Ipv4Address kClient = wire::Ipv4Address::from_octets(169, 254, 0, 2);
constexpr uint16_t kPort = 9000;

HostConfig host_config(wire::Ipv4Address address) {
  HostConfig c;
  c.address = address;
  // Every client the same secret: the same ephemeral port and ISN, so the
  // inner 4-tuples of different peers are identical.
  c.secret = "0123456789abcdef-peer-hosts-test";
  c.tcp.receive_buffer_bytes = 64 * 1024;
  c.tcp.send_buffer_bytes = 64 * 1024;
  c.tcp.msl = 500ms;
  return c;
}

PeerHostsConfig server_config() {
  PeerHostsConfig c;
  c.host = host_config(kServer);
  c.host.secret.clear();  // fresh per peer
  c.ports = {kPort};
  return c;
}

class PeerHostsTest : public ::testing::Test {
 protected:
  explicit PeerHostsTest(PeerHostsConfig config = server_config())
      : server_(std::move(config), [this](PeerId, const PeerKey& to, std::string_view d) {
          link_.push_back({to, false, std::string(d)});
        }) {}

  // The client at 127.0.0.1:outer_port, or at [::1]:outer_port (`ipv6`).
  Host& client(uint16_t outer_port, bool ipv6 = false) {
    const PeerKey outer = key(outer_port, ipv6);
    auto& slot = clients_[outer];
    if (!slot) {
      slot = std::make_unique<Host>(host_config(kClient), [this, outer](std::string_view d) {
        link_.push_back({outer, true, std::string(d)});
      });
    }
    return *slot;
  }
  static PeerKey key(uint16_t outer_port, bool ipv6 = false) {
    if (ipv6) {
      return PeerKey{wire::Ipv6Address::from_groups({0, 0, 0, 0, 0, 0, 0, 1}), outer_port};
    }
    return PeerKey{wire::Ipv4Address{0x7f000001}, outer_port};
  }

  // Delivers everything queued (and what that produces), then runs timers
  // up to `until`.
  void deliver() {
    while (!link_.empty()) {
      Packet p = std::move(link_.front());
      link_.pop_front();
      if (p.to_server) {
        server_.receive(p.key, p.bytes, now_);
      } else if (const auto it = clients_.find(p.key); it != clients_.end()) {
        it->second->receive_datagram(p.bytes, now_);
      }
    }
  }
  void advance(Duration d) {
    const Instant end = now_ + d;
    for (;;) {
      deliver();
      std::optional<Instant> next = server_.next_deadline();
      for (auto& [port, c] : clients_) {
        if (const auto due = c->next_deadline(); due && (!next || *due < *next)) {
          next = due;
        }
      }
      if (!next || *next > end) {
        break;
      }
      now_ = std::max(now_, *next);
      server_.tick(now_);
      for (auto& [port, c] : clients_) {
        c->tick(now_);
      }
    }
    now_ = end;
    server_.tick(now_);
    deliver();
  }

  // The raw datagram of a segment from kClient:40000 to `dst`:`port`.
  static std::string segment_bytes(tcp::TcpSegment s, wire::Ipv4Address dst = kServer,
                                   uint16_t port = kPort) {
    std::string buf(120, '\0');
    BufferWriter w(buf.data(), buf.size());
    EXPECT_TRUE(serialize_datagram(s, FourTuple{kClient, 40000, dst, port}, 64, w));
    buf.resize(w.size());
    return buf;
  }
  static tcp::TcpSegment syn() {
    tcp::TcpSegment s;
    s.seqno = tcp::Wrap32{1000};
    s.syn = true;
    s.window = 65535;
    return s;
  }

  struct Packet {
    PeerKey key;  // the client's outer endpoint
    bool to_server;
    std::string bytes;
  };
  PeerHosts server_;
  std::map<PeerKey, std::unique_ptr<Host>> clients_;
  std::deque<Packet> link_;
  Instant now_;
};

TEST_F(PeerHostsTest, PeersWithTheSameInnerTupleNeverMix) {
  const auto a = client(5001).connect(kServer, kPort, now_);
  const auto b = client(5002).connect(kServer, kPort, now_);
  ASSERT_TRUE(a && b);
  advance(10ms);
  ASSERT_EQ(client(5001).info(*a)->tuple, client(5002).info(*b)->tuple);
  ASSERT_EQ(server_.size(), 2u);
  const auto first = server_.accept();
  const auto second = server_.accept();
  ASSERT_TRUE(first && second);
  EXPECT_FALSE(server_.accept());
  EXPECT_NE(first->peer, second->peer);

  client(5001).write(*a, "from a", now_);
  client(5002).write(*b, "from b", now_);
  advance(10ms);
  for (const auto& accepted : {*first, *second}) {
    Host* host = server_.host(accepted.peer);
    ASSERT_NE(host, nullptr);
    const std::string expected = accepted.key.port == 5001 ? "from a" : "from b";
    EXPECT_EQ(host->peek(accepted.socket), expected);
    host->write(accepted.socket, "to " + expected.substr(5), now_);
  }
  advance(10ms);
  EXPECT_EQ(client(5001).peek(*a), "to a");
  EXPECT_EQ(client(5002).peek(*b), "to b");
}

// The outer family is part of the key: [::1]:5001 and 127.0.0.1:5001 are two
// peers, each with its own Host, though their inner tuples are the same.
TEST_F(PeerHostsTest, Ipv6AndIpv4PeersOnTheSamePortNeverMix) {
  const auto a = client(5001, /*ipv6=*/true).connect(kServer, kPort, now_);
  const auto b = client(5001).connect(kServer, kPort, now_);
  ASSERT_TRUE(a && b);
  advance(10ms);
  ASSERT_EQ(server_.size(), 2u);
  EXPECT_EQ(server_.stats().peers_created, 2u);
  const auto first = server_.accept();
  const auto second = server_.accept();
  ASSERT_TRUE(first && second);
  EXPECT_NE(first->peer, second->peer);
  EXPECT_NE(first->key, second->key);
  client(5001, true).write(*a, "from v6", now_);
  client(5001).write(*b, "from v4", now_);
  advance(10ms);
  for (const auto& accepted : {*first, *second}) {
    Host* host = server_.host(accepted.peer);
    ASSERT_NE(host, nullptr);
    const bool v6 = accepted.key.address.is_v6();
    EXPECT_EQ(accepted.key.to_string(), v6 ? "[::1]:5001" : "127.0.0.1:5001");
    EXPECT_EQ(host->peek(accepted.socket), v6 ? "from v6" : "from v4");
    host->write(accepted.socket, v6 ? "to v6" : "to v4", now_);
  }
  advance(10ms);
  EXPECT_EQ(client(5001, true).peek(*a), "to v6");
  EXPECT_EQ(client(5001).peek(*b), "to v4");
}

TEST_F(PeerHostsTest, GarbageFromUnknownPeersKeepsNoState) {
  tcp::TcpSegment ack;
  ack.seqno = tcp::Wrap32{1000};
  ack.ackno = tcp::Wrap32{1};
  ack.ack = true;
  tcp::TcpSegment syn_ack = syn();
  syn_ack.ack = true;
  std::string bad_checksum = segment_bytes(syn());
  bad_checksum.back() ^= 0x01;  // inside the TCP checksum's cover
  bad_checksum[bad_checksum.size() - 1] ^= 0x40;
  const std::vector<std::pair<std::string, PeerDrop>> cases = {
      {"not an IPv4 datagram", PeerDrop::BadDatagram},
      {segment_bytes(ack), PeerDrop::NotSyn},
      {segment_bytes(syn_ack), PeerDrop::NotSyn},
      {segment_bytes(syn(), kClient), PeerDrop::NotForUs},
      {segment_bytes(syn(), kServer, 9001), PeerDrop::NotListening},
      {bad_checksum, PeerDrop::BadDatagram},
  };
  uint16_t port = 6000;
  for (const auto& [bytes, reason] : cases) {
    const uint64_t before = server_.stats().drops[reason];
    server_.receive(key(port++), bytes, now_);
    EXPECT_EQ(server_.stats().drops[reason], before + 1) << to_string(reason);
  }
  EXPECT_EQ(server_.size(), 0u);
  EXPECT_EQ(server_.stats().peers_created, 0u);
  EXPECT_TRUE(link_.empty());  // not even a RST: an unknown peer gets nothing
  // A valid SYN does create one.
  server_.receive(key(port), segment_bytes(syn()), now_);
  EXPECT_EQ(server_.size(), 1u);
}

class PeerHostsLimitTest : public PeerHostsTest {
 protected:
  static PeerHostsConfig limited(bool cookies) {
    auto c = server_config();
    c.max_peers = 3;
    c.max_embryonic = 2;
    c.syn_cookies = cookies;
    return c;
  }
  explicit PeerHostsLimitTest(bool cookies = false) : PeerHostsTest(limited(cookies)) {}
};

class PeerHostsCookieTest : public PeerHostsLimitTest {
 protected:
  PeerHostsCookieTest() : PeerHostsLimitTest(true) {}
};

TEST_F(PeerHostsCookieTest, PastTheEmbryonicLimitSynsGetCookiesAndNoState) {
  for (uint16_t p = 7000; p < 7100; ++p) {
    server_.receive(key(p), segment_bytes(syn()), now_);
  }
  EXPECT_EQ(server_.size(), 2u);  // the first two; the rest were answered statelessly
  EXPECT_EQ(server_.stats().cookies_sent, 98u);
  EXPECT_EQ(server_.stats().embryonic_evicted, 0u);
  EXPECT_EQ(link_.size(), 100u);  // every SYN answered
  // A real peer during the flood: its SYN gets a cookie, its ACK makes the peer.
  link_.clear();
  const auto a = client(5001).connect(kServer, kPort, now_);
  advance(10ms);
  EXPECT_EQ(server_.stats().cookie_peers, 1u);
  const auto accepted = server_.accept();
  ASSERT_TRUE(accepted);
  EXPECT_EQ(accepted->key.port, 5001);
  ASSERT_EQ(client(5001).info(*a)->state, tcp::TcpState::Established);
  // A completed peer took the place of the oldest embryonic one (max_peers 3
  // would have fit it; the table stays bounded either way).
  EXPECT_LE(server_.size(), 3u);
  // The connection carries data both ways, window scaling and SACK kept.
  const auto* c = server_.host(accepted->peer)->connection(accepted->socket);
  ASSERT_NE(c, nullptr);
  EXPECT_TRUE(c->sender().peer_options().sack);
  client(5001).write(*a, "through the gate", now_);
  advance(10ms);
  EXPECT_EQ(server_.host(accepted->peer)->peek(accepted->socket), "through the gate");
}

TEST_F(PeerHostsCookieTest, ATableFullOfCompletedPeersRefusesSynsWithoutACookie) {
  for (uint16_t p = 5001; p <= 5003; ++p) {
    client(p).connect(kServer, kPort, now_);
    advance(10ms);
    ASSERT_TRUE(server_.accept());
  }
  ASSERT_EQ(server_.size(), 3u);
  ASSERT_EQ(server_.embryonic(), 0u);
  link_.clear();
  const uint64_t cookies = server_.stats().cookies_sent;
  server_.receive(key(7000), segment_bytes(syn()), now_);
  EXPECT_EQ(server_.stats().drops[PeerDrop::PeersFull], 1u);
  EXPECT_EQ(server_.stats().cookies_sent, cookies);  // no SYN-ACK that leads nowhere
  EXPECT_TRUE(link_.empty());
}

TEST_F(PeerHostsCookieTest, AnAckWithoutAValidCookieCreatesNothing) {
  for (uint16_t p = 7000; p < 7010; ++p) {
    server_.receive(key(p), segment_bytes(syn()), now_);  // the gate is in use
  }
  const size_t peers = server_.size();
  tcp::TcpSegment ack;
  ack.seqno = tcp::Wrap32{1001};
  ack.ackno = tcp::Wrap32{0x12345678};
  ack.ack = true;
  for (uint16_t p = 8000; p < 8100; ++p) {
    server_.receive(key(p), segment_bytes(ack), now_);
  }
  EXPECT_EQ(server_.size(), peers);
  EXPECT_EQ(server_.stats().drops[PeerDrop::BadCookie], 100u);
  EXPECT_EQ(server_.stats().cookie_peers, 0u);
}

TEST_F(PeerHostsLimitTest, SpoofedSynsEvictOnlyPeersThatNeverCompletedAHandshake) {
  // Two real peers complete their handshakes.
  const auto a = client(5001).connect(kServer, kPort, now_);
  const auto b = client(5002).connect(kServer, kPort, now_);
  advance(10ms);
  ASSERT_TRUE(server_.accept() && server_.accept());
  ASSERT_EQ(server_.embryonic(), 0u);
  // A flood of spoofed SYNs: never more than max_embryonic of them kept, and
  // the completed peers stay.
  for (uint16_t p = 7000; p < 7100; ++p) {
    server_.receive(key(p), segment_bytes(syn()), now_);
    EXPECT_LE(server_.size(), 3u);
  }
  EXPECT_EQ(server_.embryonic(), 1u);  // room for one beside the two real peers
  EXPECT_EQ(server_.stats().embryonic_evicted, 99u);
  EXPECT_EQ(server_.stats().drops[PeerDrop::PeersFull], 0u);
  client(5001).write(*a, "still here", now_);
  advance(10ms);
  EXPECT_EQ(server_.size(), 3u);
  // A third real peer takes the last slot; a fourth is refused, counted.
  const auto c = client(5003).connect(kServer, kPort, now_);
  advance(10ms);
  ASSERT_TRUE(server_.accept());
  EXPECT_EQ(client(5003).info(*c)->state, tcp::TcpState::Established);
  server_.receive(key(7200), segment_bytes(syn()), now_);
  EXPECT_EQ(server_.stats().drops[PeerDrop::PeersFull], 1u);
  EXPECT_EQ(server_.size(), 3u);
  static_cast<void>(b);
}

TEST_F(PeerHostsTest, EmbryonicPeersTimeOut) {
  server_.receive(key(7000), segment_bytes(syn()), now_);
  ASSERT_EQ(server_.size(), 1u);
  advance(server_.config().handshake_timeout + 1s);
  EXPECT_EQ(server_.size(), 0u);
  EXPECT_EQ(server_.stats().handshake_timeouts, 1u);
}

TEST_F(PeerHostsTest, FinishedPeersAreForgottenAndLateSegmentsDropped) {
  const auto a = client(5001).connect(kServer, kPort, now_);
  advance(10ms);
  const auto accepted = server_.accept();
  ASSERT_TRUE(accepted);
  Host* host = server_.host(accepted->peer);
  host->close(accepted->socket, now_);
  client(5001).close(*a, now_);
  advance(100ms);
  EXPECT_EQ(server_.size(), 1u);  // still within the linger
  advance(server_.config().linger + 1s);
  EXPECT_EQ(server_.size(), 0u);
  EXPECT_EQ(server_.stats().peers_finished, 1u);
  EXPECT_EQ(server_.host(accepted->peer), nullptr);
  // A late ACK from it is garbage from an unknown peer now.
  tcp::TcpSegment ack;
  ack.ack = true;
  server_.receive(key(5001), segment_bytes(ack), now_);
  EXPECT_EQ(server_.stats().drops[PeerDrop::NotSyn], 1u);
  // And a new SYN from the same endpoint starts over.
  const auto again = client(5001).connect(kServer, kPort, now_);
  advance(10ms);
  EXPECT_TRUE(server_.accept());
  EXPECT_EQ(client(5001).info(*again)->state, tcp::TcpState::Established);
}

}  // namespace
}  // namespace tinytcp::stack
