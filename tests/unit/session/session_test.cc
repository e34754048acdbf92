#include "session/session.hh"

#include <gtest/gtest.h>

#include <string>

#include "session/session_acceptor.hh"
#include "sim/session_pair.hh"

namespace tinytcp::session {
namespace {

using namespace std::chrono_literals;
using testing::SessionPair;
using testing::small_config;
using Kind = SessionAcceptor::Event::Kind;

std::string frame(FrameType type, std::string_view body) {
  std::string out;
  append_frame(out, type, body);
  return out;
}

std::string read_all(Session& s) {
  std::string out;
  while (!s.readable().empty()) {
    out += s.readable();
    s.consume(s.readable().size());
  }
  return out;
}

class SessionTest : public ::testing::Test {
 protected:
  SessionPair pair{small_config(1), small_config(2)};
  Session& client = pair.client;
  SessionAcceptor& server = pair.server;

  void open() {
    pair.connect();
    pair.shuttle();
    ASSERT_EQ(client.state(), Session::State::Open);
    ASSERT_NE(pair.server_session(), nullptr);
  }
};

TEST_F(SessionTest, HandshakeOpensAndCarriesBothWays) {
  EXPECT_TRUE(client.wants_carrier(pair.now));
  open();
  EXPECT_TRUE(pair.has_event(Kind::SessionOpened));
  EXPECT_EQ(client.id().size(), kSessionIdBytes);
  EXPECT_EQ(pair.server_session()->id(), client.id());
  EXPECT_EQ(client.write("ping"), 4u);
  pair.shuttle();
  EXPECT_EQ(read_all(*pair.server_session()), "ping");
  EXPECT_EQ(pair.server_session()->write("pong"), 4u);
  pair.shuttle();
  EXPECT_EQ(read_all(client), "pong");
}

TEST_F(SessionTest, BytesWrittenBeforeTheOpenFollowIt) {
  EXPECT_EQ(client.write("early"), 5u);
  open();
  EXPECT_EQ(read_all(*pair.server_session()), "early");
}

TEST_F(SessionTest, ResumeAfterRstResendsExactlyWhatWasLost) {
  open();
  client.write("delivered.");
  pair.shuttle();
  client.write("lost-in-flight.");
  pair.rst();  // the frame never left
  EXPECT_EQ(client.state(), Session::State::Disconnected);
  EXPECT_FALSE(client.wants_carrier(pair.now));  // backoff first
  pair.advance(client.next_deadline().value() - pair.now);
  EXPECT_TRUE(client.wants_carrier(pair.now));
  pair.connect();
  pair.shuttle();
  EXPECT_EQ(client.state(), Session::State::Open);
  EXPECT_EQ(client.stats().resumes, 1u);
  EXPECT_EQ(server.stats().sessions_resumed, 1u);
  EXPECT_TRUE(pair.has_event(Kind::SessionResumed));
  EXPECT_EQ(read_all(*pair.server_session()), "delivered.lost-in-flight.");
}

TEST_F(SessionTest, AddressChangeReplacesTheOldCarrier) {
  open();
  const auto old = pair.carrier;
  client.write("a");
  pair.shuttle();
  pair.connect();  // new carrier; the old one still open at the server
  pair.shuttle();
  EXPECT_EQ(server.stats().carriers_replaced, 1u);
  EXPECT_NE(std::find(pair.closed_carriers.begin(), pair.closed_carriers.end(), old),
            pair.closed_carriers.end());
  client.write("b");
  pair.shuttle();
  EXPECT_EQ(read_all(*pair.server_session()), "ab");
}

TEST_F(SessionTest, ForgedResumeRefusedAndCounted) {
  open();
  // An attacker who saw the id (it travels in the clear) but not the secret.
  const SessionAcceptor::CarrierId attacker = 99;
  server.on_carrier_accepted(attacker, pair.now);
  server.on_carrier_input(
      attacker, frame(FrameType::Resume, encode(ResumeMessage{client.id(), std::string(16, 'n')})),
      pair.now);
  ASSERT_FALSE(server.carrier_output(attacker).empty());  // a CHALLENGE
  server.consume_carrier_output(attacker, server.carrier_output(attacker).size());
  server.on_carrier_input(
      attacker, frame(FrameType::Proof, encode(ProofMessage{0, 1 << 20, std::string(32, 'p')})),
      pair.now);
  EXPECT_EQ(server.stats().drops[AcceptorDrop::BadProof], 1u);
  const auto out = server.carrier_output(attacker);
  ASSERT_EQ(out.size(), kFrameHeaderBytes + 1);
  EXPECT_EQ(out[0], static_cast<char>(FrameType::Refuse));
  EXPECT_EQ(out[5], static_cast<char>(RefuseReason::BadProof));
  // The real client's carrier is untouched.
  EXPECT_EQ(server.session_of(pair.carrier), pair.server_session());
  client.write("still here");
  pair.shuttle();
  EXPECT_EQ(read_all(*pair.server_session()), "still here");
}

TEST_F(SessionTest, ReplayedResumeRefusedAndCounted) {
  open();
  pair.rst();
  pair.advance(1s);
  pair.wire_up.clear();
  pair.connect();
  pair.shuttle();
  ASSERT_EQ(client.stats().resumes, 1u);
  const std::string recorded = pair.wire_up;  // RESUME + PROOF of a good resume
  const SessionAcceptor::CarrierId attacker = 99;
  server.on_carrier_accepted(attacker, pair.now);
  server.on_carrier_input(attacker, recorded, pair.now);
  EXPECT_EQ(server.stats().drops[AcceptorDrop::ReplayedResume], 1u);
  EXPECT_EQ(server.carrier_output(attacker).substr(5, 1),
            std::string(1, static_cast<char>(RefuseReason::ReplayedResume)));
  EXPECT_EQ(server.session_of(pair.carrier), pair.server_session());
}

TEST_F(SessionTest, UnknownIdResumeRefusesAndTheClientFails) {
  open();
  // A byte has arrived, so the client cannot start over (it would repeat it).
  pair.server_session()->write("y");
  pair.shuttle();
  pair.rst();
  // The server restarted: a fresh acceptor knows no session.
  SessionPair restarted(small_config(3), small_config(4));
  SessionAcceptor& fresh = restarted.server;
  client.attach_carrier(pair.now);
  fresh.on_carrier_accepted(1, pair.now);
  fresh.on_carrier_input(1, client.carrier_output(), pair.now);
  client.consume_carrier_output(client.carrier_output().size());
  EXPECT_EQ(fresh.stats().drops[AcceptorDrop::UnknownSession], 1u);
  client.on_carrier_input(fresh.carrier_output(1), pair.now);
  EXPECT_EQ(client.state(), Session::State::Failed);
  EXPECT_NE(client.error().find("unknown session"), std::string::npos) << client.error();
  EXPECT_FALSE(client.wants_carrier(pair.now + 1h));
}

TEST_F(SessionTest, GarbageBeforeHandshakeDropsTheCarrier) {
  server.on_carrier_accepted(7, pair.now);
  server.on_carrier_input(7, "GET / HTTP/1.1\r\n\r\n", pair.now);
  EXPECT_EQ(server.stats().drops[AcceptorDrop::BadFrame], 1u);
  const auto e = server.next_event();
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, Kind::CloseCarrier);
  EXPECT_EQ(e->carrier, 7u);
  EXPECT_EQ(server.session_count(), 0u);
  server.on_carrier_lost(7, pair.now);
  EXPECT_EQ(server.pending_count(), 0u);
}

TEST_F(SessionTest, OversizedControlFrameDropsTheCarrier) {
  server.on_carrier_accepted(7, pair.now);
  server.on_carrier_input(7, std::string("\x01\x00\x10\x00\x00", 5), pair.now);
  EXPECT_EQ(server.stats().drops[AcceptorDrop::OversizedFrame], 1u);
  open();
  client.on_carrier_input(std::string("\x09\x00\x00\x02\x00", 5), pair.now);
  EXPECT_EQ(client.stats().drops[SessionDrop::OversizedFrame], 1u);
  EXPECT_TRUE(client.carrier_failed());
}

TEST_F(SessionTest, DataBeforeHelloDropsTheCarrier) {
  server.on_carrier_accepted(7, pair.now);
  server.on_carrier_input(7, frame(FrameType::Data, "x"), pair.now);
  EXPECT_EQ(server.stats().drops[AcceptorDrop::UnexpectedFrame], 1u);
}

TEST_F(SessionTest, AckBeyondSentDropsTheCarrier) {
  open();
  client.write("abc");
  // Three bytes handed to the carrier (a DATA body still queued cannot have
  // arrived: AnAckForBytesStillQueuedDropsTheCarrier) and no FIN: positions
  // up to 3 exist, 4 does not.
  while (!client.carrier_output().empty()) {
    client.consume_carrier_output(client.carrier_output().size());
  }
  client.on_carrier_input(frame(FrameType::Ack, encode(AckMessage{3, 1 << 20, 0})), pair.now);
  EXPECT_FALSE(client.carrier_failed());
  client.on_carrier_input(frame(FrameType::Ack, encode(AckMessage{4, 1 << 20, 0})), pair.now);
  EXPECT_EQ(client.stats().drops[SessionDrop::AckBeyondSent], 1u);
  EXPECT_TRUE(client.carrier_failed());
}

TEST_F(SessionTest, DataPastTheReceiveLimitDropsTheCarrier) {
  open();
  const std::string big(16 * 1024, 'x');
  for (int i = 0; i < 4; ++i) {
    client.on_carrier_input(frame(FrameType::Data, big), pair.now);
  }
  EXPECT_FALSE(client.carrier_failed());
  client.on_carrier_input(frame(FrameType::Data, "y"), pair.now);
  EXPECT_EQ(client.stats().drops[SessionDrop::DataPastLimit], 1u);
  EXPECT_TRUE(client.carrier_failed());
}

TEST_F(SessionTest, WriteTakesOnlyWhatTheReplayBufferHolds) {
  open();
  const std::string big(100 * 1024, 'z');
  EXPECT_EQ(client.write(big), 64u * 1024);
  EXPECT_EQ(client.write("more"), 0u);
  EXPECT_EQ(client.stats().unacked_bytes, 0u);  // not yet seen by a tick
  pair.advance(10ms);
  EXPECT_EQ(client.stats().unacked_bytes, 64u * 1024);
  EXPECT_EQ(client.stats().oldest_unacked_age, 10ms);
  pair.shuttle();
  read_all(*pair.server_session());
  pair.shuttle();
  pair.advance(5ms);
  EXPECT_EQ(client.stats().unacked_bytes, 0u);
  EXPECT_EQ(client.stats().write_blocked, 10ms);
  EXPECT_GT(client.write("more"), 0u);
}

TEST_F(SessionTest, HalfCloseBothWaysFinishesBothEnds) {
  open();
  client.write("request");
  client.shutdown_write();
  pair.shuttle();
  Session& s = *pair.server_session();
  EXPECT_EQ(read_all(s), "request");
  EXPECT_TRUE(s.peer_finished());
  EXPECT_FALSE(client.finished());
  s.write("reply");
  s.shutdown_write();
  pair.shuttle();
  EXPECT_EQ(read_all(client), "reply");
  EXPECT_TRUE(client.peer_finished());
  EXPECT_TRUE(client.finished());
  EXPECT_TRUE(s.finished());
  EXPECT_TRUE(pair.has_event(Kind::SessionFinished));
  EXPECT_EQ(client.write("late"), 0u);
}

TEST_F(SessionTest, HeartbeatsKeepAnIdleCarrierAlive) {
  open();
  for (int i = 0; i < 20; ++i) {
    pair.advance(250ms);
    pair.shuttle();
  }
  EXPECT_EQ(client.state(), Session::State::Open);
  EXPECT_GT(client.stats().heartbeats_sent, 0u);
  EXPECT_EQ(client.stats().drops.total(), 0u);
}

TEST_F(SessionTest, BlackHoleDetectedByCarrierTimeout) {
  open();
  pair.black_hole = true;
  client.write("into the void");
  pair.shuttle();
  pair.advance(2s - 1ns);
  EXPECT_FALSE(client.carrier_failed());
  EXPECT_EQ(client.state(), Session::State::Open);
  pair.advance(1ns);
  EXPECT_EQ(client.stats().drops[SessionDrop::CarrierTimeout], 1u);
  EXPECT_EQ(client.state(), Session::State::Disconnected);
  pair.advance(1s);
  ASSERT_TRUE(client.wants_carrier(pair.now));
  pair.connect();
  pair.shuttle();
  EXPECT_EQ(client.state(), Session::State::Open) << to_string(client.state()) << client.error();
  EXPECT_EQ(client.stats().resumes, 1u);
  EXPECT_EQ(read_all(*pair.server_session()), "into the void");
}

TEST_F(SessionTest, BackoffIsJitteredExponentialAndCapped) {
  SessionConfig c = small_config(5);
  Session s(c);
  Instant now;
  Duration previous{0};
  for (int i = 0; i < 12; ++i) {
    s.attach_carrier(now);
    s.carrier_lost(now);
    const Duration wait = *s.next_deadline() - now;
    EXPECT_LE(wait, c.backoff_max);
    EXPECT_GE(wait, std::min(c.backoff_initial * (int64_t{1} << i), c.backoff_max) / 2);
    EXPECT_FALSE(s.wants_carrier(now + wait - 1ns));
    EXPECT_TRUE(s.wants_carrier(now + wait));
    previous = wait;
    now += wait;
  }
  EXPECT_GT(previous, Duration{0});
}

TEST_F(SessionTest, FailedConnectsBackOffToo) {
  SessionConfig c = small_config(8);
  Session s(c);
  Instant now;
  ASSERT_TRUE(s.wants_carrier(now));
  s.connect_failed(now);
  EXPECT_FALSE(s.wants_carrier(now));
  const Duration first = *s.next_deadline() - now;
  EXPECT_GE(first, c.backoff_initial / 2);
  EXPECT_TRUE(s.wants_carrier(now + first));
  now += first;
  s.connect_failed(now);
  EXPECT_GE(*s.next_deadline() - now, c.backoff_initial);  // doubled, jittered to >= half
}

TEST_F(SessionTest, GivesUpAfterTheConfiguredTime) {
  SessionConfig c = small_config(6);
  c.give_up = 3s;
  Session s(c);
  Instant now;
  s.attach_carrier(now);
  s.carrier_lost(now);
  s.tick(now + 3s - 1ns);
  EXPECT_NE(s.state(), Session::State::Failed);
  s.tick(now + 3s);
  EXPECT_EQ(s.state(), Session::State::Failed);
  EXPECT_NE(s.error().find("gave up"), std::string::npos);
}

TEST_F(SessionTest, PassivatedSessionWakesOnWrite) {
  open();
  client.passivate(pair.now);
  server.on_carrier_lost(pair.carrier, pair.now);
  EXPECT_TRUE(client.passive());
  pair.advance(1min);
  EXPECT_FALSE(client.wants_carrier(pair.now));
  EXPECT_EQ(client.stats().carriers_lost, 0u);
  client.write("wake");
  EXPECT_TRUE(client.wants_carrier(pair.now));
  pair.connect();
  pair.shuttle();
  EXPECT_EQ(read_all(*pair.server_session()), "wake");
}

TEST_F(SessionTest, IdleServerSessionExpires) {
  open();
  pair.rst();
  pair.advance(10min);
  EXPECT_EQ(server.stats().drops[AcceptorDrop::SessionExpired], 1u);
  EXPECT_TRUE(pair.has_event(Kind::SessionFailed));
  pair.advance(1ms);
  EXPECT_EQ(server.session_count(), 0u);
}

TEST(SessionAcceptorTest, FinishedSessionsGiveTheirPlaceToNewOnes) {
  SessionConfig server_config = small_config(2);
  server_config.max_sessions = 1;
  SessionPair pair{small_config(1), server_config};
  pair.connect();
  pair.shuttle();
  pair.client.shutdown_write();
  pair.shuttle();
  pair.server_session()->shutdown_write();
  pair.shuttle();
  ASSERT_TRUE(pair.client.finished());
  ASSERT_EQ(pair.server.session_count(), 1u);  // kept for finished_linger

  // A second client while the first one's session lingers.
  Session second(small_config(3));
  constexpr SessionAcceptor::CarrierId kSecond = 100;
  second.attach_carrier(pair.now);
  pair.server.on_carrier_accepted(kSecond, pair.now);
  for (int i = 0; i < 10; ++i) {
    const std::string up(second.carrier_output());
    second.consume_carrier_output(up.size());
    pair.server.on_carrier_input(kSecond, up, pair.now);
    const std::string down(pair.server.carrier_output(kSecond));
    pair.server.consume_carrier_output(kSecond, down.size());
    second.on_carrier_input(down, pair.now);
  }
  EXPECT_EQ(second.state(), Session::State::Open);
  EXPECT_EQ(pair.server.stats().drops[AcceptorDrop::SessionsFull], 0u);
  EXPECT_EQ(pair.server.stats().finished_evicted, 1u);
  EXPECT_EQ(pair.server.session_count(), 1u);

  // An open session is never evicted: a third is refused.
  Session third(small_config(4));
  constexpr SessionAcceptor::CarrierId kThird = 101;
  third.attach_carrier(pair.now);
  pair.server.on_carrier_accepted(kThird, pair.now);
  const std::string hello(third.carrier_output());
  third.consume_carrier_output(hello.size());
  pair.server.on_carrier_input(kThird, hello, pair.now);
  EXPECT_EQ(pair.server.stats().drops[AcceptorDrop::SessionsFull], 1u);
}

// A client of its own on carrier `id` of pair.server: opens, sends one byte,
// half-closes both ways with the server's session and finishes.
void open_and_finish(testing::SessionPair& pair, Session& c, SessionAcceptor::CarrierId id) {
  const auto shuttle = [&] {
    for (int i = 0; i < 10; ++i) {
      const std::string up(c.carrier_output());
      c.consume_carrier_output(up.size());
      pair.server.on_carrier_input(id, up, pair.now);
      const std::string down(pair.server.carrier_output(id));
      pair.server.consume_carrier_output(id, down.size());
      c.on_carrier_input(down, pair.now);
    }
  };
  c.attach_carrier(pair.now);
  pair.server.on_carrier_accepted(id, pair.now);
  shuttle();
  ASSERT_EQ(c.state(), Session::State::Open);
  c.write("x");
  c.shutdown_write();
  shuttle();
  Session* s = pair.server.session_of(id);
  ASSERT_NE(s, nullptr);
  read_all(*s);
  s->shutdown_write();
  pair.server.consume_carrier_output(id, 0);  // the acceptor looks at the session again
  shuttle();
  ASSERT_TRUE(c.finished());
  c.carrier_lost(pair.now);
  pair.server.on_carrier_lost(id, pair.now);
}

TEST(SessionAcceptorTest, FinishedSessionsLingerInTheOrderTheyEnded) {
  // Lingering sessions rest outside the acceptor's per-tick pass
  // (docs/session.md "Per-connection cost"): each must still go exactly
  // finished_linger after it ended, the oldest first when a new one needs room.
  SessionConfig server_config = small_config(2);
  server_config.max_sessions = 3;
  SessionPair pair{small_config(1), server_config};
  const Instant start = pair.now;
  Session a(small_config(3));
  Session b(small_config(4));
  Session c(small_config(5));
  open_and_finish(pair, a, 100);
  pair.advance(1s);
  open_and_finish(pair, b, 101);
  pair.advance(1s);
  open_and_finish(pair, c, 102);
  ASSERT_EQ(pair.server.session_count(), 3u);
  EXPECT_EQ(pair.server.stats().sessions_finished, 3u);
  // No timer of theirs but the linger.
  ASSERT_TRUE(pair.server.next_deadline().has_value());
  EXPECT_EQ(*pair.server.next_deadline(), start + server_config.finished_linger);

  // A fourth, a second later, takes the place of the oldest (a), not of b or c.
  pair.advance(1s);
  Session d(small_config(6));
  open_and_finish(pair, d, 103);
  EXPECT_EQ(pair.server.stats().finished_evicted, 1u);
  EXPECT_EQ(pair.server.session_count(), 3u);
  EXPECT_EQ(*pair.server.next_deadline(), start + 1s + server_config.finished_linger);

  const Duration to_b_gone = start + 1s + server_config.finished_linger - pair.now;
  pair.advance(to_b_gone - 1ms);
  EXPECT_EQ(pair.server.session_count(), 3u);
  pair.advance(1ms);
  EXPECT_EQ(pair.server.session_count(), 2u);  // b
  pair.advance(1s);
  EXPECT_EQ(pair.server.session_count(), 1u);  // c
  pair.advance(1s);
  EXPECT_EQ(pair.server.session_count(), 0u);  // d
  EXPECT_FALSE(pair.server.next_deadline().has_value());
}

TEST_F(SessionTest, HandshakeTimeoutAndPendingBound) {
  SessionConfig c = small_config(7);
  c.max_pending_carriers = 2;
  SessionAcceptor a(c);
  Instant now;
  a.on_carrier_accepted(1, now);
  a.on_carrier_accepted(2, now);
  a.on_carrier_accepted(3, now);
  EXPECT_EQ(a.stats().drops[AcceptorDrop::PendingFull], 1u);
  a.tick(now + 5s);
  EXPECT_EQ(a.stats().drops[AcceptorDrop::HandshakeTimeout], 2u);
  EXPECT_EQ(a.pending_count(), 0u);
}

TEST(SessionOverheadTest, BulkFramingCostsUnderATenthOfAPercent) {
  SessionConfig c;  // the defaults: 16 KiB DATA frames, an ACK per 64 KiB
  c.random = testing::seeded_random(1);
  SessionConfig s = c;
  s.random = testing::seeded_random(2);
  SessionPair pair(c, s);
  pair.connect();
  pair.shuttle();
  const size_t total = 16u << 20;
  const std::string block(1 << 20, 'b');
  size_t sent = 0;
  size_t read = 0;
  uint64_t wire = 0;  // carrier bytes, both directions, after the handshake
  while (read < total) {
    if (sent < total) {
      sent += pair.client.write(std::string_view(block).substr(0, total - sent));
    }
    const std::string up(pair.client.carrier_output());
    pair.client.consume_carrier_output(up.size());
    pair.server.on_carrier_input(pair.carrier, up, pair.now);
    Session& srv = *pair.server_session();
    while (!srv.readable().empty()) {
      read += srv.readable().size();
      srv.consume(srv.readable().size());
    }
    const std::string down(pair.server.carrier_output(pair.carrier));
    pair.server.consume_carrier_output(pair.carrier, down.size());
    pair.client.on_carrier_input(down, pair.now);
    wire += up.size() + down.size();
  }
  const double overhead = static_cast<double>(wire - read) / static_cast<double>(read);
  std::printf("session framing overhead on 16 MiB bulk: %.4f%% (%llu carrier bytes)\n",
              overhead * 100, static_cast<unsigned long long>(wire));
  EXPECT_LT(overhead, 0.001);
  EXPECT_EQ(pair.client.stats().bytes_written, total);
}

TEST(SessionPskTest, RightKeyOpensWrongKeyRefused) {
  auto with_key = [](uint64_t seed, std::string key) {
    SessionConfig c = small_config(seed);
    c.psk = std::move(key);
    return c;
  };
  SessionPair good(with_key(1, "k1"), with_key(2, "k1"));
  good.connect();
  good.shuttle();
  EXPECT_EQ(good.client.state(), Session::State::Open);
  good.client.write("secret-less but authentic");
  good.shuttle();
  EXPECT_EQ(read_all(*good.server_session()), "secret-less but authentic");
  good.rst();
  good.advance(1s);
  good.connect();
  good.shuttle();
  EXPECT_EQ(good.client.stats().resumes, 1u);

  SessionPair bad(with_key(1, "k1"), with_key(2, "k2"));
  bad.connect();
  bad.shuttle();
  EXPECT_EQ(bad.server.stats().drops[AcceptorDrop::BadMac], 1u);
  EXPECT_EQ(bad.server.session_count(), 0u);
  EXPECT_NE(bad.client.state(), Session::State::Open);

  SessionPair keyless_server(with_key(1, "k1"), small_config(2));
  keyless_server.connect();
  keyless_server.shuttle();
  EXPECT_EQ(keyless_server.server.stats().drops[AcceptorDrop::BadMac], 1u);
}

TEST(SessionPskTest, InjectedControlFrameWithoutTheKeyDropsOnlyThatCarrier) {
  SessionConfig c = small_config(1);
  c.psk = "key";
  SessionConfig s = small_config(2);
  s.psk = "key";
  SessionPair pair(c, s);
  pair.connect();
  pair.shuttle();
  // An on-path attacker forges an ACK (with a MAC it cannot compute).
  pair.client.on_carrier_input(
      frame(FrameType::Ack, encode(AckMessage{0, 1 << 30, 0}) + std::string(32, 'm')), pair.now);
  EXPECT_EQ(pair.client.stats().drops[SessionDrop::BadMac], 1u);
}

}  // namespace
}  // namespace tinytcp::session
