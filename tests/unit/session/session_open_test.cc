// Opening a session (protocol version 2): the client picks the id and the
// secret and sends them in its HELLO, with the first data (and the FIN)
// right behind it, before any answer. Every way the open can go: the HELLO
// lost, the WELCOME lost, an id the server already holds, more data than the
// initial limit, REFUSE busy after data went, a pre-shared key right and
// wrong, another version's HELLO.

#include <gtest/gtest.h>

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

std::string read_all(Session& s) {
  std::string out;
  while (!s.readable().empty()) {
    out += s.readable();
    s.consume(s.readable().size());
  }
  return out;
}

// The frame types in `bytes`, in order.
std::vector<FrameType> frame_types(std::string_view bytes) {
  std::vector<FrameType> types;
  FrameDecoder decoder;
  decoder.feed(bytes, [&](const FrameView& f) {
    types.push_back(f.type);
    return true;
  });
  return types;
}

// Everything a session has queued for its carrier, in one string.
std::string all_output(const Session& s) {
  std::string_view pieces[64];
  std::string out;
  const size_t n = s.carrier_output_pieces(pieces, 64);
  for (size_t i = 0; i < n; ++i) {
    out += pieces[i];
  }
  return out;
}

// A carrier's one exchange by hand, so that a REFUSE reaches the client
// (SessionPair::shuttle closes a refused carrier before its REFUSE arrives).
void exchange_by_hand(SessionPair& pair, SessionAcceptor::CarrierId id) {
  pair.client.attach_carrier(pair.now);
  pair.server.on_carrier_accepted(id, pair.now);
  const std::string up = all_output(pair.client);
  pair.client.consume_carrier_output(up.size());
  pair.server.on_carrier_input(id, up, pair.now);
  const std::string down(pair.server.carrier_output(id));
  pair.server.consume_carrier_output(id, down.size());
  pair.client.on_carrier_input(down, pair.now);
  if (pair.client.carrier_failed()) {
    pair.client.carrier_lost(pair.now);
  }
  pair.server.on_carrier_lost(id, pair.now);
  pair.drain_events();
}

class SessionOpenTest : public ::testing::Test {
 protected:
  SessionPair pair{small_config(1), small_config(2)};
  Session& client = pair.client;
  SessionAcceptor& server = pair.server;
};

TEST_F(SessionOpenTest, RequestAndFinGoRightBehindTheHelloAndTheReplyBehindTheWelcome) {
  client.write("GET / 64 bytes of request");
  client.shutdown_write();
  pair.connect();
  // Before a byte came back, one write carries HELLO, DATA and FIN.
  const std::string up = all_output(client);
  EXPECT_EQ(frame_types(up),
            (std::vector<FrameType>{FrameType::Hello, FrameType::Data, FrameType::Fin}));
  client.consume_carrier_output(up.size());
  server.on_carrier_input(pair.carrier, up, pair.now);
  pair.drain_events();
  Session& s = *pair.server_session();
  EXPECT_EQ(read_all(s), "GET / 64 bytes of request");
  EXPECT_TRUE(s.peer_finished());
  // The reply (and its FIN) can go out in the same write as the WELCOME; the
  // one ACK is the one for the client's FIN (no window update: the WELCOME
  // carried the limit).
  s.write("the reply");
  s.shutdown_write();
  std::string_view pieces[16];
  std::string down;
  const size_t n = server.carrier_output_pieces(pair.carrier, pieces, 16);
  for (size_t i = 0; i < n; ++i) {
    down += pieces[i];
  }
  const auto types = frame_types(down);
  EXPECT_EQ(types, (std::vector<FrameType>{FrameType::Welcome, FrameType::Ack, FrameType::Data,
                                           FrameType::Fin}));
  pair.shuttle();
  EXPECT_EQ(read_all(client), "the reply");
  EXPECT_TRUE(client.finished());
  EXPECT_TRUE(s.finished());
  EXPECT_EQ(server.stats().sessions_opened, 1u);
}

TEST_F(SessionOpenTest, HelloLostWithItsCarrierStartsOverWithANewIdAndDeliversOnce) {
  client.write("request");
  pair.connect();
  const std::string first_id = client.id();
  ASSERT_EQ(first_id.size(), kSessionIdBytes);
  client.consume_carrier_output(client.carrier_output().size());  // HELLO + DATA lost
  pair.rst();
  pair.advance(1s);
  // A RESUME (the HELLO may have arrived): unknown session, so nothing of it
  // was delivered.
  exchange_by_hand(pair, 50);
  EXPECT_EQ(server.stats().drops[AcceptorDrop::UnknownSession], 1u);
  EXPECT_EQ(client.stats().restarts, 1u);
  EXPECT_NE(client.state(), Session::State::Failed) << client.error();
  pair.advance(1s);
  pair.connect();
  pair.shuttle();
  ASSERT_EQ(client.state(), Session::State::Open);
  EXPECT_NE(client.id(), first_id);
  EXPECT_EQ(read_all(*pair.server_session()), "request");
  EXPECT_EQ(server.stats().sessions_opened, 1u);
}

TEST_F(SessionOpenTest, WelcomeLostTheClientResumesAndNothingIsDeliveredTwice) {
  client.write("request");
  client.shutdown_write();
  pair.connect();
  const std::string up(all_output(client));
  client.consume_carrier_output(up.size());
  server.on_carrier_input(pair.carrier, up, pair.now);
  pair.drain_events();
  EXPECT_EQ(read_all(*pair.server_session()), "request");
  server.consume_carrier_output(pair.carrier, server.carrier_output(pair.carrier).size());  // lost
  pair.rst();
  pair.advance(1s);
  pair.connect();
  pair.shuttle();
  ASSERT_EQ(client.state(), Session::State::Open);
  EXPECT_EQ(client.stats().resumes, 1u);
  EXPECT_EQ(server.stats().sessions_opened, 1u);
  Session& s = *pair.server_session();
  EXPECT_EQ(read_all(s), "");  // the resume said the server holds request + FIN
  EXPECT_EQ(client.stats().bytes_replayed, 0u);
  s.write("reply");
  s.shutdown_write();
  pair.shuttle();
  EXPECT_EQ(read_all(client), "reply");
  EXPECT_TRUE(client.finished());
}

TEST_F(SessionOpenTest, HelloWithAnIdTheServerHoldsIsRefusedAndTheSessionUntouched) {
  pair.connect();
  pair.shuttle();
  ASSERT_EQ(client.state(), Session::State::Open);
  // An attacker (who would have to guess 128 bits) or a replayed HELLO.
  HelloMessage forged;
  forged.session_id = client.id();
  forged.secret = std::string(kSecretBytes, 'x');
  forged.client_nonce = std::string(kNonceBytes, 'n');
  forged.limit = 1;
  server.on_carrier_accepted(77, pair.now);
  server.on_carrier_input(77, frame(FrameType::Hello, encode(forged)) + frame(FrameType::Data, "x"),
                          pair.now);
  EXPECT_EQ(server.stats().drops[AcceptorDrop::SessionExists], 1u);
  EXPECT_EQ(
      server.carrier_output(77),
      frame(FrameType::Refuse, std::string(1, static_cast<char>(RefuseReason::SessionExists))));
  EXPECT_EQ(server.session_count(), 1u);
  pair.drain_events();
  // The real session goes on, and still resumes with its own secret.
  client.write("still mine");
  pair.shuttle();
  EXPECT_EQ(read_all(*pair.server_session()), "still mine");
  pair.rst();
  pair.advance(1s);
  pair.connect();
  pair.shuttle();
  EXPECT_EQ(client.stats().resumes, 1u);
  EXPECT_EQ(server.stats().sessions_opened, 1u);
}

TEST_F(SessionOpenTest, NoMoreThanTheInitialLimitBeforeTheServerSaysMore) {
  const std::string big(60 * 1024, 'b');
  std::string sent;
  for (int i = 0; i < 3; ++i) {
    sent += big;
  }
  // small_config's replay buffer is 64 KiB: write what fits, then more later.
  size_t written = client.write(sent);
  pair.connect();
  EXPECT_LE(client.stats().bytes_sent, kInitialLimit);
  EXPECT_GT(client.stats().bytes_sent, 0u);
  std::string got;
  for (int round = 0; round < 100 && got.size() < sent.size(); ++round) {
    pair.shuttle(4096);
    got += read_all(*pair.server_session());
    if (written < sent.size()) {
      written += client.write(std::string_view(sent).substr(written));
    }
  }
  EXPECT_EQ(got, sent);
  EXPECT_EQ(pair.server_session()->stats().drops.total(), 0u);
}

TEST(SessionOpenLimitTest, ASmallServerBufferStillTakesTheInitialLimit) {
  SessionConfig server_config = small_config(2);
  server_config.receive_capacity = 1024;  // raised to kInitialLimit
  SessionPair pair(small_config(1), server_config);
  const std::string request(kInitialLimit, 'r');
  EXPECT_EQ(pair.client.write(request), kInitialLimit);
  pair.connect();
  pair.shuttle(1000);
  Session& s = *pair.server_session();
  EXPECT_EQ(s.stats().drops.total(), 0u);
  EXPECT_EQ(read_all(s), request);
}

TEST(SessionOpenBusyTest, RefuseBusyAfterDataWentTriesTheSameHelloAgainAndDeliversOnce) {
  SessionConfig server_config = small_config(2);
  server_config.max_sessions = 1;
  SessionPair pair(small_config(1), server_config);
  // Another client's session fills the server.
  HelloMessage other;
  other.session_id = std::string(kSessionIdBytes, 'o');
  other.secret = std::string(kSecretBytes, 's');
  other.client_nonce = std::string(kNonceBytes, 'n');
  other.limit = 1 << 20;
  pair.server.on_carrier_accepted(100, pair.now);
  pair.server.on_carrier_input(100, frame(FrameType::Hello, encode(other)), pair.now);
  pair.server.on_carrier_lost(100, pair.now);
  pair.drain_events();
  ASSERT_EQ(pair.server.session_count(), 1u);
  pair.handle = 0;

  pair.client.write("request");
  exchange_by_hand(pair, 50);
  const std::string id = pair.client.id();
  EXPECT_EQ(pair.server.stats().drops[AcceptorDrop::SessionsFull], 1u);
  EXPECT_NE(pair.client.state(), Session::State::Failed) << pair.client.error();
  EXPECT_FALSE(pair.client.has_carrier());
  // The other session expires; the client's next try is a HELLO again (the
  // server took nothing), with the same id.
  pair.advance(11min);
  pair.advance(1ms);
  ASSERT_EQ(pair.server.session_count(), 0u);
  pair.connect();
  pair.shuttle();
  ASSERT_EQ(pair.client.state(), Session::State::Open);
  EXPECT_EQ(pair.client.id(), id);
  EXPECT_EQ(read_all(*pair.server_session()), "request");
  EXPECT_EQ(pair.server.stats().sessions_opened, 2u);  // the other and this one
  EXPECT_EQ(pair.client.stats().restarts, 0u);
}

SessionConfig with_key(uint64_t seed, std::string key) {
  SessionConfig c = small_config(seed);
  c.psk = std::move(key);
  return c;
}

TEST(SessionOpenPskTest, DataAndFinBehindTheHelloUnderTheRightKey) {
  SessionPair pair(with_key(1, "k1"), with_key(2, "k1"));
  pair.client.write("request");
  pair.client.shutdown_write();
  pair.connect();
  EXPECT_EQ(frame_types(all_output(pair.client)),
            (std::vector<FrameType>{FrameType::Hello, FrameType::Data, FrameType::Fin}));
  pair.shuttle();
  Session& s = *pair.server_session();
  EXPECT_EQ(read_all(s), "request");
  EXPECT_TRUE(s.peer_finished());  // its FIN's MAC verified
  s.write("reply");
  s.shutdown_write();
  pair.shuttle();
  EXPECT_EQ(read_all(pair.client), "reply");
  EXPECT_TRUE(pair.client.finished());
  EXPECT_EQ(pair.client.stats().drops.total(), 0u);
  EXPECT_EQ(s.stats().drops.total(), 0u);
}

TEST(SessionOpenPskTest, WelcomeLostUnderAKeyResumes) {
  SessionPair pair(with_key(1, "k1"), with_key(2, "k1"));
  pair.client.write("request");
  pair.connect();
  const std::string up(all_output(pair.client));
  pair.client.consume_carrier_output(up.size());
  pair.server.on_carrier_input(pair.carrier, up, pair.now);
  pair.drain_events();
  pair.server.consume_carrier_output(pair.carrier,
                                     pair.server.carrier_output(pair.carrier).size());  // lost
  pair.rst();
  pair.advance(1s);
  pair.connect();
  pair.shuttle();
  ASSERT_EQ(pair.client.state(), Session::State::Open);
  EXPECT_EQ(pair.client.stats().resumes, 1u);
  EXPECT_EQ(read_all(*pair.server_session()), "request");
}

TEST(SessionOpenPskTest, WrongKeyDeliversNothingOfTheDataBehindTheHello) {
  SessionPair pair(with_key(1, "k1"), with_key(2, "k2"));
  pair.client.write("request");
  pair.connect();
  pair.shuttle();
  EXPECT_EQ(pair.server.stats().drops[AcceptorDrop::BadMac], 1u);
  EXPECT_EQ(pair.server.session_count(), 0u);
  EXPECT_EQ(pair.server.stats().sessions_opened, 0u);
}

TEST_F(SessionOpenTest, AnotherVersionsHelloIsRefusedPlainly) {
  server.on_carrier_accepted(9, pair.now);
  // A version 1 HELLO: version, flags, client nonce, limit.
  const std::string v1 = std::string("\x01\x00", 2) + std::string(16, 'n') + std::string(8, '\0');
  server.on_carrier_input(9, frame(FrameType::Hello, v1), pair.now);
  EXPECT_EQ(server.stats().drops[AcceptorDrop::BadVersion], 1u);
  EXPECT_EQ(server.carrier_output(9),
            frame(FrameType::Refuse, std::string(1, static_cast<char>(RefuseReason::BadVersion))));
}

TEST(SessionWelcomeHoldTest, TheWelcomeWaitsForTheReplyAndGoesInItsWrite) {
  SessionConfig server_config = small_config(2);
  server_config.welcome_hold = 2ms;
  SessionPair pair(small_config(1), server_config);
  pair.client.write("request");
  pair.connect();
  pair.shuttle();
  Session& s = *pair.server_session();
  EXPECT_EQ(read_all(s), "request");
  EXPECT_TRUE(pair.server.carrier_output(pair.carrier).empty());  // held
  EXPECT_EQ(pair.client.state(), Session::State::Opening);
  EXPECT_EQ(pair.server.next_deadline().value(), pair.now + 2ms);
  s.write("reply");
  std::string_view pieces[8];
  std::string all;
  const size_t n = pair.server.carrier_output_pieces(pair.carrier, pieces, 8);
  for (size_t i = 0; i < n; ++i) {
    all += pieces[i];
  }
  EXPECT_EQ(frame_types(all), (std::vector<FrameType>{FrameType::Welcome, FrameType::Data}));
  pair.shuttle();
  EXPECT_EQ(pair.client.state(), Session::State::Open);
  EXPECT_EQ(read_all(pair.client), "reply");
}

TEST(SessionWelcomeHoldTest, AHeldWelcomeGoesAloneWhenTheHoldEnds) {
  SessionConfig server_config = small_config(2);
  server_config.welcome_hold = 2ms;
  SessionPair pair(small_config(1), server_config);
  pair.connect();
  pair.shuttle();
  EXPECT_EQ(pair.client.state(), Session::State::Opening);
  pair.advance(1ms);
  pair.shuttle();
  EXPECT_EQ(pair.client.state(), Session::State::Opening);
  pair.advance(1ms);
  pair.shuttle();
  EXPECT_EQ(pair.client.state(), Session::State::Open);
}

TEST(SessionWelcomeHoldTest, AClientWaitingForTheLimitGetsTheWelcomeAtOnce) {
  SessionConfig server_config = small_config(2);
  server_config.welcome_hold = 1s;
  SessionPair pair(small_config(1), server_config);
  const std::string upload(kInitialLimit, 'u');
  EXPECT_EQ(pair.client.write(upload), upload.size());
  pair.connect();
  pair.shuttle();
  EXPECT_EQ(pair.client.state(), Session::State::Open);  // no second waited
  EXPECT_EQ(read_all(*pair.server_session()), upload);
}

}  // namespace
}  // namespace tinytcp::session
