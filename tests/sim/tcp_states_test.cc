// Negative tests over every state of RFC 9293 §3.3.2: two real connections
// are driven into the state, then the connection under test is handed each
// kind of unacceptable segment. Each must be dropped (or answered as RFC 9293
// §3.10.7 and RFC 5961 say), counted by exactly one counter, and leave the
// state unchanged.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/sim_network.hh"

namespace tinytcp::sim {
namespace {

using std::chrono::milliseconds;
using std::chrono::minutes;
using tcp::ConnectionDrop;
using tcp::ReceiverDrop;
using tcp::TcpConnection;
using tcp::TcpSegment;
using tcp::TcpState;
using tcp::Wrap32;

enum class Bad {
  RstOutOfWindow,
  RstInWindow,
  AckOfUnsent,
  NoAckFlag,
  OutOfWindowData,
  OldTimestamp,
  SynInWindow,
};
const char* name(Bad b) {
  switch (b) {
    case Bad::RstOutOfWindow:
      return "RstOutOfWindow";
    case Bad::RstInWindow:
      return "RstInWindow";
    case Bad::AckOfUnsent:
      return "AckOfUnsent";
    case Bad::NoAckFlag:
      return "NoAckFlag";
    case Bad::OutOfWindowData:
      return "OutOfWindowData";
    case Bad::OldTimestamp:
      return "OldTimestamp";
    case Bad::SynInWindow:
      return "SynInWindow";
  }
  return "?";
}

// The one counter a bad segment must bump.
struct Expect {
  bool receiver = false;
  ConnectionDrop connection = ConnectionDrop::kCount;
  ReceiverDrop receiver_drop = ReceiverDrop::kCount;
};
Expect conn_drop(ConnectionDrop d) {
  return Expect{false, d, ReceiverDrop::kCount};
}
Expect recv_drop(ReceiverDrop d) {
  return Expect{true, ConnectionDrop::kCount, d};
}

bool synchronized(TcpState s) {
  return s != TcpState::Closed && s != TcpState::Listen && s != TcpState::SynSent;
}

std::optional<Expect> expected(TcpState state, Bad bad) {
  switch (state) {
    case TcpState::Closed:
      return conn_drop(ConnectionDrop::Closed);
    case TcpState::Listen:
      switch (bad) {
        case Bad::RstOutOfWindow:
        case Bad::RstInWindow:
          return conn_drop(ConnectionDrop::ListenRst);
        case Bad::NoAckFlag:
          return conn_drop(ConnectionDrop::ListenNotSyn);
        case Bad::SynInWindow:
          return std::nullopt;  // a SYN is what LISTEN waits for
        default:
          return conn_drop(ConnectionDrop::ListenAck);
      }
    case TcpState::SynSent:
      switch (bad) {
        case Bad::RstOutOfWindow:
        case Bad::RstInWindow:
          return conn_drop(ConnectionDrop::SynSentRstNoAck);
        case Bad::NoAckFlag:
          return conn_drop(ConnectionDrop::SynSentNoSyn);
        case Bad::SynInWindow:
          return std::nullopt;  // simultaneous open
        default:
          return conn_drop(ConnectionDrop::SynSentBadAck);
      }
    default:
      break;
  }
  switch (bad) {
    case Bad::RstOutOfWindow:
      return conn_drop(ConnectionDrop::RstOutOfWindow);
    case Bad::RstInWindow:
      return conn_drop(ConnectionDrop::RstInWindow);
    case Bad::AckOfUnsent:
      return conn_drop(state == TcpState::SynReceived ? ConnectionDrop::SynReceivedBadAck
                                                      : ConnectionDrop::AckUnsent);
    case Bad::NoAckFlag:
      return conn_drop(ConnectionDrop::NoAck);
    case Bad::OutOfWindowData:
      return recv_drop(ReceiverDrop::OutOfWindow);
    case Bad::OldTimestamp:
      return recv_drop(ReceiverDrop::Paws);
    case Bad::SynInWindow:
      return conn_drop(ConnectionDrop::SynSynchronized);
  }
  return std::nullopt;
}

class StatesTest : public ::testing::Test {
 public:
  StatesTest() : net_(config(), config(), LinkParams{}, LinkParams{}, 7) {}

  static tcp::TcpConfig config() {
    tcp::TcpConfig c;
    c.msl = minutes(1);
    return c;
  }

  // Drives the pair so that the returned connection is in `state`.
  TcpConnection& reach(TcpState state) {
    auto& a = net_.a();
    auto& b = net_.b();
    auto handshake = [&] {
      b.listen();
      a.connect(net_.now());
      net_.run_for(milliseconds(100));
    };
    switch (state) {
      case TcpState::Closed:
        return a;
      case TcpState::Listen:
        b.listen();
        return b;
      case TcpState::SynSent:
        net_.ab().set_blocked(true);
        a.connect(net_.now());
        return a;
      case TcpState::SynReceived:
        net_.ba().set_blocked(true);
        b.listen();
        a.connect(net_.now());
        net_.run_for(milliseconds(15));
        return b;
      case TcpState::Established:
        handshake();
        return a;
      case TcpState::FinWait1:
        handshake();
        net_.ab().set_blocked(true);
        a.shutdown_write(net_.now());
        return a;
      case TcpState::FinWait2:
      case TcpState::CloseWait:
        handshake();
        a.shutdown_write(net_.now());
        net_.run_for(milliseconds(100));
        return state == TcpState::FinWait2 ? a : b;
      case TcpState::LastAck:
        handshake();
        a.shutdown_write(net_.now());
        net_.run_for(milliseconds(100));
        net_.ba().set_blocked(true);
        b.shutdown_write(net_.now());
        return b;
      case TcpState::Closing:
        handshake();
        a.shutdown_write(net_.now());
        b.shutdown_write(net_.now());
        net_.run_for(milliseconds(15));  // the FINs crossed; their ACKs are in flight
        net_.ab().clear();
        net_.ba().clear();
        return a;
      case TcpState::TimeWait:
        handshake();
        a.shutdown_write(net_.now());
        net_.run_for(milliseconds(100));
        b.shutdown_write(net_.now());
        net_.run_for(milliseconds(100));
        return a;
      case TcpState::kCount:
        break;
    }
    return a;
  }

  TcpSegment make(const TcpConnection& c, Bad bad) {
    TcpSegment s;
    const Wrap32 rcv_nxt = c.receiver().ackno().value_or(Wrap32{12345});
    s.seqno = rcv_nxt;
    s.ack = true;
    s.ackno = c.sender().oldest_unacked();
    s.window = 1000;
    const TcpConnection& peer = &c == &net_.a() ? net_.b() : net_.a();
    const uint32_t tsval = peer.sender().timestamp_value(net_.now());
    if (c.receiver().syn_received()) {
      s.options.timestamps = tcp::Timestamps{tsval, 0};  // the peer's current clock
    }
    switch (bad) {
      case Bad::RstOutOfWindow:
        s.rst = true;
        s.ack = false;
        s.seqno = rcv_nxt - 100000;
        break;
      case Bad::RstInWindow:
        s.rst = true;
        s.ack = false;
        s.seqno = rcv_nxt + 10;
        break;
      case Bad::AckOfUnsent:
        s.ackno = c.sender().next_seqno() + 100000;
        s.payload = "x";
        break;
      case Bad::NoAckFlag:
        s.ack = false;
        s.payload = "x";
        break;
      case Bad::OutOfWindowData:
        s.seqno = rcv_nxt + 50'000'000;
        s.payload = "x";
        break;
      case Bad::OldTimestamp:
        s.options.timestamps = tcp::Timestamps{tsval - 100000, 0};
        s.payload = "x";
        break;
      case Bad::SynInWindow:
        s.syn = true;
        s.seqno = rcv_nxt + 10;
        break;
    }
    return s;
  }

  Network net_;
};

TEST(StatesSweepTest, EveryUnacceptableSegmentInEveryStateIsCountedOnce) {
  const Bad kinds[] = {Bad::RstOutOfWindow,  Bad::RstInWindow,  Bad::AckOfUnsent, Bad::NoAckFlag,
                       Bad::OutOfWindowData, Bad::OldTimestamp, Bad::SynInWindow};
  for (size_t si = 0; si < static_cast<size_t>(TcpState::kCount); ++si) {
    const auto state = static_cast<TcpState>(si);
    for (const Bad bad : kinds) {
      const auto want = expected(state, bad);
      if (!want || (bad == Bad::OldTimestamp && !synchronized(state))) {
        continue;
      }
      SCOPED_TRACE(std::string(to_string(state)) + " / " + name(bad));
      struct Fixture : StatesTest {
        void TestBody() override {}
      } f;
      TcpConnection& c = f.reach(state);
      ASSERT_EQ(c.state(), state);
      const uint64_t conn_before = c.stats().drops.total();
      const uint64_t recv_before = c.receiver_stats().drops.total();
      const uint64_t target_before = want->receiver ? c.receiver_stats().drops[want->receiver_drop]
                                                    : c.stats().drops[want->connection];
      c.receive(f.make(c, bad), f.net_.now());
      const uint64_t target_after = want->receiver ? c.receiver_stats().drops[want->receiver_drop]
                                                   : c.stats().drops[want->connection];
      EXPECT_EQ(target_after, target_before + 1);
      EXPECT_EQ(c.stats().drops.total() + c.receiver_stats().drops.total(),
                conn_before + recv_before + 1);
      EXPECT_EQ(c.state(), state);
      // Nothing was delivered to the application.
      EXPECT_EQ(c.inbound().bytes_buffered(), 0u);
    }
  }
}

TEST(StatesSweepTest, ExactRstResetsEverySynchronizedState) {
  for (size_t si = 0; si < static_cast<size_t>(TcpState::kCount); ++si) {
    const auto state = static_cast<TcpState>(si);
    if (!synchronized(state)) {
      continue;
    }
    SCOPED_TRACE(to_string(state));
    struct Fixture : StatesTest {
      void TestBody() override {}
    } f;
    TcpConnection& c = f.reach(state);
    TcpSegment rst;
    rst.rst = true;
    rst.seqno = *c.receiver().ackno();
    c.receive(rst, f.net_.now());
    EXPECT_EQ(c.state(), TcpState::Closed);
    EXPECT_EQ(c.close_reason(), tcp::CloseReason::ResetByPeer);
  }
}

// States a connection may move to from `from` without its application doing
// anything (RFC 9293 §3.3.2 Figure 5, the arrows taken on a segment or a
// timer), in any number of steps; CLOSED is always reachable (RST, timeout).
bool reachable_without_app(TcpState from, TcpState to) {
  auto next = [](TcpState s) -> std::vector<TcpState> {
    switch (s) {
      case TcpState::Listen:
        return {TcpState::SynReceived};
      case TcpState::SynSent:  // SYN-ACK (with a FIN: straight to CLOSE-WAIT), or a SYN
        return {TcpState::Established, TcpState::CloseWait, TcpState::SynReceived};
      case TcpState::SynReceived:  // RFC 9293 §3.10.7.4: a RST may return a passive open to LISTEN
        return {TcpState::Established, TcpState::CloseWait, TcpState::Listen};
      case TcpState::Established:
        return {TcpState::CloseWait};
      case TcpState::FinWait1:
        return {TcpState::FinWait2, TcpState::Closing, TcpState::TimeWait};
      case TcpState::FinWait2:
      case TcpState::Closing:
        return {TcpState::TimeWait};
      default:
        return {};
    }
  };
  std::vector<TcpState> todo{from};
  std::vector<bool> seen(static_cast<size_t>(TcpState::kCount));
  seen[static_cast<size_t>(from)] = true;
  while (!todo.empty()) {
    const TcpState s = todo.back();
    todo.pop_back();
    for (const TcpState n : next(s)) {
      if (!seen[static_cast<size_t>(n)]) {
        seen[static_cast<size_t>(n)] = true;
        todo.push_back(n);
      }
    }
  }
  return to == TcpState::Closed || seen[static_cast<size_t>(to)];
}

// The payload byte at sequence number `seq` in every segment the test makes,
// so any byte the connection accepts can be checked wherever it came from.
char pattern(uint32_t seq) {
  return static_cast<char>((seq * 2654435761u) >> 24);
}

TEST(StatesSweepTest, RandomSegmentsKeepEveryInvariant) {
  // Fuzz-like: random flags, numbers and options against every state, the
  // connection's own writes in flight too. After every segment: the state
  // only moves forward, SND.UNA <= SND.NXT and SND.UNA never goes back, what
  // reaches the application grows only and is exactly the bytes that were
  // sent at those sequence numbers, and every segment sent carries at most
  // one MSS of the application's own bytes at their own sequence numbers.
  const uint64_t seed = seed_from_env("TINYTCP_SEED", 99);
  Rng rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed) + " (set TINYTCP_SEED to replay)");
  uint64_t accepted_bytes = 0;
  uint64_t sent_data = 0;
  for (size_t si = 0; si < static_cast<size_t>(TcpState::kCount); ++si) {
    const auto initial = static_cast<TcpState>(si);
    SCOPED_TRACE(to_string(initial));
    struct Fixture : StatesTest {
      void TestBody() override {}
    } f;
    TcpConnection& c = f.reach(initial);
    ASSERT_EQ(c.state(), initial);
    // The application's bytes, written where it may write.
    const std::string written = rng.bytes(20'000);
    const bool writes = initial == TcpState::Established || initial == TcpState::CloseWait ||
                        initial == TcpState::SynSent || initial == TcpState::SynReceived;
    if (writes) {
      ASSERT_EQ(c.outbound().push(written), written.size());
    }
    Link& out = &c == &f.net_.a() ? f.net_.ab() : f.net_.ba();
    out.set_filter([&](const TcpSegment& s) {
      if (!s.payload.empty()) {
        ++sent_data;
        EXPECT_TRUE(writes) << "data the application never wrote";
        EXPECT_LE(s.payload.size(), c.sender().max_payload()) << "more than one MSS";
        const auto offset = static_cast<uint32_t>(s.seqno - (c.sender().isn() + 1));
        EXPECT_LE(uint64_t{offset} + s.payload.size(), c.outbound().bytes_pushed());
        if (uint64_t{offset} + s.payload.size() <= written.size()) {
          EXPECT_TRUE(s.payload == std::string_view(written).substr(offset, s.payload.size()))
              << "payload at stream offset " << offset << " is not what was written there";
        }
      }
      if (s.fin) {
        EXPECT_TRUE(c.outbound().is_closed()) << "FIN the application did not ask for";
      }
      return false;
    });
    std::string got;  // what the application read
    Wrap32 irs{0};
    Wrap32 last_una = c.sender().oldest_unacked();
    for (int i = 0; i < 300 && !c.closed(); ++i) {
      SCOPED_TRACE("segment " + std::to_string(i));
      const TcpState before = c.state();
      TcpSegment s;
      const Wrap32 rcv = c.receiver().ackno().value_or(Wrap32{0});
      s.seqno = rng.chance(0.5) ? rcv + static_cast<uint32_t>(rng.uniform(0, 4000))
                                : Wrap32{static_cast<uint32_t>(rng.next())};
      s.ackno = rng.chance(0.5)
                    ? c.sender().oldest_unacked() + static_cast<uint32_t>(rng.uniform(0, 3000))
                    : Wrap32{static_cast<uint32_t>(rng.next())};
      s.ack = rng.chance(0.8);
      s.rst = rng.chance(0.05);
      s.syn = rng.chance(0.05);
      s.fin = !s.syn && rng.chance(0.05);
      s.window = static_cast<uint16_t>(rng.next());
      if (rng.chance(0.5)) {
        s.options.timestamps =
            tcp::Timestamps{static_cast<uint32_t>(rng.next()), static_cast<uint32_t>(rng.next())};
      }
      s.options.sack_count = static_cast<uint8_t>(rng.uniform(0, 4));
      for (size_t k = 0; k < s.options.sack_count; ++k) {
        s.options.sack[k] = {Wrap32{static_cast<uint32_t>(rng.next())},
                             Wrap32{static_cast<uint32_t>(rng.next())}};
      }
      std::string payload(rng.uniform(0, 2000), '\0');
      for (size_t k = 0; k < payload.size(); ++k) {
        payload[k] = pattern((s.seqno + static_cast<uint32_t>(k + (s.syn ? 1 : 0))).raw());
      }
      s.payload = payload;
      c.receive(s, f.net_.now());
      f.net_.run_for(milliseconds(rng.uniform(0, 50)));

      ASSERT_TRUE(reachable_without_app(before, c.state()))
          << to_string(before) << " -> " << to_string(c.state());
      if (c.closed()) {
        break;
      }
      const Wrap32 una = c.sender().oldest_unacked();
      const Wrap32 nxt = c.sender().next_seqno();
      ASSERT_TRUE(tcp::seq_le(una, nxt)) << "SND.UNA past SND.NXT";
      ASSERT_EQ(c.sender().sequence_numbers_in_flight(), static_cast<uint32_t>(nxt - una));
      ASSERT_LE(c.sender().bytes_in_flight(), c.sender().sequence_numbers_in_flight());
      if (c.sender().syn_sent()) {
        ASSERT_TRUE(tcp::seq_le(last_una, una)) << "SND.UNA went back";
      }
      last_una = una;
      // The application reads: every byte is the one sent at its sequence
      // number (the peer writes nothing, so they all came from the test).
      auto& in = c.inbound();
      if (in.bytes_buffered() > 0) {
        ASSERT_TRUE(c.receiver().irs().has_value());
        irs = *c.receiver().irs();
      }
      while (in.bytes_buffered() > 0) {
        const auto v = in.peek();
        for (size_t k = 0; k < v.size(); ++k) {
          const uint32_t seq = (irs + 1 + static_cast<uint32_t>(got.size() + k)).raw();
          ASSERT_EQ(v[k], pattern(seq)) << "stream byte " << got.size() + k;
        }
        got.append(v);
        in.pop(v.size());
      }
      ASSERT_EQ(c.inbound().bytes_pushed(), got.size()) << "the stream shrank or skipped";
    }
    accepted_bytes += got.size();
  }
  // The sweep reached the paths it checks.
  EXPECT_GT(accepted_bytes, 0u);
  EXPECT_GT(sent_data, 0u);
}

}  // namespace
}  // namespace tinytcp::sim
