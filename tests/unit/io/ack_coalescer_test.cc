#include "io/ack_coalescer.hh"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "stack/datagram_codec.hh"
#include "util/buffer.hh"
#include "wire/ipv6.hh"

namespace tinytcp::io {
namespace {

const stack::FourTuple kFlow{wire::Ipv4Address::from_octets(169, 254, 144, 9), 9,
                             wire::Ipv4Address::from_octets(169, 254, 144, 1), 40000};
const stack::FourTuple kFlow6{*wire::Ipv6Address::parse("fd00:7474:144::9"), 9,
                              *wire::Ipv6Address::parse("fd00:7474:144::1"), 40000};

class AckCoalescerTest : public ::testing::Test {
 protected:
  // A pure ACK (with timestamps, as the Host sends them).
  tcp::TcpSegment ack(uint32_t ackno) {
    tcp::TcpSegment s;
    s.seqno = tcp::Wrap32{100};
    s.ack = true;
    s.ackno = tcp::Wrap32{ackno};
    s.window = 512;
    s.options.timestamps = tcp::Timestamps{1, 2};
    return s;
  }
  tcp::TcpSegment sack(uint32_t ackno, uint32_t left, uint32_t right) {
    tcp::TcpSegment s = ack(ackno);
    s.options.sack_count = 1;
    s.options.sack[0] = tcp::SackBlock{tcp::Wrap32{left}, tcp::Wrap32{right}};
    return s;
  }
  tcp::TcpSegment sacks(uint32_t ackno, std::vector<std::pair<uint32_t, uint32_t>> blocks) {
    tcp::TcpSegment s = ack(ackno);
    s.options.sack_count = static_cast<uint8_t>(blocks.size());
    for (size_t i = 0; i < blocks.size(); ++i) {
      s.options.sack[i] =
          tcp::SackBlock{tcp::Wrap32{blocks[i].first}, tcp::Wrap32{blocks[i].second}};
    }
    return s;
  }
  // Adds a datagram tagged with `name` so the test can say which stayed.
  void add(const std::string& name, const tcp::TcpSegment& s,
           const stack::FourTuple& flow = kFlow) {
    std::string out(2000, '\0');
    BufferWriter w(out.data(), out.size());
    ASSERT_TRUE(stack::serialize_datagram(s, flow, 64, w));
    out.resize(w.size());
    names_.push_back(name);
    datagrams_.push_back(out);
  }
  std::vector<std::string> kept() {
    std::vector<std::string_view> views(datagrams_.begin(), datagrams_.end());
    const size_t n = coalesce_acks(views.data(), views.size());
    std::vector<std::string> out;
    for (size_t i = 0; i < n; ++i) {
      for (size_t k = 0; k < datagrams_.size(); ++k) {
        if (views[i].data() == datagrams_[k].data()) {
          out.push_back(names_[k]);
        }
      }
    }
    return out;
  }

  std::vector<std::string> names_;
  std::vector<std::string> datagrams_;
};

using Names = std::vector<std::string>;

TEST_F(AckCoalescerTest, OlderCumulativeAcksGiveWayToTheNewest) {
  add("a", ack(1000));
  add("b", ack(2000));
  add("c", ack(3000));
  EXPECT_EQ(kept(), (Names{"c"}));
}

TEST_F(AckCoalescerTest, DuplicateAcksWithoutSackAreKept) {
  // RFC 5681 §3.2: the peer counts them for fast retransmit.
  add("a", ack(1000));
  add("b", ack(1000));
  add("c", ack(1000));
  EXPECT_EQ(kept(), (Names{"a", "b", "c"}));
}

TEST_F(AckCoalescerTest, SackAcksForTheSameHoleGiveWayToTheNewest) {
  add("a", sack(1000, 2000, 3000));
  add("b", sack(1000, 2000, 4000));
  add("c", sack(1000, 2000, 5000));
  EXPECT_EQ(kept(), (Names{"c"}));
}

TEST_F(AckCoalescerTest, SackAckBeforeAPlainDuplicateIsKept) {
  add("a", sack(1000, 2000, 3000));
  add("b", ack(1000));
  EXPECT_EQ(kept(), (Names{"a", "b"}));
}

TEST_F(AckCoalescerTest, SackBlocksTheNewestNoLongerListsKeepTheirAck) {
  // The newest ACK's blocks no longer mention 5000-6000 (only the most recent
  // blocks fit): the older ACK is the only word on it.
  add("a", sack(1000, 5000, 6000));
  add("b", sacks(1000, {{7000, 8000}, {9000, 9500}}));
  EXPECT_EQ(kept(), (Names{"a", "b"}));
}

// Heavy loss: each new hole pushes the oldest block out of the three that
// fit. A block the newest ACK lists will be repeated by the next ACKs; one it
// no longer lists must be named by two kept ACKs before an older ACK naming it
// goes (one of them may be lost too). Of A; B,A; C,B,A; D,C,B; E,D,C the
// oldest goes: A is named by the kept b and c.
TEST_F(AckCoalescerTest, RotatedOutBlocksStayNamedTwice) {
  add("a", sacks(1000, {{2000, 3000}}));
  add("b", sacks(1000, {{4000, 5000}, {2000, 3000}}));
  add("c", sacks(1000, {{6000, 7000}, {4000, 5000}, {2000, 3000}}));
  add("d", sacks(1000, {{8000, 9000}, {6000, 7000}, {4000, 5000}}));
  add("e", sacks(1000, {{10000, 11000}, {8000, 9000}, {6000, 7000}}));
  EXPECT_EQ(kept(), (Names{"b", "c", "d", "e"}));
}

// One block growing while its hole stays open: the newest ACK lists it, so
// every older ACK for it goes, however many there were.
TEST_F(AckCoalescerTest, GrowingBlockNeedsOnlyTheNewest) {
  add("a", sacks(1000, {{500, 900}, {2000, 3000}}));  // a D-SACK: stays
  add("b", sacks(1000, {{2000, 4000}}));
  add("c", sacks(1000, {{2000, 5000}}));
  add("d", sacks(1000, {{2000, 6000}}));
  EXPECT_EQ(kept(), (Names{"a", "d"}));
}

// A block the newest no longer lists and only one kept ACK names keeps its
// older ACK too; named by two, the older one goes. A kept D-SACK's other
// blocks count as naming.
TEST_F(AckCoalescerTest, BlockNamedOnceKeepsItsOlderAck) {
  add("a", sacks(1000, {{2000, 2500}}));
  add("b", sacks(1000, {{2000, 3000}}));
  add("c", sacks(1000, {{4000, 5000}}));
  EXPECT_EQ(kept(), (Names{"a", "b", "c"}));
  datagrams_.clear();
  names_.clear();
  add("a", sacks(1000, {{2000, 2500}}));
  add("b", sacks(1000, {{2000, 3000}}));
  add("x", sacks(1000, {{500, 900}, {2000, 3000}}));  // D-SACK below the ACK, then 2000-3000
  add("c", sacks(1000, {{4000, 5000}}));
  EXPECT_EQ(kept(), (Names{"b", "x", "c"}));
}

// Two overlapping blocks in one ACK are one name, not two.
TEST_F(AckCoalescerTest, OneAckNamingABlockTwiceIsOneName) {
  add("a", sacks(1000, {{2000, 3000}}));
  add("x", sacks(1000, {{1900, 3100}, {2000, 3000}}));
  add("c", sacks(1000, {{4000, 5000}}));
  EXPECT_EQ(kept(), (Names{"a", "x", "c"}));
}

TEST_F(AckCoalescerTest, SackBlocksInsideNewerBlocksGiveWay) {
  add("a", sacks(1000, {{5000, 6000}, {7000, 7500}}));
  add("b", sacks(1000, {{7000, 8000}, {4000, 6500}}));
  EXPECT_EQ(kept(), (Names{"b"}));
}

TEST_F(AckCoalescerTest, SackBlocksBelowTheNewerCumulativeAckGiveWay) {
  add("a", sack(1000, 2000, 3000));
  add("b", ack(3000));
  EXPECT_EQ(kept(), (Names{"b"}));
}

TEST_F(AckCoalescerTest, PartlyCoveredSackBlockIsKept) {
  add("a", sack(1000, 2000, 3000));
  add("b", sack(2500, 4000, 5000));  // 2500-3000 is said only by a
  EXPECT_EQ(kept(), (Names{"a", "b"}));
}

TEST_F(AckCoalescerTest, DuplicateSackIsKept) {
  // RFC 2883: a first block at or below the cumulative ACK reports a
  // duplicate; the peer needs it to undo a spurious retransmission.
  add("a", sack(3000, 1000, 2000));
  add("b", ack(4000));
  add("c", sacks(4000, {{5000, 5500}, {4500, 6000}}));  // D-SACK inside the second block
  add("d", ack(6000));
  EXPECT_EQ(kept(), (Names{"a", "c", "d"}));
}

TEST_F(AckCoalescerTest, NewerAckIsNeverRemovedForAnOlderOne) {
  add("a", ack(3000));
  add("b", ack(2000));  // reordered in the batch: both stay
  EXPECT_EQ(kept(), (Names{"a", "b"}));
}

TEST_F(AckCoalescerTest, AckComparisonWrapsAround) {
  add("a", ack(0xfffffff0u));
  add("b", ack(0x10));
  EXPECT_EQ(kept(), (Names{"b"}));
}

TEST_F(AckCoalescerTest, ConnectionsAreCoalescedSeparately) {
  stack::FourTuple other = kFlow;
  other.remote_port = 40001;
  add("a1", ack(1000));
  add("b1", ack(1000), other);
  add("a2", ack(2000));
  add("b2", ack(2000), other);
  EXPECT_EQ(kept(), (Names{"a2", "b2"}));
}

TEST_F(AckCoalescerTest, DataFinSynRstAreKept) {
  const std::string payload(100, 'x');
  auto data = ack(1000);
  data.payload = payload;
  auto fin = ack(1000);
  fin.fin = true;
  auto rst = ack(1000);
  rst.rst = true;
  auto syn = ack(1000);
  syn.syn = true;
  add("data", data);
  add("fin", fin);
  add("rst", rst);
  add("syn", syn);
  add("ack", ack(5000));
  EXPECT_EQ(kept(), (Names{"data", "fin", "rst", "syn", "ack"}));
}

TEST_F(AckCoalescerTest, MalformedOrTruncatedDatagramsAreKept) {
  add("a", ack(1000));
  add("b", ack(2000));
  const std::string whole = datagrams_[0];
  for (size_t n = 0; n < whole.size(); ++n) {
    datagrams_[0] = whole.substr(0, n);
    EXPECT_EQ(kept(), (Names{"a", "b"})) << "length " << n;
  }
}

TEST_F(AckCoalescerTest, FlowsPastTheLimitAreLeftAlone) {
  for (uint16_t port = 0; port < kAckCoalescerMaxFlows + 1; ++port) {
    stack::FourTuple flow = kFlow;
    flow.remote_port = static_cast<uint16_t>(50000 + port);
    add("old" + std::to_string(port), ack(1000), flow);
  }
  for (uint16_t port = 0; port < kAckCoalescerMaxFlows + 1; ++port) {
    stack::FourTuple flow = kFlow;
    flow.remote_port = static_cast<uint16_t>(50000 + port);
    add("new" + std::to_string(port), ack(2000), flow);
  }
  const Names k = kept();
  // Only the newest ACKs of the first kMaxFlows connections seen from the end
  // are tracked: one old ACK stays.
  EXPECT_EQ(k.size(), kAckCoalescerMaxFlows + 2);
}

TEST_F(AckCoalescerTest, EmptyBatch) {
  EXPECT_TRUE(kept().empty());
}

TEST_F(AckCoalescerTest, Ipv6AcksAreCoalescedAsIpv4Ones) {
  add("a", ack(1000), kFlow6);
  add("b", sack(1000, 2000, 3000), kFlow6);
  add("c", ack(4000), kFlow6);
  EXPECT_EQ(kept(), (Names{"c"}));
}

TEST_F(AckCoalescerTest, Ipv6DuplicatesAndDsacksAreKept) {
  add("a", ack(1000), kFlow6);
  add("b", ack(1000), kFlow6);
  add("d", sack(1000, 500, 900), kFlow6);  // D-SACK: below the cumulative ACK
  add("c", ack(1000), kFlow6);
  EXPECT_EQ(kept(), (Names{"a", "b", "d", "c"}));
}

TEST_F(AckCoalescerTest, FamiliesAndIpv6ConnectionsAreSeparate) {
  // The same ports over IPv4 and IPv6, and another IPv6 peer.
  stack::FourTuple other6 = kFlow6;
  other6.remote_ip = *wire::Ipv6Address::parse("fd00:7474:144::2");
  add("v4a", ack(1000));
  add("v6a", ack(1000), kFlow6);
  add("o6a", ack(1000), other6);
  add("v4b", ack(2000));
  add("v6b", ack(2000), kFlow6);
  add("o6b", ack(2000), other6);
  EXPECT_EQ(kept(), (Names{"v4b", "v6b", "o6b"}));
}

TEST_F(AckCoalescerTest, Ipv6DataExtensionHeadersAndTruncationsAreKept) {
  const std::string payload(100, 'x');
  auto data = ack(1000);
  data.payload = payload;
  add("data", data, kFlow6);
  add("a", ack(1000), kFlow6);
  add("b", ack(2000), kFlow6);
  EXPECT_EQ(kept(), (Names{"data", "b"}));
  datagrams_[1][6] = 60;  // next header: destination options
  EXPECT_EQ(kept(), (Names{"data", "a", "b"}));
  datagrams_[1][6] = 6;
  const std::string whole = datagrams_[1];
  for (size_t n = 0; n < whole.size(); ++n) {
    datagrams_[1] = whole.substr(0, n);
    EXPECT_EQ(kept(), (Names{"data", "a", "b"})) << "length " << n;
  }
}

}  // namespace
}  // namespace tinytcp::io
