#include "stack/host.hh"

#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <string>
#include <vector>

#include "stack/datagram_codec.hh"
#include "stack/tcp_codec.hh"
#include "unit/stack/two_hosts.hh"
#include "util/buffer.hh"
#include "util/random.hh"
#include "wire/icmp.hh"
#include "wire/tcp_header.hh"
#include "wire/udp.hh"

namespace tinytcp::stack {
namespace {

using namespace std::chrono_literals;

TEST_F(TwoHosts, ConnectAcceptAndExchangeBothWays) {
  const auto [client_id, server_id] = connect_pair();
  const SocketId client = client_id;  // lambdas may not capture bindings (clang 14)
  const SocketId server = server_id;
  ASSERT_NE(server, 0u);
  EXPECT_TRUE(saw(b_events_, client, SocketEvent::Connected));
  EXPECT_TRUE(saw(a_events_, listener_, SocketEvent::Acceptable));
  EXPECT_EQ(b_.info(client)->tuple.remote_port, 80);
  EXPECT_GE(b_.info(client)->tuple.local_port, PortAllocator::kDefaultMin);

  EXPECT_EQ(b_.write(client, "hello", now_), 5u);
  ASSERT_TRUE(run_until([&] { return a_.info(server)->readable_bytes == 5; }));
  EXPECT_TRUE(saw(a_events_, server, SocketEvent::Readable));
  EXPECT_EQ(read_all(a_, server), "hello");
  EXPECT_EQ(a_.write(server, "world", now_), 5u);
  ASSERT_TRUE(run_until([&] { return b_.info(client)->readable_bytes == 5; }));
  EXPECT_EQ(b_.peek(client), "world");
  b_.consume(client, 5, now_);
  EXPECT_EQ(a_.stats().connections_opened, 1u);
  EXPECT_EQ(b_.stats().connections_opened, 1u);
}

TEST_F(TwoHosts, GracefulCloseReleasesEverythingAfterTimeWait) {
  const auto [client_id, server_id] = connect_pair();
  const SocketId client = client_id;  // lambdas may not capture bindings (clang 14)
  const SocketId server = server_id;
  b_.write(client, "last words", now_);
  b_.close(client, now_);  // client's id is released at once
  EXPECT_FALSE(b_.info(client).has_value());
  ASSERT_TRUE(run_until([&] { return a_.info(server)->state == tcp::TcpState::CloseWait; }))
      << "server never saw the FIN";
  EXPECT_FALSE(a_.info(server)->peer_finished);  // EOF only once every byte is read
  EXPECT_EQ(read_all(a_, server), "last words");
  EXPECT_TRUE(a_.info(server)->peer_finished);
  a_.close(server, now_);
  a_.close(listener_, now_);
  ASSERT_TRUE(run_until([&] { return a_.socket_count() == 0 && b_.socket_count() == 0; }, 10s));
  EXPECT_EQ(a_.connection_count(), 0u);
  EXPECT_EQ(b_.connection_count(), 0u);
  // b closed first: its TIME-WAIT is a table entry, not a socket, until 2 MSL.
  EXPECT_EQ(b_.time_wait_count(), 1u);
  EXPECT_EQ(b_.stats().time_wait_entered, 1u);
  run_for(2 * config_for(kB).tcp.msl);
  EXPECT_EQ(b_.time_wait_count(), 0u);
  EXPECT_FALSE(a_.next_deadline().has_value());
  EXPECT_FALSE(b_.next_deadline().has_value());
}

TEST_F(TwoHosts, PeerCloseIsAnEventAndEof) {
  const auto [client_id, server_id] = connect_pair();
  const SocketId client = client_id;  // lambdas may not capture bindings (clang 14)
  const SocketId server = server_id;
  b_.shutdown_write(client, now_);
  ASSERT_TRUE(run_until([&] { return a_.info(server)->peer_finished; }));
  EXPECT_TRUE(saw(a_events_, server, SocketEvent::Readable));
  // Half-close: the server can still send.
  a_.write(server, "still here", now_);
  ASSERT_TRUE(run_until([&] { return b_.info(client)->readable_bytes == 10; }));
}

TEST_F(TwoHosts, ConnectToClosedPortIsRefusedWithRst) {
  const auto client = b_.connect(kA, 81, now_);
  ASSERT_TRUE(client);
  ASSERT_TRUE(run_until([&] { return b_.info(*client)->state == tcp::TcpState::Closed; }));
  EXPECT_EQ(b_.info(*client)->close_reason, tcp::CloseReason::Refused);
  EXPECT_TRUE(saw(b_events_, *client, SocketEvent::Closed));
  EXPECT_EQ(a_.stats().resets_sent, 1u);
  EXPECT_EQ(a_.stats().drops[HostDrop::NoConnection], 1u);
}

TEST_F(TwoHosts, AbortResetsThePeer) {
  const auto [client_id, server_id] = connect_pair();
  const SocketId client = client_id;  // lambdas may not capture bindings (clang 14)
  const SocketId server = server_id;
  b_.abort(client, now_);
  ASSERT_TRUE(run_until([&] { return a_.info(server)->state == tcp::TcpState::Closed; }));
  EXPECT_EQ(a_.info(server)->close_reason, tcp::CloseReason::ResetByPeer);
  EXPECT_TRUE(saw(a_events_, server, SocketEvent::Closed));
}

TEST_F(TwoHosts, ListenTwiceOnOnePortFails) {
  ASSERT_TRUE(a_.listen(80));
  const auto again = a_.listen(80);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error(), SocketError::AddressInUse);
}

TEST_F(TwoHosts, ConnectRejectsBadAddresses) {
  for (const auto bad : {wire::Ipv4Address{0}, wire::Ipv4Address{0xffffffff},
                         wire::Ipv4Address::from_octets(224, 0, 0, 1)}) {
    const auto r = b_.connect(bad, 80, now_);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), SocketError::BadAddress);
  }
  EXPECT_FALSE(b_.connect(kA, 0, now_));
}

TEST_F(TwoHosts, SynRetransmittedAfterLoss) {
  ASSERT_TRUE(a_.listen(80));
  drop_next_ = 1;  // the first SYN
  const auto client = b_.connect(kA, 80, now_);
  ASSERT_TRUE(run_until([&] { return b_.info(*client)->state == tcp::TcpState::Established; }));
}

TEST_F(TwoHosts, BulkTransferIsByteExact) {
  const auto [client_id, server_id] = connect_pair();
  const SocketId client = client_id;  // lambdas may not capture bindings (clang 14)
  const SocketId server = server_id;
  const std::string data = Rng(seed_from_env("TINYTCP_SEED", 3)).bytes(2'000'000);
  size_t written = 0;
  std::string got;
  ASSERT_TRUE(stream_through(client, server, data, written, got));
  EXPECT_EQ(got, data);
}

// Send buffer autotuning through the Host: write() takes only what keeps the
// unsent bytes at 2 * cwnd, Writable fires again as ACKs grow the window, and
// an app that writes on Writable moves the whole stream.
class AutotunedHosts : public TwoHosts {
 protected:
  AutotunedHosts() : TwoHosts(/*autotune=*/true) {}
};

TEST_F(AutotunedHosts, WriteTakesWhatTheWindowNeedsAndWritableFollows) {
  const auto [client_id, server_id] = connect_pair();
  const SocketId client = client_id;
  const SocketId server = server_id;
  const std::string data = Rng(seed_from_env("TINYTCP_SEED", 5)).bytes(1'000'000);
  const uint64_t writable = b_.info(client)->writable_bytes;
  EXPECT_LT(writable, 100'000u);  // 2 * the initial window, not the 1 MiB buffer
  size_t written = b_.write(client, data, now_);
  EXPECT_EQ(written, writable);
  b_events_.clear();
  std::string got;
  ASSERT_TRUE(run_until(
      [&] {
        got += read_all(a_, server);
        return saw(b_events_, client, SocketEvent::Writable);
      },
      5s));
  EXPECT_GT(b_.info(client)->writable_bytes, 0u);
  ASSERT_TRUE(stream_through(client, server, data, written, got));
  EXPECT_EQ(got, data);
}

TEST_F(TwoHosts, SegmentLargerThanTheMssIsTakenWhole) {
  // What a TUN device in offload mode hands up: one GSO super-packet, a TCP
  // segment of many MSS. It is acknowledged and readable as any other.
  const auto [client, server] = connect_pair();
  const tcp::TcpConnection& c = *b_.connection(client);
  const std::string payload = Rng(seed_from_env("TINYTCP_SEED", 5)).bytes(40'000);
  tcp::TcpSegment seg;
  seg.seqno = c.sender().next_seqno();
  seg.ack = true;
  seg.ackno = *c.receiver().ackno();
  seg.window = 1000;
  seg.options.timestamps = tcp::Timestamps{c.sender().timestamp_value(now_), 0};
  seg.payload = payload;
  std::string datagram(65535, '\0');
  BufferWriter w(datagram.data(), datagram.size());
  ASSERT_TRUE(serialize_datagram(seg, b_.info(client)->tuple, 64, w));
  datagram.resize(w.size());
  link_.clear();
  a_.receive_datagram(datagram, now_);
  EXPECT_EQ(read_all(a_, server), payload);
  // The ACK a sent covers the whole segment.
  bool acked = false;
  for (const auto& p : link_) {
    const auto in = parse_datagram(p.bytes);
    if (in && in->segment.ack && in->segment.ackno == seg.seqno + 40'000u) {
      acked = true;
    }
  }
  EXPECT_TRUE(acked);
}

TEST_F(TwoHosts, SynBacklogBoundsHalfOpenConnections) {
  ASSERT_TRUE(a_.listen(80, 2));
  // SYNs from b whose SYN-ACKs are lost, so they stay half-open at a.
  std::vector<SocketId> clients;
  for (int i = 0; i < 3; ++i) {
    clients.push_back(*b_.connect(kA, 80, now_));
  }
  // Deliver the three SYNs; a's SYN-ACKs are lost, so its connections stay half-open.
  drop_to_b_ = true;
  run_until([&] { return link_.empty(); }, 2ms);
  // The third is answered with a SYN cookie: no state kept.
  EXPECT_EQ(a_.stats().syn_cookies_sent, 1u);
  EXPECT_EQ(a_.stats().drops[HostDrop::SynBacklogFull], 0u);
  EXPECT_EQ(a_.connection_count(), 2u);
}

TEST_F(TwoHosts, AcceptQueueFullResetsTheNewcomer) {
  const auto listener = a_.listen(80, 1);
  ASSERT_TRUE(listener);
  const auto c1 = b_.connect(kA, 80, now_);
  ASSERT_TRUE(run_until([&] { return b_.info(*c1)->state == tcp::TcpState::Established; }));
  const auto c2 = b_.connect(kA, 80, now_);  // nobody accepts
  ASSERT_TRUE(run_until([&] { return b_.info(*c2)->state == tcp::TcpState::Closed; }));
  EXPECT_EQ(a_.stats().drops[HostDrop::AcceptQueueFull], 1u);
  EXPECT_TRUE(a_.accept(*listener).has_value());
  EXPECT_FALSE(a_.accept(*listener).has_value());
}

TEST_F(TwoHosts, ClosingAListenerResetsUnacceptedConnections) {
  const auto listener = a_.listen(80);
  const auto c1 = b_.connect(kA, 80, now_);
  ASSERT_TRUE(run_until([&] { return b_.info(*c1)->state == tcp::TcpState::Established; }));
  a_.close(*listener, now_);
  ASSERT_TRUE(run_until([&] { return b_.info(*c1)->state == tcp::TcpState::Closed; }));
  EXPECT_EQ(a_.socket_count(), 0u);
}

TEST_F(TwoHosts, AThousandConcurrentEchoConnections) {
  constexpr int kConnections = 1000;
  constexpr size_t kBytes = 10 * 1024;
  const auto listener = a_.listen(7, kConnections);
  ASSERT_TRUE(listener);
  // The server echoes whatever arrives and closes when the client does.
  a_.set_event_callback([&](SocketId id, SocketEvent e) {
    if (id == *listener && e == SocketEvent::Acceptable) {
      while (a_.accept(*listener)) {
      }
    }
  });
  std::vector<SocketId> clients;
  std::map<SocketId, std::string> echoed;
  const std::string payload = Rng(9).bytes(kBytes);
  for (int i = 0; i < kConnections; ++i) {
    const auto c = b_.connect(kA, 7, now_);
    ASSERT_TRUE(c) << i;
    clients.push_back(*c);
  }
  std::map<SocketId, size_t> written;
  const bool done = run_until(
      [&] {
        // Server side: echo every connection (ids are dense and small).
        for (SocketId id = 1; id < 2 * kConnections + 10; ++id) {
          const auto info = a_.info(id);
          if (!info || info->listener) {
            continue;
          }
          for (auto v = a_.peek(id); !v.empty(); v = a_.peek(id)) {
            const size_t n = a_.write(id, v, now_);
            if (n == 0) {
              break;
            }
            a_.consume(id, n, now_);
          }
        }
        size_t complete = 0;
        for (const SocketId c : clients) {
          auto& w = written[c];
          if (w < kBytes) {
            w += b_.write(c, std::string_view(payload).substr(w), now_);
          }
          echoed[c] += read_all(b_, c);
          complete += echoed[c].size() == kBytes ? 1u : 0u;
        }
        return complete == clients.size();
      },
      120s);
  ASSERT_TRUE(done);
  for (const SocketId c : clients) {
    ASSERT_EQ(echoed[c], payload) << c;
  }
  EXPECT_EQ(a_.stats().connections_opened, static_cast<uint64_t>(kConnections));
}

// ---- raw datagrams into one host -------------------------------------------

class HostInput : public ::testing::Test {
 protected:
  HostInput() : host_(config_for(kA), [this](std::string_view d) { out_.emplace_back(d); }) {}

  std::string ipv4(uint8_t protocol, std::string_view payload, wire::Ipv4Address dst = kA) {
    std::string buf(20 + payload.size(), '\0');
    BufferWriter w(buf.data(), buf.size());
    wire::Ipv4Header h;
    h.total_length = static_cast<uint16_t>(buf.size());
    h.protocol = protocol;
    h.src = kB;
    h.dst = dst;
    wire::serialize(h, w);
    w.bytes(payload);
    return buf;
  }

  // A TCP segment from kB:`src_port` to kA:`dst_port` with a correct checksum.
  static std::string tcp_bytes(const tcp::TcpSegment& segment, uint16_t src_port = 40000,
                               uint16_t dst_port = 9) {
    std::string bytes(wire::TcpHeader::kMaxSize + segment.payload.size(), '\0');
    BufferWriter w(bytes.data(), bytes.size());
    EXPECT_TRUE(serialize_segment(segment, src_port, dst_port, kB.value, kA.value, w));
    bytes.resize(w.size());
    return bytes;
  }

  // Counters that say what became of a datagram: every one lands in at
  // least one (drop and count, or an answer).
  uint64_t accounted() const {
    const auto& s = host_.stats();
    return s.drops.total() + s.echo_replies + s.icmp_errors_sent +
           host_.icmp_stats().suppressed.total();
  }

  Instant now_;
  Host host_;
  std::vector<std::string> out_;
};

TEST_F(HostInput, PingGetsAnEchoReply) {
  std::string icmp(8 + 4, '\0');
  BufferWriter w(icmp.data(), icmp.size());
  wire::serialize(wire::IcmpMessage::echo(wire::icmp::kEchoRequest, 7, 1, "ping"), w);
  host_.receive_datagram(ipv4(1, icmp), now_);
  ASSERT_EQ(out_.size(), 1u);
  const auto ip = wire::parse_ipv4(out_[0]);
  ASSERT_TRUE(ip);
  EXPECT_EQ(ip->header.dst, kB);
  const auto reply = wire::parse_icmp(ip->payload);
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->type, wire::icmp::kEchoReply);
  EXPECT_EQ(reply->data, "ping");
  EXPECT_EQ(host_.stats().echo_replies, 1u);
}

TEST_F(HostInput, UdpGetsPortUnreachable) {
  std::string udp(8 + 3, '\0');
  BufferWriter w(udp.data(), udp.size());
  wire::UdpHeader h;
  h.src_port = 5000;
  h.dst_port = 53;
  wire::serialize(h, "abc", kB, kA, w);
  host_.receive_datagram(ipv4(17, udp), now_);
  ASSERT_EQ(out_.size(), 1u);
  const auto ip = wire::parse_ipv4(out_[0]);
  ASSERT_TRUE(ip);
  const auto err = wire::parse_icmp(ip->payload);
  ASSERT_TRUE(err);
  EXPECT_EQ(err->type, wire::icmp::kDestinationUnreachable);
  EXPECT_EQ(err->code, wire::icmp::kPortUnreachable);
}

TEST_F(HostInput, NoErrorAnswersALinkLayerBroadcast) {
  // RFC 1122 §3.2.2: no ICMP error about a datagram sent as a link-layer
  // broadcast (a smurf amplifier otherwise), even to our unicast address.
  std::string udp(8 + 3, '\0');
  BufferWriter w(udp.data(), udp.size());
  wire::UdpHeader h;
  h.src_port = 5000;
  h.dst_port = 53;
  wire::serialize(h, "abc", kB, kA, w);
  host_.receive_datagram(ipv4(17, udp), now_, true);
  host_.receive_datagram(ipv4(47, "gre?"), now_, true);
  EXPECT_TRUE(out_.empty());
  EXPECT_EQ(host_.icmp_stats().suppressed[net::IcmpSuppressed::AboutNonUnicast], 2u);
}

TEST_F(HostInput, UnknownProtocolGetsProtocolUnreachable) {
  host_.receive_datagram(ipv4(47, "gre?"), now_);
  ASSERT_EQ(out_.size(), 1u);
  const auto err = wire::parse_icmp(wire::parse_ipv4(out_[0])->payload);
  ASSERT_TRUE(err);
  EXPECT_EQ(err->code, wire::icmp::kProtocolUnreachable);
}

TEST_F(HostInput, BadDatagramsAreCountedAndNeverAnswered) {
  host_.receive_datagram("", now_);
  host_.receive_datagram("garbage that is not an IPv4 header", now_);
  EXPECT_EQ(host_.stats().drops[HostDrop::BadIpv4], 2u);
  host_.receive_datagram(ipv4(6, std::string(20, '\0'), kB), now_);
  EXPECT_EQ(host_.stats().drops[HostDrop::NotForUs], 1u);
  host_.receive_datagram(ipv4(6, std::string(20, '\x01')), now_);  // data offset 0
  EXPECT_EQ(host_.stats().drops[HostDrop::BadTcp], 1u);
  host_.receive_datagram(ipv4(1, "\x08"), now_);  // truncated ICMP
  EXPECT_EQ(host_.stats().drops[HostDrop::BadIcmp], 1u);
  EXPECT_TRUE(out_.empty());
  EXPECT_EQ(host_.stats().drops.total(), 5u);
}

TEST_F(HostInput, TcpWithABadChecksumIsDroppedUnanswered) {
  tcp::TcpSegment syn;
  syn.syn = true;
  syn.seqno = tcp::Wrap32{1234};
  syn.payload = "data";
  const std::string good = tcp_bytes(syn);
  // The same segment, intact, reaches TCP: no listener, so a RST.
  host_.receive_datagram(ipv4(6, good), now_);
  ASSERT_EQ(out_.size(), 1u);
  EXPECT_EQ(host_.stats().drops[HostDrop::NoConnection], 1u);
  EXPECT_EQ(host_.stats().resets_sent, 1u);
  out_.clear();
  // One flipped bit anywhere (the checksum field, a header field, the
  // payload): RFC 9293 §3.1, dropped and counted, never answered.
  for (const size_t at : {size_t{16}, size_t{4}, good.size() - 1}) {
    SCOPED_TRACE("bit flipped in byte " + std::to_string(at));
    std::string bad = good;
    bad[at] = static_cast<char>(bad[at] ^ 0x10);
    const uint64_t before = host_.stats().drops[HostDrop::BadTcp];
    host_.receive_datagram(ipv4(6, bad), now_);
    EXPECT_EQ(host_.stats().drops[HostDrop::BadTcp], before + 1);
  }
  EXPECT_TRUE(out_.empty());
  EXPECT_EQ(host_.stats().drops[HostDrop::NoConnection], 1u);
  EXPECT_EQ(host_.stats().resets_sent, 1u);
  EXPECT_EQ(host_.stats().drops.total(), 4u);
}

TEST_F(HostInput, RandomDatagramsAreCountedAndAnsweredAtMostOnce) {
  // Random payloads, and random TCP segments with a correct checksum so that
  // they get past parsing, to a host with no listener. Every datagram is
  // accounted for by a counter (drop and count), none opens a socket, none
  // gets more than one answer, and every answer is a well-formed datagram
  // from us to the sender: a RST, or an ICMP message.
  const uint64_t seed = seed_from_env("TINYTCP_SEED", 17);
  SCOPED_TRACE("TINYTCP_SEED=" + std::to_string(seed));
  Rng rng(seed);
  uint64_t valid_tcp = 0;
  uint64_t valid_icmp = 0;
  for (int i = 0; i < 3000; ++i) {
    SCOPED_TRACE("datagram " + std::to_string(i));
    std::string payload = rng.bytes(rng.uniform(0, 80));
    auto protocol = static_cast<uint8_t>(rng.chance(0.6)    ? 6
                                         : rng.chance(0.25) ? 1
                                                            : rng.uniform(0, 255));
    if (rng.chance(0.3)) {
      protocol = 6;
      tcp::TcpSegment s;
      s.seqno = tcp::Wrap32{static_cast<uint32_t>(rng.next())};
      s.ackno = tcp::Wrap32{static_cast<uint32_t>(rng.next())};
      s.syn = rng.chance(0.3);
      s.ack = rng.chance(0.5);
      s.rst = rng.chance(0.1);
      s.fin = !s.syn && rng.chance(0.1);
      s.window = static_cast<uint16_t>(rng.next());
      s.payload = std::string_view(payload).substr(0, rng.uniform(0, payload.size()));
      payload = tcp_bytes(s, static_cast<uint16_t>(rng.uniform(1, 65535)),
                          static_cast<uint16_t>(rng.uniform(1, 65535)));
      ++valid_tcp;
    } else if (protocol == 1 && rng.chance(0.7)) {
      // An ICMP message of any type with a correct checksum.
      const std::string data = payload;
      wire::IcmpMessage m;
      m.type =
          static_cast<uint8_t>(rng.chance(0.3) ? wire::icmp::kEchoRequest : rng.uniform(0, 255));
      m.code = static_cast<uint8_t>(rng.chance(0.5) ? 0 : rng.uniform(0, 255));
      m.rest = static_cast<uint32_t>(rng.next());
      m.data = data;
      payload.assign(wire::IcmpMessage::kHeaderSize + data.size(), '\0');
      BufferWriter w(payload.data(), payload.size());
      wire::serialize(m, w);
      ++valid_icmp;
    }
    const uint64_t before = accounted();
    const size_t out_before = out_.size();
    host_.receive_datagram(ipv4(protocol, payload), now_);
    ASSERT_GE(accounted(), before + 1) << "protocol " << int{protocol} << ": not counted";
    ASSERT_LE(out_.size(), out_before + 1) << "more than one answer";
    for (size_t k = out_before; k < out_.size(); ++k) {
      const auto ip = wire::parse_ipv4(out_[k]);
      ASSERT_TRUE(ip) << "an answer that is not IPv4";
      EXPECT_EQ(ip->header.src, kA);
      EXPECT_EQ(ip->header.dst, kB);
      if (ip->header.protocol == 6) {
        const auto t = wire::parse_tcp(ip->payload, kA.value, kB.value);
        ASSERT_TRUE(t) << "an answer that is not TCP";
        EXPECT_TRUE(t->header.rst) << "TCP answer to a stray segment that is not a RST";
        EXPECT_EQ(protocol, 6);
      } else {
        ASSERT_EQ(ip->header.protocol, 1) << "an answer that is neither TCP nor ICMP";
        EXPECT_TRUE(wire::parse_icmp(ip->payload));
      }
    }
    ASSERT_EQ(host_.socket_count(), 0u);
    const size_t answers = out_.size();
    now_ += 1ms;
    host_.tick(now_);
    ASSERT_EQ(out_.size(), answers) << "a timer sent something";
  }
  EXPECT_EQ(host_.stats().datagrams_in, 3000u);
  EXPECT_GT(valid_tcp, 500u);
  EXPECT_GT(valid_icmp, 10u);
  EXPECT_GT(host_.stats().drops[HostDrop::IcmpIgnored], 0u);
  EXPECT_GT(host_.stats().echo_replies, 0u);
  EXPECT_GT(host_.stats().drops[HostDrop::NoConnection], 0u) << "no random segment reached TCP";
  EXPECT_GT(host_.stats().drops[HostDrop::BadTcp], 0u);
}

}  // namespace
}  // namespace tinytcp::stack
