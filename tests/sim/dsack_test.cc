// RFC 2883 between two of our own connections: the receiver reports every
// duplicate segment in a D-SACK block, and the sender counts it as a
// duplicate report, never as data held or as a sign of loss.

#include <gtest/gtest.h>

#include <string>

#include "sim/sim_network.hh"

namespace tinytcp::sim {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using tcp::TcpConfig;

// A sends `bytes` to B; B reads everything as it arrives.
struct OneWay {
  OneWay(const TcpConfig& config, LinkParams ab, LinkParams ba, uint64_t seed, size_t bytes)
      : net(config, config, ab, ba, seed), out(Rng(seed).bytes(bytes)) {
    net.b().listen();
    net.a().connect(net.now());
    // Sorts B's D-SACKs (RFC 2883 §4) as they leave: a first block below the
    // ACK, or one inside the second block.
    net.ba().set_filter([this](const tcp::TcpSegment& s) {
      const auto& o = s.options;
      if (o.sack_count > 0 && !tcp::seq_gt(o.sack[0].right, s.ackno)) {
        ++dsacks_below_ack;
      } else if (o.sack_count > 1 && !tcp::seq_lt(o.sack[0].left, o.sack[1].left) &&
                 !tcp::seq_gt(o.sack[0].right, o.sack[1].right)) {
        ++dsacks_of_held_data;
      }
      return false;
    });
  }
  // Runs until B has every byte, then a second more for the last ACKs.
  bool run(Duration limit) {
    const bool done =
        net.run_until([&] { return in.size() == out.size(); }, limit, [&] { pump(); });
    net.run_for(seconds(1), [&] { pump(); });
    return done;
  }
  void pump() {
    if (written < out.size()) {
      written += net.a().outbound().push(std::string_view(out).substr(written));
    }
    auto& inbound = net.b().inbound();
    while (inbound.bytes_buffered() > 0) {
      in.append(inbound.peek());
      inbound.pop(inbound.peek().size());
    }
    net.a().tick(net.now());
    net.b().tick(net.now());
  }
  const tcp::SenderStats& sender() { return net.a().sender_stats(); }
  const tcp::ReceiverStats& receiver() { return net.b().receiver_stats(); }

  Network net;
  std::string out;
  size_t written = 0;
  std::string in;
  uint64_t dsacks_below_ack = 0;
  uint64_t dsacks_of_held_data = 0;
};

LinkParams path() {
  LinkParams p;
  p.delay = milliseconds(10);
  return p;
}

TEST(DsackTest, EveryDuplicatedSegmentIsReportedAndNoneIsRetransmitted) {
  LinkParams ab = path();
  ab.duplicate = 1.0;  // every data segment arrives twice
  OneWay t(TcpConfig{}, ab, path(), 1, 300 * 1000);
  ASSERT_TRUE(t.run(seconds(10)));
  EXPECT_EQ(t.in, t.out);
  // Each second copy of a data segment is a duplicate: reported once.
  EXPECT_GE(t.receiver().dsack_blocks, t.receiver().duplicate_segments);
  EXPECT_GT(t.receiver().dsack_blocks, 200u);
  // Every report reaches the sender (nothing is lost) and is counted as one.
  EXPECT_EQ(t.dsacks_below_ack, t.receiver().dsack_blocks);
  EXPECT_EQ(t.sender().dsack_blocks, t.receiver().dsack_blocks);
  EXPECT_EQ(t.sender().input_errors.total(), 0u);
  // Not mistaken for loss: nothing was lost, nothing goes out again.
  EXPECT_EQ(t.sender().retransmitted_segments, 0u);
  EXPECT_EQ(t.sender().fast_retransmits, 0u);
  EXPECT_EQ(t.sender().rto_expirations, 0u);
}

TEST(DsackTest, DuplicateOfHeldDataIsNotTakenForNewSackInformation) {
  // One segment lost once; every segment duplicated, so the segments after
  // the hole arrive twice while held out of order.
  LinkParams ab = path();
  ab.duplicate = 1.0;
  OneWay t(TcpConfig{}, ab, path(), 2, 300 * 1000);
  bool dropped = false;
  t.net.ab().set_filter([&](const tcp::TcpSegment& s) {
    if (!dropped && s.payload.size() > 0 && t.net.a().sender_stats().segments_sent > 30) {
      dropped = true;
      return true;
    }
    return false;
  });
  ASSERT_TRUE(t.run(seconds(10)));
  EXPECT_EQ(t.in, t.out);
  ASSERT_TRUE(dropped);
  EXPECT_GT(t.receiver().out_of_order_segments, 0u);
  // Both kinds went out: copies of held segments while the hole was open,
  // copies below the ACK otherwise.
  EXPECT_GT(t.dsacks_of_held_data, 0u);
  EXPECT_GT(t.dsacks_below_ack, 0u);
  EXPECT_EQ(t.dsacks_of_held_data + t.dsacks_below_ack, t.receiver().dsack_blocks);
  // The sender counts those below its ACK; a block inside a block already
  // SACKed is neither an error nor new SACK information to it.
  EXPECT_GE(t.sender().dsack_blocks, t.dsacks_below_ack);
  EXPECT_EQ(t.sender().input_errors.total(), 0u);
  // The one lost segment is the only one sent again.
  EXPECT_EQ(t.sender().retransmitted_segments, 1u);
  EXPECT_EQ(t.sender().rto_expirations, 0u);
}

TEST(DsackTest, SpuriousTimeoutRetransmissionsAreReported) {
  // B's ACKs are held up long enough for A's timer to fire: everything A
  // sends again, B already has.
  OneWay t(TcpConfig{}, path(), path(), 3, 100 * 1000);
  ASSERT_TRUE(t.net.run_until(
      [&] {
        return t.net.a().state() == tcp::TcpState::Established &&
               t.net.b().state() == tcp::TcpState::Established;
      },
      seconds(1)));
  t.net.ba().set_params([] {
    LinkParams p = path();
    p.delay = seconds(2);
    return p;
  }());
  ASSERT_TRUE(t.run(seconds(30)));
  EXPECT_EQ(t.in, t.out);
  EXPECT_GT(t.sender().rto_expirations, 0u);
  EXPECT_GT(t.receiver().dsack_blocks, 0u);
  EXPECT_EQ(t.dsacks_below_ack, t.receiver().dsack_blocks);
  EXPECT_EQ(t.sender().dsack_blocks, t.receiver().dsack_blocks);
  EXPECT_EQ(t.sender().input_errors.total(), 0u);
}

}  // namespace
}  // namespace tinytcp::sim
