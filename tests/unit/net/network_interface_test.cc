#include "net/network_interface.hh"

#include <gtest/gtest.h>

#include <string>

#include "unit/net/net_test_util.hh"

namespace tinytcp::net {
namespace {

using namespace std::chrono_literals;
using test::ip;
using wire::ArpMessage;
using wire::ArpOpcode;
using wire::EtherType;
using wire::Ipv4Address;
using wire::MacAddress;

const MacAddress kOurMac{{0x02, 0, 0, 0, 0, 0x01}};
const MacAddress kPeerMac{{0x02, 0, 0, 0, 0, 0x02}};
const MacAddress kOtherMac{{0x02, 0, 0, 0, 0, 0x03}};

class NetworkInterfaceTest : public ::testing::Test {
 protected:
  NetworkInterfaceTest() { make({}); }

  void make(NetworkInterfaceConfig config) {
    config.mac = kOurMac;
    config.ip = ip("10.0.0.1");
    iface_ = std::make_unique<NetworkInterface>(config, frames_);
    iface_->set_datagram_sink(&up_, 3);
  }

  void advance(Duration d) {
    now_ += d;
    iface_->tick(now_);
  }
  void send(std::string_view datagram, Ipv4Address next_hop) {
    iface_->send_datagram(datagram, next_hop, now_);
  }
  void receive(const std::string& frame) { iface_->receive_frame(frame, now_); }
  void receive_arp(ArpOpcode op, const MacAddress& eth_dst, const MacAddress& sender_mac,
                   Ipv4Address sender_ip, Ipv4Address target_ip,
                   const MacAddress& target_mac = {}) {
    receive(test::ethernet_frame(
        eth_dst, sender_mac, EtherType::kArp,
        test::arp_payload({op, sender_mac, sender_ip, target_mac, target_ip})));
  }
  // The peer 10.0.0.2 answers our request.
  void peer_replies() {
    receive_arp(ArpOpcode::kReply, kOurMac, kPeerMac, ip("10.0.0.2"), ip("10.0.0.1"), kOurMac);
  }

  // Pops the next frame sent and checks that it is an ARP message.
  ArpMessage expect_arp(ArpOpcode op, const MacAddress& eth_dst) {
    EXPECT_FALSE(frames_.frames.empty());
    if (frames_.frames.empty()) {
      return {};
    }
    const std::string frame = frames_.frames.front();
    frames_.frames.erase(frames_.frames.begin());
    const auto eth = wire::parse_ethernet(frame);
    EXPECT_TRUE(eth);
    EXPECT_EQ(eth->header.dst, eth_dst);
    EXPECT_EQ(eth->header.src, kOurMac);
    EXPECT_EQ(eth->header.type, static_cast<uint16_t>(EtherType::kArp));
    const auto arp = wire::parse_arp(eth->payload);
    EXPECT_TRUE(arp);
    EXPECT_EQ(arp->opcode, op);
    EXPECT_EQ(arp->sender_mac, kOurMac);
    EXPECT_EQ(arp->sender_ip, ip("10.0.0.1"));
    return *arp;
  }
  void expect_request_for(Ipv4Address target) {
    const auto arp = expect_arp(ArpOpcode::kRequest, MacAddress::broadcast());
    EXPECT_EQ(arp.target_ip, target);
    EXPECT_TRUE(arp.target_mac.is_zero());
  }
  void expect_ipv4(const MacAddress& dst, std::string_view datagram) {
    ASSERT_FALSE(frames_.frames.empty());
    const std::string frame = frames_.frames.front();
    frames_.frames.erase(frames_.frames.begin());
    EXPECT_EQ(frame, test::ethernet_frame(dst, kOurMac, EtherType::kIpv4, datagram));
  }
  void expect_nothing_sent() { EXPECT_TRUE(frames_.frames.empty()) << frames_.frames.size(); }
  uint64_t drops(InterfaceDrop d) const { return iface_->stats().drops[d]; }

  const std::string dgram1_ = test::ipv4_datagram(ip("10.0.0.1"), ip("10.0.9.9"), 64, 10);
  const std::string dgram2_ = test::ipv4_datagram(ip("10.0.0.1"), ip("10.0.9.9"), 64, 20);
  Instant now_;
  test::RecordingFrameSink frames_;
  test::RecordingDatagramSink up_;
  std::unique_ptr<NetworkInterface> iface_;
};

TEST_F(NetworkInterfaceTest, StartSendsGratuitousArp) {
  iface_->start(now_);
  const auto arp = expect_arp(ArpOpcode::kRequest, MacAddress::broadcast());
  EXPECT_EQ(arp.target_ip, ip("10.0.0.1"));
  expect_nothing_sent();
}

TEST_F(NetworkInterfaceTest, MissBroadcastsRequestAndQueues) {
  send(dgram1_, ip("10.0.0.2"));
  expect_request_for(ip("10.0.0.2"));
  expect_nothing_sent();
  EXPECT_EQ(iface_->pending_datagrams(), 1u);
}

TEST_F(NetworkInterfaceTest, ReplySendsQueuedDatagramsInOrder) {
  send(dgram1_, ip("10.0.0.2"));
  send(dgram2_, ip("10.0.0.2"));
  expect_request_for(ip("10.0.0.2"));
  advance(100ms);
  peer_replies();
  expect_ipv4(kPeerMac, dgram1_);
  expect_ipv4(kPeerMac, dgram2_);
  expect_nothing_sent();
  EXPECT_EQ(iface_->pending_datagrams(), 0u);
  EXPECT_EQ(iface_->next_deadline(), std::nullopt);
}

TEST_F(NetworkInterfaceTest, ReplyReleasesOnlyItsOwnDatagrams) {
  send(dgram1_, ip("10.0.0.3"));
  send(dgram2_, ip("10.0.0.2"));
  expect_request_for(ip("10.0.0.3"));
  expect_request_for(ip("10.0.0.2"));
  peer_replies();
  expect_ipv4(kPeerMac, dgram2_);
  expect_nothing_sent();
  EXPECT_EQ(iface_->pending_datagrams(), 1u);
}

TEST_F(NetworkInterfaceTest, WarmCacheSendsAtOnce) {
  send(dgram1_, ip("10.0.0.2"));
  expect_request_for(ip("10.0.0.2"));
  peer_replies();
  expect_ipv4(kPeerMac, dgram1_);
  send(dgram2_, ip("10.0.0.2"));
  expect_ipv4(kPeerMac, dgram2_);
  EXPECT_EQ(iface_->stats().arp_requests_sent, 1u);
}

TEST_F(NetworkInterfaceTest, RequestNotRepeatedWithinFiveSeconds) {
  send(dgram1_, ip("10.0.0.2"));
  expect_request_for(ip("10.0.0.2"));
  advance(5s - 1ns);
  send(dgram2_, ip("10.0.0.2"));
  expect_nothing_sent();
  advance(1ns);
  send(dgram2_, ip("10.0.0.2"));
  expect_request_for(ip("10.0.0.2"));
}

TEST_F(NetworkInterfaceTest, QueuedDatagramDroppedAfterFiveSeconds) {
  send(dgram1_, ip("10.0.0.2"));
  expect_request_for(ip("10.0.0.2"));
  EXPECT_EQ(iface_->next_deadline(), now_ + 5s);
  advance(5s - 1ns);
  EXPECT_EQ(iface_->pending_datagrams(), 1u);
  advance(1ns);
  EXPECT_EQ(iface_->pending_datagrams(), 0u);
  EXPECT_EQ(drops(InterfaceDrop::PendingTimeout), 1u);
  peer_replies();
  expect_nothing_sent();
}

TEST_F(NetworkInterfaceTest, MappingExpiresAfterThirtySeconds) {
  send(dgram1_, ip("10.0.0.2"));
  expect_request_for(ip("10.0.0.2"));
  peer_replies();
  expect_ipv4(kPeerMac, dgram1_);
  advance(30s - 1ns);
  send(dgram2_, ip("10.0.0.2"));
  expect_ipv4(kPeerMac, dgram2_);
  advance(1ns);
  send(dgram2_, ip("10.0.0.2"));
  expect_request_for(ip("10.0.0.2"));
  expect_nothing_sent();
}

TEST_F(NetworkInterfaceTest, AnswersRequestForItsAddressAndLearnsTheAsker) {
  receive_arp(ArpOpcode::kRequest, MacAddress::broadcast(), kPeerMac, ip("10.0.0.2"),
              ip("10.0.0.1"));
  const auto reply = expect_arp(ArpOpcode::kReply, kPeerMac);
  EXPECT_EQ(reply.target_mac, kPeerMac);
  EXPECT_EQ(reply.target_ip, ip("10.0.0.2"));
  send(dgram1_, ip("10.0.0.2"));
  expect_ipv4(kPeerMac, dgram1_);
}

TEST_F(NetworkInterfaceTest, IgnoresRequestForAnotherAddress) {
  receive_arp(ArpOpcode::kRequest, MacAddress::broadcast(), kPeerMac, ip("10.0.0.2"),
              ip("10.0.0.7"));
  expect_nothing_sent();
  EXPECT_EQ(drops(InterfaceDrop::ArpNotForUs), 1u);
  send(dgram1_, ip("10.0.0.2"));
  expect_request_for(ip("10.0.0.2"));
}

TEST_F(NetworkInterfaceTest, RefreshesAKnownMappingFromAnyArp) {
  receive_arp(ArpOpcode::kRequest, MacAddress::broadcast(), kPeerMac, ip("10.0.0.2"),
              ip("10.0.0.1"));
  expect_arp(ArpOpcode::kReply, kPeerMac);
  advance(20s);
  // The peer moved to another MAC and asks for someone else: RFC 826 merge.
  receive_arp(ArpOpcode::kRequest, MacAddress::broadcast(), kOtherMac, ip("10.0.0.2"),
              ip("10.0.0.7"));
  advance(20s);
  send(dgram1_, ip("10.0.0.2"));
  expect_ipv4(kOtherMac, dgram1_);
}

TEST_F(NetworkInterfaceTest, IgnoresFramesForAnotherMac) {
  receive(test::ethernet_frame(kOtherMac, kPeerMac, EtherType::kIpv4, dgram1_));
  receive_arp(ArpOpcode::kRequest, kOtherMac, kPeerMac, ip("10.0.0.2"), ip("10.0.0.1"));
  expect_nothing_sent();
  EXPECT_TRUE(up_.datagrams.empty());
  EXPECT_EQ(drops(InterfaceDrop::NotForUs), 2u);
}

TEST_F(NetworkInterfaceTest, DeliversIpv4ForUsAndBroadcast) {
  receive(test::ethernet_frame(kOurMac, kPeerMac, EtherType::kIpv4, dgram1_));
  receive(test::ethernet_frame(MacAddress::broadcast(), kPeerMac, EtherType::kIpv4, dgram2_));
  ASSERT_EQ(up_.datagrams.size(), 2u);
  EXPECT_EQ(up_.datagrams[0].datagram, dgram1_);
  EXPECT_EQ(up_.datagrams[0].interface_index, 3u);
  EXPECT_EQ(up_.datagrams[1].datagram, dgram2_);
  EXPECT_EQ(iface_->stats().datagrams_delivered, 2u);
  // The Host must know which came as a link-layer broadcast (RFC 1122 §3.2.2).
  EXPECT_FALSE(up_.datagrams[0].link_multicast);
  EXPECT_TRUE(up_.datagrams[1].link_multicast);
}

TEST_F(NetworkInterfaceTest, CountsMalformedFrames) {
  receive(std::string(13, '\0'));
  EXPECT_EQ(iface_->stats().ethernet_errors[wire::EthernetError::Truncated], 1u);
  receive(test::ethernet_frame(kOurMac, kPeerMac, static_cast<EtherType>(0x86dd), "x"));
  EXPECT_EQ(drops(InterfaceDrop::UnknownEtherType), 1u);
  receive(test::ethernet_frame(kOurMac, kPeerMac, EtherType::kArp, std::string(27, '\0')));
  EXPECT_EQ(iface_->stats().arp_errors[wire::ArpError::Truncated], 1u);
  iface_->set_datagram_sink(nullptr, 0);
  receive(test::ethernet_frame(kOurMac, kPeerMac, EtherType::kIpv4, dgram1_));
  EXPECT_EQ(drops(InterfaceDrop::NoUpperLayer), 1u);
  expect_nothing_sent();
}

TEST_F(NetworkInterfaceTest, RejectsArpFromInvalidSenders) {
  receive_arp(ArpOpcode::kRequest, MacAddress::broadcast(), kPeerMac, ip("10.0.0.1"),
              ip("10.0.0.1"));  // someone else claims our address
  receive_arp(ArpOpcode::kRequest, MacAddress::broadcast(), MacAddress::broadcast(), ip("10.0.0.2"),
              ip("10.0.0.1"));
  receive_arp(ArpOpcode::kRequest, MacAddress::broadcast(), kPeerMac, ip("224.0.0.1"),
              ip("10.0.0.1"));
  expect_nothing_sent();
  EXPECT_EQ(drops(InterfaceDrop::ArpFromInvalidSender), 3u);
}

TEST_F(NetworkInterfaceTest, AnswersProbeWithoutLearning) {
  receive_arp(ArpOpcode::kRequest, MacAddress::broadcast(), kPeerMac, ip("0.0.0.0"),
              ip("10.0.0.1"));
  expect_arp(ArpOpcode::kReply, kPeerMac);
  EXPECT_EQ(iface_->arp_cache().size(), 0u);
}

TEST_F(NetworkInterfaceTest, DropsDatagramLargerThanMtu) {
  NetworkInterfaceConfig config;
  config.mtu = 100;
  make(config);
  send(test::ipv4_datagram(ip("10.0.0.1"), ip("10.0.0.2"), 64, 81), ip("10.0.0.2"));
  expect_nothing_sent();
  EXPECT_EQ(drops(InterfaceDrop::DatagramTooBig), 1u);
  send(test::ipv4_datagram(ip("10.0.0.1"), ip("10.0.0.2"), 64, 80), ip("10.0.0.2"));
  expect_request_for(ip("10.0.0.2"));
}

TEST_F(NetworkInterfaceTest, FullQueueDropsTheOldest) {
  NetworkInterfaceConfig config;
  config.pending_datagrams = 2;
  make(config);
  const auto d3 = test::ipv4_datagram(ip("10.0.0.1"), ip("10.0.0.2"), 64, 30);
  send(dgram1_, ip("10.0.0.2"));
  send(dgram2_, ip("10.0.0.2"));
  send(d3, ip("10.0.0.2"));
  expect_request_for(ip("10.0.0.2"));
  EXPECT_EQ(drops(InterfaceDrop::PendingEvicted), 1u);
  peer_replies();
  expect_ipv4(kPeerMac, dgram2_);
  expect_ipv4(kPeerMac, d3);
  expect_nothing_sent();
}

TEST_F(NetworkInterfaceTest, QueueBytesAreBoundedToo) {
  NetworkInterfaceConfig config;
  config.mtu = 100;
  config.pending_bytes = 250;
  make(config);
  std::vector<std::string> sent;
  for (size_t i = 0; i < 20; ++i) {
    sent.push_back(test::ipv4_datagram(ip("10.0.0.1"), ip("10.0.0.2"), 64, 20 + (i * 37) % 61));
    send(sent.back(), ip("10.0.0.2"));
    size_t bytes = 0;
    for (size_t k = sent.size() - iface_->pending_datagrams(); k < sent.size(); ++k) {
      bytes += sent[k].size();
    }
    EXPECT_LE(bytes, 250u);
  }
  expect_request_for(ip("10.0.0.2"));
  const size_t kept = iface_->pending_datagrams();
  EXPECT_EQ(drops(InterfaceDrop::PendingEvicted), sent.size() - kept);
  peer_replies();
  // The newest datagrams survive, in order, byte for byte.
  for (size_t k = sent.size() - kept; k < sent.size(); ++k) {
    expect_ipv4(kPeerMac, sent[k]);
  }
  expect_nothing_sent();
}

TEST_F(NetworkInterfaceTest, FullTableDropsAndCounts) {
  NetworkInterfaceConfig config;
  config.arp.max_entries = 2;
  make(config);
  send(dgram1_, ip("10.0.0.2"));
  send(dgram1_, ip("10.0.0.3"));
  send(dgram1_, ip("10.0.0.4"));
  EXPECT_EQ(drops(InterfaceDrop::ArpTableFull), 1u);
  EXPECT_EQ(iface_->stats().arp_requests_sent, 2u);
  // Once the pending entries are stale their room is reclaimed.
  advance(5s);
  send(dgram1_, ip("10.0.0.4"));
  EXPECT_EQ(iface_->stats().arp_requests_sent, 3u);
  EXPECT_EQ(drops(InterfaceDrop::ArpTableFull), 1u);
}

TEST_F(NetworkInterfaceTest, LimitedBroadcastNeedsNoArp) {
  send(dgram1_, ip("255.255.255.255"));
  expect_ipv4(MacAddress::broadcast(), dgram1_);
}

}  // namespace
}  // namespace tinytcp::net
