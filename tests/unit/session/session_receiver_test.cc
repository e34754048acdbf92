#include "session/session_receiver.hh"

#include <gtest/gtest.h>

#include <string>

namespace tinytcp::session {
namespace {

TEST(SessionReceiverTest, TakesDataUpToTheLimitAndTheLimitMovesAsTheAppReads) {
  SessionReceiver r(8);
  EXPECT_EQ(r.limit(), 8u);
  EXPECT_EQ(r.on_data("abcdef"), std::nullopt);
  EXPECT_EQ(r.on_data("ghi"), SessionDrop::DataPastLimit);
  EXPECT_EQ(r.readable(), "abcdef");
  EXPECT_EQ(r.consume(4), 4u);
  EXPECT_EQ(r.limit(), 12u);
  EXPECT_EQ(r.on_data("ghi"), std::nullopt);
  EXPECT_EQ(r.position(), 9u);
  EXPECT_EQ(r.consume(100), 5u);
  EXPECT_TRUE(r.empty());
}

TEST(SessionReceiverTest, TheFinMustComeAtTheEndOfTheDataAndNothingAfterIt) {
  SessionReceiver r(100);
  r.on_data("abc");
  EXPECT_EQ(r.on_fin(2), SessionDrop::FinMismatch);
  EXPECT_EQ(r.on_fin(4), SessionDrop::FinMismatch);
  EXPECT_FALSE(r.fin());
  EXPECT_EQ(r.on_fin(3), std::nullopt);
  EXPECT_EQ(r.position(), 4u);  // the FIN takes a position
  EXPECT_EQ(r.on_data("d"), SessionDrop::DataAfterFin);
  EXPECT_EQ(r.on_fin(3), SessionDrop::DataAfterFin);
  EXPECT_FALSE(r.finished());  // abc not read yet
  r.consume(3);
  EXPECT_TRUE(r.finished());
}

TEST(SessionReceiverTest, AnAckIsDueOnRequestEveryIntervalAndForHalfABufferOfWindow) {
  SessionReceiver r(100);
  EXPECT_TRUE(r.ack_due(10));  // the first ACK announces the limit
  r.acked();
  EXPECT_FALSE(r.ack_due(10));
  r.on_data(std::string(9, 'x'));
  EXPECT_FALSE(r.ack_due(10));
  r.on_data("x");
  EXPECT_TRUE(r.ack_due(10));  // ack_interval bytes
  r.acked();
  EXPECT_FALSE(r.ack_due(10));
  r.consume(10);
  EXPECT_FALSE(r.ack_due(1000));  // the limit moved 10 < 50
  r.on_data(std::string(50, 'y'));
  r.acked();
  r.consume(50);
  EXPECT_TRUE(r.ack_due(1000));  // the limit moved half the buffer
  r.acked();
  r.request_ack();
  EXPECT_TRUE(r.ack_due(1000));
  r.acked();
  EXPECT_EQ(r.on_fin(60), std::nullopt);
  EXPECT_TRUE(r.ack_due(1000));  // a FIN is acknowledged at once
}

TEST(SessionReceiverTest, NothingReceivedUntilAByteOrTheFin) {
  SessionReceiver a(10);
  EXPECT_TRUE(a.nothing_received());
  a.on_data("a");
  EXPECT_FALSE(a.nothing_received());
  SessionReceiver b(10);
  b.on_fin(0);
  EXPECT_FALSE(b.nothing_received());
}

}  // namespace
}  // namespace tinytcp::session
