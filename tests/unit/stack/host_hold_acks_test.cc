// Host::hold_acks / release_acks: a batch of received datagrams costs one
// ACK per connection; and time handed in never runs backwards below it.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "unit/stack/two_hosts.hh"

namespace tinytcp::stack {
namespace {

class HostHoldAcksTest : public TwoHosts {
 protected:
  // a's datagrams to b from now on (a_out_ takes them off the link).
  std::vector<tcp::TcpSegment> capture_a() {
    std::vector<tcp::TcpSegment> segments;
    for (const auto& d : a_sent_) {
      const auto parsed = parse_datagram(d);
      if (parsed) {
        segments.push_back(parsed->segment);
      }
    }
    a_sent_.clear();
    return segments;
  }
  // Delivers everything on the link to a now, as one batch or not.
  size_t deliver_to_a(bool batch) {
    if (batch) {
      a_.hold_acks();
    }
    size_t n = 0;
    while (!link_.empty()) {
      Packet p = std::move(link_.front());
      link_.pop_front();
      if (p.to == kA) {
        a_.receive_datagram(p.bytes, now_);
        ++n;
      }
    }
    return n;
  }
  // Connects, captures A's output and has B write eight whole segments
  // (a partial one would wait for the ACK: Nagle); returns the server socket
  // (0 on failure) and fills `data`.
  SocketId write_eight_segments(std::string& data) {
    const auto [client, server] = connect_pair();
    if (server == 0) {
      return 0;
    }
    a_out_ = [this](std::string_view d) {
      a_sent_.emplace_back(d);
      return true;
    };
    data.assign(8 * b_.connection(client)->sender().max_payload(), 'd');
    if (b_.write(client, data, now_) != data.size()) {
      return 0;
    }
    now_ += delay_;
    return server;
  }
  std::vector<std::string> a_sent_;
};

TEST_F(HostHoldAcksTest, ABatchOfSegmentsGetsOneAck) {
  std::string data;
  const SocketId server = write_eight_segments(data);
  ASSERT_NE(server, 0u);
  ASSERT_EQ(deliver_to_a(true), 8u);
  EXPECT_TRUE(capture_a().empty()) << "ACKs sent inside the batch";
  a_.release_acks(now_);
  const auto acks = capture_a();
  ASSERT_EQ(acks.size(), 1u);
  EXPECT_TRUE(acks[0].ack);
  EXPECT_TRUE(acks[0].payload.empty());
  EXPECT_EQ(read_all(a_, server), data);
}

TEST_F(HostHoldAcksTest, WithoutABatchEverySecondSegmentIsAcked) {
  std::string data;
  const SocketId server = write_eight_segments(data);
  ASSERT_NE(server, 0u);
  ASSERT_EQ(deliver_to_a(false), 8u);
  EXPECT_EQ(capture_a().size(), 4u);
}

TEST_F(HostHoldAcksTest, ReleaseAfterTheConnectionIsGoneIsHarmless) {
  const auto [client, server] = connect_pair();
  ASSERT_NE(server, 0u);
  ASSERT_EQ(b_.write(client, std::string(4 * 1460, 'd'), now_), 4 * 1460u);
  now_ += delay_;
  deliver_to_a(true);
  a_.abort(server, now_);
  a_.release_acks(now_);
  EXPECT_EQ(a_.connection_count(), 0u);
}

TEST_F(HostHoldAcksTest, AnEarlierTimeIsTakenAsTheLatest) {
  const auto [client, server] = connect_pair();
  ASSERT_NE(server, 0u);
  // b's data arrives stamped 10 s before a call a already saw: a's timers
  // stay on the later clock (its delayed ACK is due after `later`, not at
  // an instant before it).
  const Instant later = now_ + 10s;
  a_.tick(later);
  ASSERT_EQ(b_.write(client, "x", now_), 1u);
  now_ += delay_;
  deliver_to_a(false);
  const auto due = a_.next_deadline();
  ASSERT_TRUE(due);
  EXPECT_GT(*due, later);
}

}  // namespace
}  // namespace tinytcp::stack
