#include "session/session_sender.hh"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace tinytcp::session {
namespace {

using namespace std::chrono_literals;

const Instant kT0 = Instant::from_epoch(Duration(1s));

// Sends everything next_data() offers, in pieces of at most `piece`.
std::string drain(SessionSender& s, size_t piece = 1000) {
  std::string out;
  for (auto d = s.next_data(piece); !d.empty(); d = s.next_data(piece)) {
    out += d;
    s.sent(d.size());
  }
  return out;
}

TEST(SessionSenderTest, SendsNothingBeyondThePeersLimit) {
  SessionSender s(100);
  EXPECT_EQ(s.write("abcdefghij", kT0), 10u);
  EXPECT_EQ(drain(s), "");  // no limit yet (no WELCOME)
  s.raise_limit(4);
  EXPECT_EQ(drain(s), "abcd");
  s.acknowledge(2, 8);
  EXPECT_EQ(drain(s), "efgh");
  EXPECT_EQ(s.in_flight(), 6u);
  s.raise_limit(5);  // a limit never shrinks
  EXPECT_EQ(drain(s), "");
}

TEST(SessionSenderTest, TakesOnlyWhatTheReplayBufferHolds) {
  SessionSender s(4);
  EXPECT_EQ(s.write("abcdef", kT0), 4u);
  EXPECT_FALSE(s.has_free_space());
  s.raise_limit(100);
  drain(s);
  s.acknowledge(3, 100);
  EXPECT_TRUE(s.has_free_space());
  EXPECT_EQ(s.write("ef", kT0), 2u);
}

TEST(SessionSenderTest, ANewCarrierResendsFromTheFirstUnacknowledgedByteAndCountsTheReplay) {
  SessionSender s(100);
  s.write("abcdefghij", kT0);
  s.raise_limit(100);
  EXPECT_EQ(drain(s), "abcdefghij");
  s.acknowledge(3, 100);
  s.restart();
  EXPECT_EQ(s.in_flight(), 0u);
  const auto d = s.next_data(4);
  EXPECT_EQ(d, "defg");
  EXPECT_EQ(s.sent(d.size()), 4u);  // all four had gone out before
  s.write("kl", kT0);
  const auto rest = s.next_data(100);
  EXPECT_EQ(rest, "hijkl");
  EXPECT_EQ(s.sent(rest.size()), 3u);  // h, i, j again; k and l new
  EXPECT_EQ(s.max_sent_position(), 12u);
}

TEST(SessionSenderTest, TheFinTakesOnePositionAfterTheData) {
  SessionSender s(100);
  s.write("abc", kT0);
  s.request_fin();
  EXPECT_FALSE(s.fin_due());  // bytes go first
  s.raise_limit(100);
  drain(s);
  ASSERT_TRUE(s.fin_due());
  EXPECT_EQ(s.fin_position(), 3u);
  s.fin_sent();
  EXPECT_FALSE(s.fin_due());
  EXPECT_EQ(s.max_sent_position(), 4u);
  s.acknowledge(3, 100);
  EXPECT_FALSE(s.fin_acked());
  EXPECT_TRUE(s.has_unsent());
  s.restart();  // a new carrier before the FIN was acknowledged: it goes again
  EXPECT_TRUE(s.fin_due());
  s.fin_sent();
  s.acknowledge(4, 100);
  EXPECT_TRUE(s.fin_acked());
  EXPECT_FALSE(s.has_unsent());
  EXPECT_FALSE(s.fin_due());
}

TEST(SessionSenderTest, RefusesPositionsNeverSentOrBehindWhatWasAcknowledged) {
  SessionSender s(100);
  s.write("abcdefghij", kT0);
  s.raise_limit(100);
  s.sent(s.next_data(6).size());
  EXPECT_EQ(s.check_position(7), SessionDrop::AckBeyondSent);
  EXPECT_EQ(s.check_position(6), std::nullopt);
  s.acknowledge(5, 100);
  EXPECT_EQ(s.check_position(4), SessionDrop::LostAcked);
  EXPECT_EQ(s.check_position(5), std::nullopt);
  // The FIN's position exists only once a FIN went out.
  EXPECT_EQ(s.check_position(11), SessionDrop::AckBeyondSent);
}

TEST(SessionSenderTest, TheOldestUnacknowledgedByteAges) {
  SessionSender s(100);
  EXPECT_EQ(s.oldest_unacked_age(kT0), Duration{0});
  s.write("abc", kT0);
  s.write("def", kT0 + 10ms);
  s.raise_limit(100);
  drain(s);
  EXPECT_EQ(s.oldest_unacked_age(kT0 + 30ms), 30ms);
  s.acknowledge(3, 100);  // the first write is through
  EXPECT_EQ(s.oldest_unacked_age(kT0 + 30ms), 20ms);
  s.acknowledge(6, 100);
  EXPECT_EQ(s.oldest_unacked_age(kT0 + 30ms), Duration{0});
}

}  // namespace
}  // namespace tinytcp::session
