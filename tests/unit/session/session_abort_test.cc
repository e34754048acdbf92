// Session::abort() and the ABORT frame (a reset, like TCP's RST), also right
// behind a HELLO and after a HELLO that was lost.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "session/session.hh"
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

bool closed(const SessionPair& pair, SessionAcceptor::CarrierId carrier) {
  return std::find(pair.closed_carriers.begin(), pair.closed_carriers.end(), carrier) !=
         pair.closed_carriers.end();
}

class SessionAbortTest : public ::testing::Test {
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

TEST_F(SessionAbortTest, ClientAbortResetsTheServerSession) {
  open();
  client.write("partial request");
  pair.shuttle();
  client.abort(AbortReason::Reset);
  EXPECT_EQ(client.state(), Session::State::Aborted);
  EXPECT_EQ(client.stats().aborts_sent, 1u);
  EXPECT_EQ(client.write("more"), 0u);
  pair.shuttle();
  Session& s = *pair.server_session();
  EXPECT_EQ(s.state(), Session::State::Aborted);
  EXPECT_NE(s.error().find("reset by the peer: connection reset"), std::string::npos) << s.error();
  EXPECT_EQ(s.stats().aborts_received, 1u);
  EXPECT_TRUE(pair.has_event(Kind::SessionAborted));
  EXPECT_EQ(server.stats().sessions_aborted, 1u);
  EXPECT_TRUE(closed(pair, pair.carrier));  // nothing more goes on that carrier
  EXPECT_EQ(client.next_deadline(), std::nullopt);
  EXPECT_FALSE(client.wants_carrier(pair.now + 1h));
}

TEST_F(SessionAbortTest, ServerAbortResetsTheClient) {
  open();
  pair.server_session()->abort(AbortReason::Refused);
  EXPECT_EQ(pair.server_session()->state(), Session::State::Aborted);
  pair.shuttle();
  EXPECT_EQ(client.state(), Session::State::Aborted);
  EXPECT_NE(client.error().find("connection refused"), std::string::npos) << client.error();
  EXPECT_EQ(client.stats().aborts_received, 1u);
  EXPECT_FALSE(client.wants_carrier(pair.now + 1h));
  EXPECT_TRUE(closed(pair, pair.carrier));
}

TEST_F(SessionAbortTest, ClientAbortWithoutCarrierIsDeliveredAfterTheResume) {
  open();
  pair.rst();
  client.abort(AbortReason::Application);
  EXPECT_EQ(client.state(), Session::State::Disconnected);  // nobody told yet
  pair.advance(client.next_deadline().value() - pair.now);
  ASSERT_TRUE(client.wants_carrier(pair.now));
  pair.connect();
  pair.shuttle();
  EXPECT_EQ(client.state(), Session::State::Aborted);
  EXPECT_EQ(pair.server_session()->state(), Session::State::Aborted);
  EXPECT_NE(pair.server_session()->error().find("closed by the application"), std::string::npos);
}

TEST_F(SessionAbortTest, ServerAbortWithoutCarrierRefusesTheResume) {
  open();
  pair.rst();
  pair.server_session()->abort(AbortReason::Unreachable);
  EXPECT_EQ(pair.server_session()->state(), Session::State::Aborted);
  pair.advance(client.next_deadline().value() - pair.now);
  // By hand: the harness closes a refused carrier before the REFUSE reaches
  // the client (an owner writes it first).
  constexpr SessionAcceptor::CarrierId kCarrier = 50;
  client.attach_carrier(pair.now);
  server.on_carrier_accepted(kCarrier, pair.now);
  server.on_carrier_input(kCarrier, client.carrier_output(), pair.now);
  client.consume_carrier_output(client.carrier_output().size());
  client.on_carrier_input(server.carrier_output(kCarrier), pair.now);
  EXPECT_EQ(client.state(), Session::State::Aborted);
  EXPECT_EQ(client.stats().aborts_received, 1u);
  EXPECT_EQ(server.stats().drops[AcceptorDrop::ResumeRefused], 1u);
}

TEST_F(SessionAbortTest, MalformedAbortDropsOnlyTheCarrier) {
  open();
  client.on_carrier_input(frame(FrameType::Abort, "xy"), pair.now);
  EXPECT_EQ(client.stats().drops[SessionDrop::MalformedFrame], 1u);
  EXPECT_NE(client.state(), Session::State::Aborted);
}

TEST(SessionAbortPskTest, AbortIsAuthenticatedUnderAKey) {
  SessionConfig c = small_config(1);
  c.psk = "key";
  SessionConfig s = small_config(2);
  s.psk = "key";
  SessionPair pair(c, s);
  pair.connect();
  pair.shuttle();
  // An on-path attacker without the key forges an ABORT: only the carrier goes.
  pair.client.on_carrier_input(
      frame(FrameType::Abort, encode(AbortMessage{AbortReason::Reset}) + std::string(32, 'm')),
      pair.now);
  EXPECT_EQ(pair.client.stats().drops[SessionDrop::BadMac], 1u);
  EXPECT_NE(pair.client.state(), Session::State::Aborted);
  pair.drain_events();
  pair.advance(1s);
  pair.connect();
  pair.shuttle();
  ASSERT_EQ(pair.client.state(), Session::State::Open);
  // The real one, sealed with the carrier's key, is taken.
  pair.server_session()->abort(AbortReason::Reset);
  pair.shuttle();
  EXPECT_EQ(pair.client.state(), Session::State::Aborted);
  EXPECT_EQ(pair.client.stats().drops.total(), 1u);
}

TEST_F(SessionAbortTest, AbortRightBehindTheHelloResetsTheServerSession) {
  client.write("request");
  pair.connect();  // HELLO and DATA queued
  client.abort(AbortReason::Refused);
  EXPECT_EQ(client.state(), Session::State::Aborted);
  pair.shuttle();
  EXPECT_EQ(server.stats().sessions_opened, 1u);
  EXPECT_EQ(server.stats().sessions_aborted, 1u);
  EXPECT_TRUE(pair.has_event(Kind::SessionAborted));
}

TEST_F(SessionAbortTest, AbortBeforeAnyHelloIsLocal) {
  client.write("request");
  client.abort(AbortReason::Application);
  EXPECT_EQ(client.state(), Session::State::Aborted);
  EXPECT_FALSE(client.wants_carrier(pair.now + 1h));
}

TEST_F(SessionAbortTest, AbortAfterALostHelloEndsOnTheUnknownSession) {
  client.write("request");
  pair.connect();
  client.consume_carrier_output(client.carrier_output().size());  // HELLO lost
  pair.rst();
  client.abort(AbortReason::Reset);
  EXPECT_NE(client.state(), Session::State::Aborted);  // it may have arrived: tell the server
  pair.advance(1s);
  // The RESUME, by hand so that the REFUSE arrives: unknown session.
  constexpr SessionAcceptor::CarrierId kCarrier = 50;
  client.attach_carrier(pair.now);
  server.on_carrier_accepted(kCarrier, pair.now);
  server.on_carrier_input(kCarrier, client.carrier_output(), pair.now);
  client.consume_carrier_output(client.carrier_output().size());
  client.on_carrier_input(server.carrier_output(kCarrier), pair.now);
  EXPECT_EQ(client.state(), Session::State::Aborted);
  EXPECT_EQ(server.stats().sessions_opened, 0u);
}

TEST_F(SessionAbortTest, SessionWithoutDataIsKeptTheWholeLifetime) {
  open();
  pair.rst();
  pair.advance(1min);
  EXPECT_EQ(server.session_count(), 1u);
  EXPECT_EQ(server.stats().drops.total(), 0u);
  pair.connect();
  pair.shuttle();
  EXPECT_EQ(client.stats().resumes, 1u);
}

}  // namespace
}  // namespace tinytcp::session
