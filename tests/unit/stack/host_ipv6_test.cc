// The Host over IPv6 (issue 20): two Hosts with an IPv4 and an IPv6 address
// each, TCP between their IPv6 addresses, ICMPv6 echo and errors, Packet
// Too Big, extension headers and fragments, every drop counted.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "stack/datagram_codec.hh"
#include "stack/host.hh"
#include "unit/stack/two_hosts.hh"
#include "util/buffer.hh"
#include "wire/icmpv6.hh"
#include "wire/ipv6.hh"
#include "wire/ipv6_chain.hh"
#include "wire/tcp_header.hh"

namespace tinytcp::stack {
namespace {

using namespace std::chrono_literals;

const wire::Ipv6Address kA6 = *wire::Ipv6Address::parse("fd00:144::1");
const wire::Ipv6Address kB6 = *wire::Ipv6Address::parse("fd00:144::2");
const wire::Ipv6Address kRouter6 = *wire::Ipv6Address::parse("fd00:144::fe");

HostConfig config6(wire::Ipv4Address v4, wire::Ipv6Address v6) {
  HostConfig c = config_for(v4);
  c.ipv6 = v6;
  return c;
}

std::string ipv6_datagram(const wire::Ipv6Address& src, const wire::Ipv6Address& dst,
                          uint8_t next_header, const std::string& payload) {
  std::string out(wire::Ipv6Header::kSize + payload.size(), '\0');
  BufferWriter w(out.data(), out.size());
  wire::Ipv6Header h;
  h.payload_length = static_cast<uint16_t>(payload.size());
  h.next_header = next_header;
  h.src = src;
  h.dst = dst;
  wire::serialize(h, w);
  w.bytes(payload);
  return out;
}

std::string icmpv6(const wire::Icmpv6Message& m, const wire::Ipv6Address& src,
                   const wire::Ipv6Address& dst) {
  std::string out(wire::Icmpv6Message::kHeaderSize + m.data.size(), '\0');
  BufferWriter w(out.data(), out.size());
  wire::serialize(m, src, dst, w);
  return out;
}

std::string echo_request(const std::string& data, const wire::Ipv6Address& dst = kA6) {
  return icmpv6(wire::Icmpv6Message::echo(wire::icmpv6::kEchoRequest, 7, 9, data), kB6, dst);
}

// An options header (hop-by-hop or destination) padded to 8 bytes.
std::string options_header(uint8_t next, const std::string& options) {
  std::string h{static_cast<char>(next), 0};
  h += options;
  const size_t pad = (8 - h.size() % 8) % 8;
  if (pad == 1) {
    h.push_back(0);
  } else if (pad > 1) {
    h.push_back(1);
    h.push_back(static_cast<char>(pad - 2));
    h.append(pad - 2, '\0');
  }
  h[1] = static_cast<char>(h.size() / 8 - 1);
  return h;
}

std::string fragment_header(uint8_t next, uint16_t offset, bool more, uint32_t id) {
  std::string out(wire::Ipv6FragmentHeader::kSize, '\0');
  BufferWriter w(out.data(), out.size());
  wire::serialize(wire::Ipv6FragmentHeader{next, offset, more, id}, w);
  return out;
}

class Ipv6Hosts : public TwoHosts {
 protected:
  Ipv6Hosts() : TwoHosts(config6(kA, kA6), config6(kB, kB6)) {
    a_out_ = [this](std::string_view d) {
      from_a_.emplace_back(d);
      return false;
    };
  }

  std::pair<SocketId, SocketId> connect6(uint16_t port = 80) {
    const auto listener = a_.listen(port);
    EXPECT_TRUE(listener);
    return connect_to(listener ? *listener : 0, IpAddress(kA6), port);
  }

  // The last datagram a sent, parsed as ICMPv6 (fails the test if it is not).
  wire::Icmpv6Message last_icmpv6_from_a() {
    EXPECT_FALSE(from_a_.empty());
    last_ = from_a_.empty() ? std::string() : from_a_.back();
    const auto ip = wire::parse_ipv6(last_);
    EXPECT_TRUE(ip);
    if (!ip) {
      return {};
    }
    EXPECT_EQ(ip->header.src, kA6);
    EXPECT_EQ(ip->header.next_header, wire::ipv6::kIcmpv6);
    const auto m = wire::parse_icmpv6(ip->payload, ip->header.src, ip->header.dst);
    EXPECT_TRUE(m);
    return m ? *m : wire::Icmpv6Message{};
  }

  std::vector<std::string> from_a_;
  std::string last_;
};

TEST_F(Ipv6Hosts, HandshakeAndDataBothWays) {
  // Not a structured binding: a lambda below captures them (C++17 forbids that).
  const auto ends = connect6();
  const SocketId client = ends.first;
  const SocketId server = ends.second;
  const SocketInfo info = *b_.info(client);
  EXPECT_EQ(info.tuple.family(), IpFamily::V6);
  EXPECT_EQ(info.tuple.local_ip, IpAddress(kB6));
  EXPECT_EQ(info.tuple.remote_ip, IpAddress(kA6));
  EXPECT_EQ(a_.info(server)->tuple.remote_ip, IpAddress(kB6));
  // Every datagram a sent is IPv6 with a TCP checksum over the §8.1 pseudo-header.
  for (const auto& d : from_a_) {
    const auto ip = wire::parse_ipv6(d);
    ASSERT_TRUE(ip);
    EXPECT_EQ(wire::ipv6_upper_layer_checksum(ip->header.src, ip->header.dst, wire::ipv6::kTcp,
                                              ip->payload),
              0);
  }
  // Each side announced MSS = 1500 - 60 and sends segments of that less
  // the timestamp option.
  EXPECT_EQ(a_.connection(server)->sender().max_payload(), 1440u - 12u);
  EXPECT_EQ(b_.connection(client)->sender().max_payload(), 1440u - 12u);

  const std::string up(100'000, 'u');
  size_t written = 0;
  std::string got;
  ASSERT_TRUE(stream_through(client, server, up, written, got));
  EXPECT_EQ(got, up);
  const std::string down = "from a over IPv6";
  ASSERT_EQ(a_.write(server, down, now_), down.size());
  std::string back;
  ASSERT_TRUE(run_until([&] {
    back += read_all(b_, client);
    return back.size() == down.size();
  }));
  EXPECT_EQ(back, down);
  EXPECT_EQ(a_.stats().drops.total(), 0u);
}

TEST_F(Ipv6Hosts, SynCookieAnnouncesTheIpv6Mss) {
  // The crafted suite found it: a cookie SYN-ACK over IPv6 announced 1460.
  const auto listener = a_.listen(80, 1);
  ASSERT_TRUE(listener);
  // A spoofed SYN whose SYN-ACK is lost: the SYN queue is full.
  spoofed_syn(FourTuple{IpAddress(kB6), 7, IpAddress(kA6), 80}, 1440);
  ASSERT_EQ(a_.connection_count(), 1u);
  from_a_.clear();
  const auto connected = connect_to(*listener, IpAddress(kA6), 80);
  const SocketId client = connected.first;
  const SocketId server = connected.second;
  ASSERT_NE(server, 0u);
  EXPECT_EQ(a_.stats().syn_cookies_sent, 1u);
  EXPECT_EQ(a_.stats().syn_cookies_accepted, 1u);
  ASSERT_FALSE(from_a_.empty());
  const auto ip = wire::parse_ipv6(from_a_.front());
  ASSERT_TRUE(ip);
  const auto syn_ack = parse_segment(ip->header, ip->payload);
  ASSERT_TRUE(syn_ack);
  EXPECT_TRUE(syn_ack->segment.syn && syn_ack->segment.ack);
  EXPECT_EQ(syn_ack->segment.options.mss, 1440u);  // MTU 1500 - 40 - 20
  EXPECT_EQ(b_.connection(client)->sender().max_payload(), 1440u - 12u);
  EXPECT_EQ(a_.connection(server)->sender().max_payload(), 1440u - 12u);
}

TEST_F(Ipv6Hosts, ListenerAcceptsBothFamilies) {
  const auto listener = a_.listen(80);
  ASSERT_TRUE(listener);
  const auto c4 = b_.connect(kA, 80, now_);
  const auto c6 = b_.connect(IpAddress(kA6), 80, now_);
  ASSERT_TRUE(c4 && c6);
  std::vector<SocketId> accepted;
  ASSERT_TRUE(run_until([&] {
    while (const auto s = a_.accept(*listener)) {
      accepted.push_back(*s);
    }
    return accepted.size() == 2;
  }));
  std::vector<IpFamily> families;
  for (const SocketId s : accepted) {
    families.push_back(a_.info(s)->tuple.family());
  }
  EXPECT_NE(families[0], families[1]);
}

TEST_F(Ipv6Hosts, ConnectWithoutAnIpv6AddressIsRefused) {
  Host v4only(config_for(kA), [](std::string_view) {});
  const auto r = v4only.connect(IpAddress(kB6), 80, now_);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), SocketError::NoAddressOfFamily);
  EXPECT_EQ(b_.connect(IpAddress(*wire::Ipv6Address::parse("ff02::1")), 80, now_).error(),
            SocketError::BadAddress);
}

TEST_F(Ipv6Hosts, SynToAClosedPortIsReset) {
  tcp::TcpSegment syn;
  syn.syn = true;
  syn.seqno = tcp::Wrap32{1000};
  std::string buf(100, '\0');
  BufferWriter w(buf.data(), buf.size());
  ASSERT_TRUE(serialize_datagram(syn, FourTuple{IpAddress(kB6), 40000, IpAddress(kA6), 81}, 64, w));
  a_.receive_datagram(w.written(), now_);
  EXPECT_EQ(a_.stats().drops[HostDrop::NoConnection], 1u);
  ASSERT_EQ(from_a_.size(), 1u);
  const auto rst = parse_datagram(from_a_[0]);
  ASSERT_TRUE(rst);
  EXPECT_TRUE(rst->segment.rst);
  EXPECT_TRUE(rst->segment.ack);
  EXPECT_EQ(rst->segment.ackno, tcp::Wrap32{1001});
  EXPECT_EQ(rst->tuple, (FourTuple{IpAddress(kB6), 40000, IpAddress(kA6), 81}));
}

TEST_F(Ipv6Hosts, AnswersEchoRequests) {
  a_.receive_datagram(ipv6_datagram(kB6, kA6, wire::ipv6::kIcmpv6, echo_request("ping6")), now_);
  const auto reply = last_icmpv6_from_a();
  EXPECT_EQ(reply.type, wire::icmpv6::kEchoReply);
  EXPECT_EQ(reply.echo_id(), 7);
  EXPECT_EQ(reply.echo_sequence(), 9);
  EXPECT_EQ(reply.data, "ping6");
  EXPECT_EQ(a_.stats().echo_replies, 1u);
}

TEST_F(Ipv6Hosts, UdpAndUnknownNextHeaderAreAnswered) {
  a_.receive_datagram(ipv6_datagram(kB6, kA6, wire::ipv6::kUdp, std::string(8, '\0')), now_);
  auto m = last_icmpv6_from_a();
  EXPECT_EQ(m.type, wire::icmpv6::kDestinationUnreachable);
  EXPECT_EQ(m.code, wire::icmpv6::kPortUnreachable);
  a_.receive_datagram(ipv6_datagram(kB6, kA6, 253, "experiment"), now_);
  m = last_icmpv6_from_a();
  EXPECT_EQ(m.type, wire::icmpv6::kParameterProblem);
  EXPECT_EQ(m.code, wire::icmpv6::kUnrecognizedNextHeader);
  EXPECT_EQ(m.pointer(), 6u);  // the fixed header's Next Header field
  EXPECT_EQ(a_.stats().icmp_errors_sent, 2u);
}

TEST_F(Ipv6Hosts, NoErrorAnswersALinkLayerMulticast) {
  // RFC 4443 §2.4(e.3): a packet to our unicast address that came in a
  // link-layer multicast or broadcast frame gets no error.
  a_.receive_datagram(ipv6_datagram(kB6, kA6, wire::ipv6::kUdp, std::string(8, '\0')), now_, true);
  a_.receive_datagram(ipv6_datagram(kB6, kA6, 253, "experiment"), now_, true);
  EXPECT_TRUE(from_a_.empty());
  EXPECT_EQ(a_.stats().icmp_errors_sent, 0u);
  // An echo request still gets its reply (§4.2 allows it; Linux answers).
  a_.receive_datagram(ipv6_datagram(kB6, kA6, wire::ipv6::kIcmpv6, echo_request("ping6")), now_,
                      true);
  EXPECT_EQ(from_a_.size(), 1u);
}

TEST_F(Ipv6Hosts, BadExtensionChainGetsParameterProblem) {
  // A hop-by-hop header with option type 0x9e (10xxxxxx: discard and report).
  const std::string option{static_cast<char>(0x9e), 0};
  a_.receive_datagram(
      ipv6_datagram(kB6, kA6, wire::ipv6::kHopByHop,
                    options_header(wire::ipv6::kIcmpv6, option) + echo_request("x")),
      now_);
  const auto m = last_icmpv6_from_a();
  EXPECT_EQ(m.type, wire::icmpv6::kParameterProblem);
  EXPECT_EQ(m.code, wire::icmpv6::kUnrecognizedOption);
  EXPECT_EQ(m.pointer(), 42u);
  EXPECT_EQ(a_.stats().drops[HostDrop::BadIpv6Chain], 1u);
  EXPECT_EQ(a_.stats().echo_replies, 0u);
  // 11xxxxxx to a multicast destination: discarded, not reported (RFC 8200 §4.2).
  const std::string unicast_only{static_cast<char>(0xde), 0};
  const size_t sent = from_a_.size();
  a_.receive_datagram(
      ipv6_datagram(kB6, kA6.solicited_node_multicast(), wire::ipv6::kHopByHop,
                    options_header(wire::ipv6::kIcmpv6, unicast_only) + echo_request("x")),
      now_);
  EXPECT_EQ(from_a_.size(), sent);
  EXPECT_EQ(a_.stats().drops[HostDrop::BadIpv6Chain], 2u);
}

TEST_F(Ipv6Hosts, FragmentsAreReassembled) {
  const std::string data(200, 'f');
  const std::string whole = echo_request(data);
  const uint8_t frag = wire::ipv6::kFragment;
  a_.receive_datagram(
      ipv6_datagram(kB6, kA6, frag,
                    fragment_header(wire::ipv6::kIcmpv6, 0, true, 77) + whole.substr(0, 96)),
      now_);
  EXPECT_TRUE(from_a_.empty());
  a_.receive_datagram(
      ipv6_datagram(kB6, kA6, frag,
                    fragment_header(wire::ipv6::kIcmpv6, 96, false, 77) + whole.substr(96)),
      now_);
  const auto reply = last_icmpv6_from_a();
  EXPECT_EQ(reply.type, wire::icmpv6::kEchoReply);
  EXPECT_EQ(reply.data, data);
  EXPECT_EQ(a_.ipv6_input()->reassembler().reassembled(), 1u);
}

TEST_F(Ipv6Hosts, TinyFirstFragmentGetsParameterProblem3) {
  // RFC 7112: the first fragment holds only 16 of the 20 bytes of a TCP header.
  a_.receive_datagram(
      ipv6_datagram(kB6, kA6, wire::ipv6::kFragment,
                    fragment_header(wire::ipv6::kTcp, 0, true, 5) + std::string(16, 'z')),
      now_);
  const auto m = last_icmpv6_from_a();
  EXPECT_EQ(m.type, wire::icmpv6::kParameterProblem);
  EXPECT_EQ(m.code, wire::icmpv6::kIncompleteHeaderChain);
}

TEST_F(Ipv6Hosts, FragmentTimeoutSendsTimeExceeded) {
  const std::string whole = echo_request(std::string(100, 't'));
  a_.receive_datagram(
      ipv6_datagram(kB6, kA6, wire::ipv6::kFragment,
                    fragment_header(wire::ipv6::kIcmpv6, 0, true, 6) + whole.substr(0, 56)),
      now_);
  ASSERT_TRUE(from_a_.empty());
  ASSERT_TRUE(a_.next_deadline());
  now_ = *a_.next_deadline();
  a_.tick(now_);
  const auto m = last_icmpv6_from_a();
  EXPECT_EQ(m.type, wire::icmpv6::kTimeExceeded);
  EXPECT_EQ(m.code, wire::icmpv6::kReassemblyTimeExceeded);
}

TEST_F(Ipv6Hosts, NeighborDiscoveryIsLeftToTheInterface) {
  wire::Icmpv6Message ns;
  ns.type = wire::icmpv6::kNeighborSolicitation;
  const std::string target(kA6.bytes.begin(), kA6.bytes.end());
  ns.data = target;
  a_.receive_datagram(ipv6_datagram(kB6, kA6.solicited_node_multicast(), wire::ipv6::kIcmpv6,
                                    icmpv6(ns, kB6, kA6.solicited_node_multicast())),
                      now_);
  EXPECT_TRUE(from_a_.empty());
  EXPECT_EQ(a_.stats().drops[HostDrop::Ndp], 1u);
}

TEST_F(Ipv6Hosts, DropsAreCounted) {
  a_.receive_datagram(std::string("\x60\x00", 2), now_);
  EXPECT_EQ(a_.stats().drops[HostDrop::BadIpv6], 1u);
  a_.receive_datagram(ipv6_datagram(kB6, kB6, wire::ipv6::kIcmpv6, echo_request("x")), now_);
  EXPECT_EQ(a_.stats().drops[HostDrop::NotForUs], 1u);
  a_.receive_datagram(
      ipv6_datagram(*wire::Ipv6Address::parse("ff02::1"), kA6, wire::ipv6::kIcmpv6, "x"), now_);
  EXPECT_EQ(a_.stats().drops[HostDrop::BadAddress], 1u);
  // An IPv4-mapped source never appears on the wire (RFC 4942 §2.2).
  a_.receive_datagram(ipv6_datagram(*wire::Ipv6Address::parse("::ffff:10.0.0.2"), kA6,
                                    wire::ipv6::kIcmpv6, echo_request("x")),
                      now_);
  EXPECT_EQ(a_.stats().drops[HostDrop::BadAddress], 2u);
  EXPECT_TRUE(from_a_.empty());
  std::string bad = echo_request("x");
  bad[2] ^= 1;
  a_.receive_datagram(ipv6_datagram(kB6, kA6, wire::ipv6::kIcmpv6, bad), now_);
  EXPECT_EQ(a_.stats().drops[HostDrop::BadIcmp], 1u);
  a_.receive_datagram(ipv6_datagram(kB6, kA6, wire::ipv6::kNoNextHeader, ""), now_);
  EXPECT_EQ(a_.stats().drops[HostDrop::NoNextHeader], 1u);
  a_.receive_datagram(ipv6_datagram(kB6, kA6, wire::ipv6::kTcp, std::string(20, '\0')), now_);
  EXPECT_EQ(a_.stats().drops[HostDrop::BadTcp], 1u);
  EXPECT_TRUE(from_a_.empty());
}

TEST(HostIpv6Test, Ipv4OnlyHostCountsIpv6AsBadIpv4) {
  Host host(config_for(kA), [](std::string_view) {});
  host.receive_datagram(ipv6_datagram(kB6, kA6, wire::ipv6::kIcmpv6, echo_request("x")), Instant{});
  EXPECT_EQ(host.stats().drops[HostDrop::BadIpv4], 1u);
  EXPECT_EQ(host.ipv6_input(), nullptr);
}

class Ipv6PathMtu : public Ipv6Hosts {
 protected:
  // A router's Packet Too Big to a about the datagram `sent` of a's.
  std::string packet_too_big(uint32_t mtu, const std::string& sent) {
    wire::Icmpv6Message m = wire::Icmpv6Message::error(wire::icmpv6::kPacketTooBig, 0, mtu, sent);
    return ipv6_datagram(kRouter6, kA6, wire::ipv6::kIcmpv6, icmpv6(m, kRouter6, kA6));
  }
  size_t largest_from_a(size_t from) const {
    size_t most = 0;
    for (size_t i = from; i < from_a_.size(); ++i) {
      most = std::max(most, from_a_[i].size());
    }
    return most;
  }
};

TEST_F(Ipv6PathMtu, PacketTooBigLowersTheMss) {
  // Not a structured binding: a lambda below captures them (C++17 forbids that).
  const auto ends = connect6();
  const SocketId client = ends.first;
  const SocketId server = ends.second;
  drop_to_b_ = true;
  const std::string data(20'000, 'p');
  const size_t before = from_a_.size();
  ASSERT_EQ(a_.write(server, data, now_), data.size());
  drop_to_b_ = false;
  ASSERT_GT(from_a_.size(), before);
  ASSERT_EQ(from_a_[before].size(), 1500u);  // MSS 1440 + 12 option bytes + 48 of headers
  const std::string first = from_a_[before];
  const size_t resent_from = from_a_.size();
  a_.receive_datagram(packet_too_big(1400, first), now_);
  EXPECT_EQ(a_.stats().path_mtu_updates, 1u);
  EXPECT_GT(from_a_.size(), resent_from);
  EXPECT_EQ(largest_from_a(resent_from), 1400u);
  std::string got;
  ASSERT_TRUE(run_until([&] {
    got += read_all(b_, client);
    return got.size() == data.size();
  }));
  EXPECT_EQ(got, data);
  EXPECT_LE(largest_from_a(resent_from), 1400u);
}

TEST_F(Ipv6PathMtu, PacketTooBigBelow1280Means1280) {
  const SocketId server = connect6().second;
  drop_to_b_ = true;
  const size_t before = from_a_.size();
  a_.write(server, std::string(5000, 'q'), now_);
  drop_to_b_ = false;
  const std::string first = from_a_[before];
  a_.receive_datagram(packet_too_big(600, first), now_);
  EXPECT_EQ(a_.stats().path_mtu_updates, 1u);
  EXPECT_EQ(a_.connection(server)->sender().segment_room(), 1280u - 60u);
}

TEST_F(Ipv6PathMtu, PacketTooBigForDataNotInFlightIsIgnored) {
  const SocketId server = connect6().second;
  // The handshake's last segment of a's, whose data is long acknowledged.
  const std::string old = from_a_.back();
  a_.receive_datagram(packet_too_big(1280, old), now_);
  EXPECT_EQ(a_.stats().drops[HostDrop::IcmpStale], 1u);
  EXPECT_EQ(a_.stats().path_mtu_updates, 0u);
  EXPECT_EQ(a_.connection(server)->sender().max_payload(), 1440u - 12u);
  // A quote of someone else's datagram.
  std::string foreign = old;
  foreign[8 + 15] ^= 1;  // a source address other than ours
  a_.receive_datagram(packet_too_big(1280, foreign), now_);
  EXPECT_EQ(a_.stats().drops[HostDrop::BadIcmp], 1u);
}

}  // namespace
}  // namespace tinytcp::stack
