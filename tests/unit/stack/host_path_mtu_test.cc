// Path MTU (issue 15 item 4): an ICMP fragmentation-needed that quotes data
// in flight lowers the MSS and what no longer fits goes again, cut to size
// (RFC 1191, validated per RFC 5927); one that quotes anything else is
// counted and ignored.

#include <gtest/gtest.h>

#include <string>

#include "stack/host.hh"
#include "unit/stack/two_hosts.hh"
#include "util/buffer.hh"
#include "wire/icmp.hh"
#include "wire/ipv4.hh"

namespace tinytcp::stack {
namespace {

using namespace std::chrono_literals;

class PathMtuHosts : public TwoHosts {
 protected:
  // What a router between a and b sends a when a's datagram to b does not
  // fit its next hop: type 3 code 4, the next-hop MTU, a's IPv4 header and
  // the first 8 bytes of its TCP header (ports, sequence number).
  std::string frag_needed(uint16_t mtu, const FourTuple& tuple, tcp::Wrap32 seq) {
    std::string quote(28, '\0');
    BufferWriter q(quote.data(), quote.size());
    wire::Ipv4Header sent;
    sent.total_length = 1500;
    sent.dont_fragment = true;
    sent.protocol = static_cast<uint8_t>(wire::IpProtocol::kTcp);
    sent.src = tuple.local_ip.v4();
    sent.dst = tuple.remote_ip.v4();
    wire::serialize(sent, q);
    q.u16(tuple.local_port);
    q.u16(tuple.remote_port);
    q.u32(seq.raw());
    wire::IcmpMessage msg;
    msg.type = wire::icmp::kDestinationUnreachable;
    msg.code = wire::icmp::kFragmentationNeeded;
    msg.rest = mtu;
    msg.data = quote;
    std::string icmp(8 + quote.size(), '\0');
    BufferWriter i(icmp.data(), icmp.size());
    wire::serialize(msg, i);
    std::string datagram(20 + icmp.size(), '\0');
    BufferWriter d(datagram.data(), datagram.size());
    wire::Ipv4Header outer;
    outer.total_length = static_cast<uint16_t>(datagram.size());
    outer.protocol = static_cast<uint8_t>(wire::IpProtocol::kIcmp);
    outer.src = wire::Ipv4Address::from_octets(169, 254, 1, 254);  // the router
    outer.dst = kA;
    wire::serialize(outer, d);
    d.bytes(icmp);
    return datagram;
  }

  size_t largest_to_b() const {
    size_t most = 0;
    for (const auto& p : link_) {
      if (p.to == kB) {
        most = std::max(most, p.bytes.size());
      }
    }
    return most;
  }
};

TEST_F(PathMtuHosts, FragNeededLowersTheMssAndResendsWhatDidNotFit) {
  const auto pair = connect_pair();  // clang 14: lambdas cannot capture bindings
  const SocketId client = pair.first;
  const SocketId server = pair.second;
  const FourTuple tuple = a_.info(server)->tuple;
  const tcp::Wrap32 una = a_.connection(server)->sender().next_seqno();
  drop_to_b_ = true;  // the path eats a's big datagrams
  const std::string data(20'000, 'p');
  ASSERT_EQ(a_.write(server, data, now_), data.size());
  drop_to_b_ = false;
  ASSERT_TRUE(link_.empty());

  a_.receive_datagram(frag_needed(1000, tuple, una), now_);
  EXPECT_EQ(a_.stats().path_mtu_updates, 1u);
  EXPECT_EQ(a_.connection(server)->sender_stats().path_mtu_updates, 1u);
  // Resent at once, in datagrams of at most 1000 bytes.
  EXPECT_FALSE(link_.empty());
  EXPECT_LE(largest_to_b(), 1000u);
  std::string got;
  ASSERT_TRUE(run_until([&] {
    got += read_all(b_, client);
    EXPECT_LE(largest_to_b(), 1000u);
    return got.size() == data.size();
  }));
  EXPECT_EQ(got, data);
}

TEST_F(PathMtuHosts, FragNeededForDataNotInFlightIsIgnored) {
  const SocketId server = connect_pair().second;
  const FourTuple tuple = a_.info(server)->tuple;
  const tcp::Wrap32 nxt = a_.connection(server)->sender().next_seqno();
  // Nothing in flight: a blind attacker's guess (RFC 5927 §4.1).
  a_.receive_datagram(frag_needed(600, tuple, nxt), now_);
  // No connection at all.
  a_.receive_datagram(frag_needed(600, FourTuple{kA, 1, kB, 2}, nxt), now_);
  EXPECT_EQ(a_.stats().drops[HostDrop::IcmpStale], 2u);
  EXPECT_EQ(a_.stats().path_mtu_updates, 0u);
  EXPECT_EQ(a_.connection(server)->sender().max_payload(), 1460u - 12u);
}

TEST_F(PathMtuHosts, TinyMtuIsRaisedTo552) {
  const SocketId server = connect_pair().second;
  const FourTuple tuple = a_.info(server)->tuple;
  const tcp::Wrap32 una = a_.connection(server)->sender().next_seqno();
  drop_to_b_ = true;
  a_.write(server, std::string(5000, 'q'), now_);
  a_.receive_datagram(frag_needed(68, tuple, una), now_);
  drop_to_b_ = false;
  EXPECT_EQ(a_.connection(server)->sender().segment_room(), 552u - 40u);
}

}  // namespace
}  // namespace tinytcp::stack
