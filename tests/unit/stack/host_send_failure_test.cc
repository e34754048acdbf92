// A datagram the device would not take (ENOBUFS, EAGAIN) is handed back to
// the Host (Host::on_send_failed): the segment in it goes again at once,
// not when RACK or the RTO would find it lost (issue 15).

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "stack/host.hh"
#include "unit/stack/two_hosts.hh"

namespace tinytcp::stack {
namespace {

using namespace std::chrono_literals;

class SendFailureHosts : public TwoHosts {
 protected:
  SendFailureHosts() {
    // a's third datagram to b is refused by "the device": kept, not sent.
    a_out_ = [this](std::string_view d) {
      if (++a_datagrams_ == refuse_at_) {
        refused_.emplace_back(d);
        return true;
      }
      return false;
    };
  }
};

TEST_F(SendFailureHosts, ARefusedSegmentGoesAgainAtOnce) {
  const auto pair = connect_pair();  // clang 14: lambdas cannot capture bindings
  const SocketId client = pair.first;
  const SocketId server = pair.second;
  refuse_at_ = a_datagrams_ + 3;
  const std::string data(20'000, 'r');
  ASSERT_EQ(a_.write(server, data, now_), data.size());
  ASSERT_EQ(refused_.size(), 1u);
  // As the runtime does: after the write, not from inside the output call
  // (and on a real clock a little later: RACK orders sends by time).
  now_ += 50us;
  a_.on_send_failed(refused_.front(), now_);
  EXPECT_EQ(a_.next_deadline(), now_);
  const Instant start = now_;
  std::string got;
  ASSERT_TRUE(run_until([&] {
    got += read_all(b_, client);
    return got.size() == data.size();
  }));
  EXPECT_EQ(got, data);
  EXPECT_EQ(a_.stats().send_failures, 1u);
  EXPECT_EQ(a_.stats().send_failures_resent, 1u);
  const auto& stats = a_.connection(server)->sender_stats();
  EXPECT_EQ(stats.local_send_failures, 1u);
  EXPECT_EQ(stats.rto_expirations, 0u);
  EXPECT_EQ(stats.rack_marked_lost, 0u);
  EXPECT_EQ(stats.fast_retransmits, 0u);
  // Delivered in a few round trips (the link's delay is 1 ms each way), not
  // after an RTO (200 ms at least).
  EXPECT_LT(now_ - start, 150ms);
}

TEST_F(SendFailureHosts, WhatIsNotASegmentInFlightIsCountedAndIgnored) {
  const SocketId server = connect_pair().second;
  a_.on_send_failed("not a datagram", now_);
  // A pure ACK: nothing to resend.
  const SocketId other = connect_pair(81).first;
  refuse_at_ = a_datagrams_ + 1;
  ASSERT_EQ(b_.write(other, "x", now_), 1u);
  run_for(100ms);
  for (const auto& d : refused_) {
    a_.on_send_failed(d, now_);
  }
  ASSERT_EQ(refused_.size(), 1u);  // a's ACK of the "x"
  EXPECT_EQ(a_.stats().send_failures, 2u);
  EXPECT_EQ(a_.stats().send_failures_resent, 0u);
  EXPECT_EQ(a_.connection(server)->sender_stats().local_send_failures, 0u);
}

}  // namespace
}  // namespace tinytcp::stack
