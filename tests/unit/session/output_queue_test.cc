#include "session/output_queue.hh"

#include <gtest/gtest.h>

#include <string>

#include "session/session.hh"
#include "session/session_messages.hh"
#include "sim/session_pair.hh"

namespace tinytcp::session {
namespace {

using namespace std::chrono_literals;
using testing::SessionPair;
using testing::small_config;

std::string frame(FrameType type, std::string_view body) {
  std::string out;
  append_frame(out, type, body);
  return out;
}

std::string pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) {
    s[i] = static_cast<char>('a' + i % 23);
  }
  return s;
}

// Everything queued, gathered as one gather write would send it.
std::string gather(const OutputQueue& q, const SessionSender& sender) {
  std::string_view pieces[64];
  std::string out;
  const size_t n = q.pieces(sender, pieces, 64);
  for (size_t i = 0; i < n; ++i) {
    out += pieces[i];
  }
  return out;
}

class OutputQueueTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(sender.write(data, Instant{}), data.size());
    sender.raise_limit(1 << 20);
  }
  SessionSender sender{64 * 1024};
  const std::string data = pattern(3000);
  OutputQueue q;
};

TEST_F(OutputQueueTest, DataBodiesComeFromTheReplayBufferBetweenOwnBytes) {
  q.push_frame(FrameType::Ack, "ack-body");
  q.push_data(0, 1000);
  q.push_data(1000, 2000);
  q.push_frame(FrameType::Fin, "fin-body");
  const std::string expected =
      frame(FrameType::Ack, "ack-body") + frame(FrameType::Data, data.substr(0, 1000)) +
      frame(FrameType::Data, data.substr(1000, 2000)) + frame(FrameType::Fin, "fin-body");
  EXPECT_EQ(q.size(), expected.size());
  // ACK + header, body, header, body, FIN: the headers join the bytes before them.
  std::string_view pieces[64];
  EXPECT_EQ(q.pieces(sender, pieces, 64), 5u);
  EXPECT_EQ(pieces[1].data(), sender.view_at(0, 1000).data());  // not a copy
  EXPECT_EQ(gather(q, sender), expected);
  EXPECT_EQ(q.pieces(sender, pieces, 2), 2u);
  EXPECT_EQ(q.front(sender), expected.substr(0, frame(FrameType::Ack, "ack-body").size() + 5));
}

TEST_F(OutputQueueTest, ConsumingAcrossPiecesKeepsTheRestInOrder) {
  q.push_frame(FrameType::Ack, "a");
  q.push_data(0, 1000);
  q.push_data(1000, 2000);
  const std::string expected = frame(FrameType::Ack, "a") +
                               frame(FrameType::Data, data.substr(0, 1000)) +
                               frame(FrameType::Data, data.substr(1000, 2000));
  std::string sent;
  for (size_t step : {3u, 10u, 700u, 1u, 999u, 5000u}) {
    const std::string all = gather(q, sender);
    const size_t n = std::min(step, all.size());
    sent += all.substr(0, n);
    q.consume(n);
  }
  EXPECT_EQ(sent, expected);
  EXPECT_TRUE(q.empty());
  EXPECT_TRUE(q.front(sender).empty());
}

TEST_F(OutputQueueTest, FirstUnsentDataMovesAsBodiesGo) {
  EXPECT_FALSE(q.first_unsent_data());
  q.push_frame(FrameType::Ack, "a");
  q.push_data(0, 1000);
  ASSERT_TRUE(q.first_unsent_data());
  EXPECT_EQ(*q.first_unsent_data(), 0u);
  q.consume(frame(FrameType::Ack, "a").size() + kFrameHeaderBytes + 400);
  EXPECT_EQ(*q.first_unsent_data(), 400u);
  q.consume(600);
  EXPECT_FALSE(q.first_unsent_data());
  q.clear();
  EXPECT_TRUE(q.empty());
}

TEST(SessionOutputTest, AnAckForBytesStillQueuedDropsTheCarrier) {
  SessionPair pair{small_config(1), small_config(2)};
  pair.connect();
  pair.shuttle();
  Session& client = pair.client;
  ASSERT_EQ(client.state(), Session::State::Open);
  const std::string data = pattern(20000);
  ASSERT_EQ(client.write(data), data.size());
  // Hand the carrier the first DATA frame's header and 100 bytes of its body.
  client.consume_carrier_output(kFrameHeaderBytes + 100);
  AckMessage ack;
  ack.received = 101;  // one byte more than the carrier has had
  ack.limit = 1 << 20;
  client.on_carrier_input(frame(FrameType::Ack, encode(ack)), pair.now);
  EXPECT_TRUE(client.carrier_failed());
  EXPECT_EQ(client.stats().drops[SessionDrop::AckBeyondSent], 1u);
}

TEST(SessionOutputTest, AnAckForBytesHandedOverIsTaken) {
  SessionPair pair{small_config(1), small_config(2)};
  pair.connect();
  pair.shuttle();
  Session& client = pair.client;
  const std::string data = pattern(20000);
  ASSERT_EQ(client.write(data), data.size());
  client.consume_carrier_output(kFrameHeaderBytes + 100);
  AckMessage ack;
  ack.received = 100;
  ack.limit = 1 << 20;
  client.on_carrier_input(frame(FrameType::Ack, encode(ack)), pair.now);
  EXPECT_FALSE(client.carrier_failed());
  client.tick(pair.now);
  EXPECT_EQ(client.stats().unacked_bytes, data.size() - 100);
  // What is left goes on unchanged: the rest of the first frame's body first.
  EXPECT_EQ(client.carrier_output(), std::string_view(data).substr(100, kMaxDataBody - 100));
}

}  // namespace
}  // namespace tinytcp::session
