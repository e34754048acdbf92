#pragma once

// Test harness for TcpSender: the sender, a recording transmit sink, a manual
// clock and verb helpers, so a test reads like the RFC:
//
//   push("hello");
//   tick(rto - 1ms);  expect_nothing_sent();
//   tick(1ms);        expect_segment().seqno(1).payload("hello");
//   ack(6);           expect_nothing_sent();
//
// Sequence numbers in the helpers are absolute (0 is the SYN); the harness
// wraps them with the ISN.
//
// Every verb and check takes the caller's file and line (a defaulted
// CallSite), so a failure names the test's line, not the harness's. Every
// segment the sender emits is checked against invariants that hold in every
// test (check_invariants), and a test that leaves sent segments unexamined
// fails in TearDown: consume them with expect_segment(), drain() or
// expect_nothing_sent().

#include <gtest/gtest.h>

#include <deque>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tcp/tcp_sender.hh"

namespace tinytcp::tcp::testing {

using namespace std::chrono_literals;

// Where a helper was called from: the defaulted arguments are evaluated at
// the call site (GCC and Clang builtins; std::source_location is C++20).
struct CallSite {
  CallSite(const char* f = __builtin_FILE(), int l = __builtin_LINE()) : file(f), line(l) {}
  const char* file;
  int line;
};

// EXPECT_EQ reported at `at`.
template <typename A, typename B>
void expect_eq_at(const CallSite& at, const char* what, const A& actual, const B& expected) {
  if (!(actual == expected)) {
    ADD_FAILURE_AT(at.file, at.line) << what << ": " << ::testing::PrintToString(actual)
                                     << ", expected " << ::testing::PrintToString(expected);
  }
}

struct SentSegment {
  Wrap32 seqno;
  bool syn = false;
  bool fin = false;
  bool psh = false;
  std::string payload;
  TcpOptions options;
};

// Chained expectations on one sent segment.
class SegmentCheck {
 public:
  SegmentCheck(SentSegment seg, Wrap32 isn) : seg_(std::move(seg)), isn_(isn) {}
  SegmentCheck& seqno(uint64_t absolute, CallSite at = {}) {
    expect_eq_at(at, "seqno (absolute)", absolute_seqno(),
                 static_cast<uint64_t>(static_cast<uint32_t>(absolute)));
    return *this;
  }
  SegmentCheck& payload(std::string_view p, CallSite at = {}) {
    expect_eq_at(at, "payload", seg_.payload, std::string(p));
    return *this;
  }
  SegmentCheck& payload_size(size_t n, CallSite at = {}) {
    expect_eq_at(at, "payload size", seg_.payload.size(), n);
    return *this;
  }
  SegmentCheck& syn(bool on = true, CallSite at = {}) {
    expect_eq_at(at, "SYN", seg_.syn, on);
    return *this;
  }
  SegmentCheck& fin(bool on = true, CallSite at = {}) {
    expect_eq_at(at, "FIN", seg_.fin, on);
    return *this;
  }
  const SentSegment& segment() const { return seg_; }
  uint64_t absolute_seqno() const { return static_cast<uint32_t>(seg_.seqno.raw() - isn_.raw()); }

 private:
  SentSegment seg_;
  Wrap32 isn_;
};

class SenderHarness : public ::testing::Test {
 protected:
  static constexpr Wrap32 kIsn{0xfffff000u};  // wraps soon: every test crosses 2^32
  static constexpr Wrap32 kPeerSeq{77};

  SenderHarness() {
    config.mss = 1460;
    config.congestion_control = "newreno";
  }

  void TearDown() override {
    if (!sent.empty()) {
      ADD_FAILURE() << sent.size() << " sent segment(s) never examined, the first at "
                    << absolute(sent.front().seqno) << " with " << sent.front().payload.size()
                    << " bytes: consume them with expect_segment(), drain() or "
                       "expect_nothing_sent()";
    }
  }

  void make() {
    sender.emplace(config, kIsn);
    pushed.clear();
    right_edge_.reset();
    highest_end_ = 0;
  }

  TcpSender::Transmit sink() {
    return [this](const TcpSegment& seg) {
      check_invariants(seg);
      SentSegment s;
      s.seqno = seg.seqno;
      s.syn = seg.syn;
      s.fin = seg.fin;
      s.psh = seg.psh;
      s.payload = std::string(seg.payload);
      s.options = seg.options;
      sent.push_back(std::move(s));
    };
  }

  // Makes the sender, sends the SYN, and acknowledges it with `window`.
  void establish(PeerOptions peer = default_peer(), uint16_t window = 65535, CallSite at = {}) {
    const ::testing::ScopedTrace trace(at.file, at.line, "establish()");
    make();
    sender->push(now, sink());
    expect_segment(at).syn(true, at).seqno(0, at);
    sender->set_peer_options(peer);
    expect_eq_at(at, "SYN-ACK", syn_ack(window, at), AckResult::Advanced);
    ASSERT_TRUE(sender->syn_acked());
  }

  // The peer's SYN-ACK (then push(), as TcpConnection does).
  AckResult syn_ack(uint16_t window = 65535, CallSite at = {}) {
    TcpSegment seg;
    seg.syn = true;
    seg.ack = true;
    seg.seqno = kPeerSeq - 1;
    seg.ackno = Wrap32::wrap(1, kIsn);
    seg.window = window;
    return receive(seg, at);
  }

  static PeerOptions default_peer() {
    PeerOptions p;
    p.mss = 1000;  // round numbers: 1000 payload bytes per segment
    p.send_window_shift = 0;
    p.sack = false;
    p.timestamps = false;
    return p;
  }

  void push(std::string_view data, CallSite at = {}) {
    const ::testing::ScopedTrace trace(at.file, at.line, "push()");
    const size_t taken = sender->outbound().push(data);
    expect_eq_at(at, "bytes the send buffer took", taken, data.size());
    if (pushed.size() + taken == sender->outbound().bytes_pushed()) {
      pushed.append(data.substr(0, taken));
    }
    call([&] { sender->push(now, sink()); });
  }
  void push_bytes(size_t n, char c = 'x', CallSite at = {}) { push(std::string(n, c), at); }
  void close(CallSite at = {}) {
    const ::testing::ScopedTrace trace(at.file, at.line, "close()");
    sender->outbound().close();
    call([&] { sender->push(now, sink()); });
  }
  void tick(Duration d, CallSite at = {}) {
    const ::testing::ScopedTrace trace(at.file, at.line, "tick()");
    now += d;
    call([&] { sender->tick(now, sink()); });
  }

  // An acknowledgment from the peer (then push(), as TcpConnection does).
  AckResult ack(uint64_t absolute, uint16_t window = 65535,
                std::vector<std::pair<uint64_t, uint64_t>> sacks = {},
                std::optional<uint32_t> ts_echo = std::nullopt, CallSite at = {}) {
    TcpSegment seg;
    seg.ack = true;
    seg.seqno = kPeerSeq;
    seg.ackno = Wrap32::wrap(absolute, kIsn);
    seg.window = window;
    for (const auto& [l, r] : sacks) {
      if (seg.options.sack_count < TcpOptions::kMaxSackBlocks) {
        seg.options.sack[seg.options.sack_count++] =
            SackBlock{Wrap32::wrap(l, kIsn), Wrap32::wrap(r, kIsn)};
      }
    }
    if (ts_echo) {
      seg.options.timestamps = Timestamps{1, *ts_echo};
    }
    return receive(seg, at);
  }
  AckResult receive(const TcpSegment& seg, CallSite at = {}) {
    const ::testing::ScopedTrace trace(at.file, at.line, "receive()");
    note_window(seg);
    AckResult r = AckResult::NoAck;
    call([&] {
      r = sender->receive(seg, now);
      sender->push(now, sink());
    });
    return r;
  }

  SegmentCheck expect_segment(CallSite at = {}) {
    if (sent.empty()) {
      ADD_FAILURE_AT(at.file, at.line) << "expected a segment, none was sent";
      return SegmentCheck(SentSegment{}, kIsn);
    }
    SentSegment s = std::move(sent.front());
    sent.pop_front();
    return SegmentCheck(std::move(s), kIsn);
  }
  void expect_nothing_sent(CallSite at = {}) {
    if (!sent.empty()) {
      ADD_FAILURE_AT(at.file, at.line)
          << sent.size() << " segment(s) sent, first at " << absolute(sent.front().seqno);
    }
    sent.clear();
  }
  size_t drain() {
    const size_t n = sent.size();
    sent.clear();
    return n;
  }
  Duration rto() const { return sender->state().rto; }

  // Absolute sequence number (0 is the SYN) of a sequence number we sent.
  static uint64_t absolute(Wrap32 seqno) { return static_cast<uint32_t>(seqno.raw() - kIsn.raw()); }

  TcpConfig config;
  std::optional<TcpSender> sender;
  Instant now;
  std::deque<SentSegment> sent;
  // Every byte pushed through push(), when push() was the only writer.
  std::string pushed;

 private:
  // Runs one call into the sender, then checks that nothing it sent reaches
  // past SND.NXT.
  template <typename F>
  void call(F&& f) {
    const size_t before = sent.size();
    f();
    const uint64_t nxt = absolute(sender->next_seqno());
    for (size_t i = before; i < sent.size(); ++i) {
      const SentSegment& s = sent[i];
      const uint64_t end = absolute(s.seqno) + s.payload.size() + (s.syn ? 1 : 0) + (s.fin ? 1 : 0);
      EXPECT_LE(end, nxt) << "a segment beyond SND.NXT";
    }
  }

  // The peer's window as RFC 9293 §3.10.7.4 has the sender take it: only from
  // an ACK in [SND.UNA, SND.NXT] that is newer (SND.WL1, SND.WL2) than the
  // last update.
  void note_window(const TcpSegment& seg) {
    if (!seg.ack || !sender->syn_sent()) {
      return;
    }
    const uint64_t una = absolute(sender->oldest_unacked());
    const uint64_t nxt = absolute(sender->next_seqno());
    const int64_t ack = static_cast<int64_t>(una) +
                        static_cast<int32_t>(seg.ackno.raw() - sender->oldest_unacked().raw());
    if (ack < static_cast<int64_t>(una) || ack > static_cast<int64_t>(nxt)) {
      return;
    }
    const bool newer =
        !right_edge_ || static_cast<int32_t>(seg.seqno.raw() - wl1_.raw()) > 0 ||
        (seg.seqno == wl1_ && static_cast<int32_t>(seg.ackno.raw() - wl2_.raw()) >= 0);
    if (!newer) {
      return;
    }
    const uint8_t shift = seg.syn ? 0 : sender->peer_options().send_window_shift;
    right_edge_ = static_cast<uint64_t>(ack) + (uint64_t{seg.window} << shift);
    wl1_ = seg.seqno;
    wl2_ = seg.ackno;
  }

  // What holds for every segment of every test.
  void check_invariants(const TcpSegment& seg) {
    const uint64_t start = absolute(seg.seqno);
    const uint64_t una = absolute(sender->oldest_unacked());
    const uint64_t nxt = absolute(sender->next_seqno());
    const auto& out = sender->outbound();
    const uint64_t data_end = 1 + out.bytes_pushed();  // sequence number after the last byte
    const uint64_t end = start + seg.sequence_length();
    if (seg.syn) {
      EXPECT_EQ(start, 0u) << "a SYN not at the ISN";
      EXPECT_TRUE(seg.payload.empty()) << "data on our SYN";
      EXPECT_FALSE(seg.fin) << "SYN with FIN";
    } else {
      EXPECT_TRUE(sender->syn_acked()) << "a segment other than the SYN before the SYN-ACK";
      EXPECT_LE(seg.payload.size(), sender->max_payload()) << "payload past the MSS";
      EXPECT_LE(start, nxt) << "seqno " << start << " past SND.NXT " << nxt;
      if (sender->peer_options().timestamps) {
        EXPECT_TRUE(seg.options.timestamps.has_value()) << "no TSval (RFC 7323 §3.2)";
      }
    }
    if (!seg.payload.empty()) {
      EXPECT_GE(start, std::max<uint64_t>(una, 1)) << "data below SND.UNA";
      EXPECT_LE(start + seg.payload.size(), data_end) << "data the application never wrote";
      if (pushed.size() == out.bytes_pushed() && start >= 1 &&
          start + seg.payload.size() <= data_end) {
        EXPECT_TRUE(seg.payload == std::string_view(pushed).substr(start - 1, seg.payload.size()))
            << "payload at " << start << " is not what the application wrote there";
      }
    }
    if (seg.fin) {
      EXPECT_TRUE(out.is_closed()) << "FIN before close()";
      EXPECT_EQ(start + seg.payload.size(), data_end) << "FIN before the end of the data";
    }
    if (end > highest_end_) {
      // New sequence space: inside the peer's window, but for a one-octet
      // probe of a zero window (RFC 9293 §3.8.6.1).
      if (right_edge_ && !seg.syn) {
        const bool probe = *right_edge_ <= start && seg.payload.size() <= 1;
        EXPECT_TRUE(end <= *right_edge_ || probe)
            << "[" << start << ", " << end << ") beyond the peer's right edge " << *right_edge_;
      }
      highest_end_ = end;
    }
  }

  std::optional<uint64_t> right_edge_;  // SND.UNA + SND.WND as the model has it
  Wrap32 wl1_;
  Wrap32 wl2_;
  uint64_t highest_end_ = 0;  // end of the highest sequence space sent
};

}  // namespace tinytcp::tcp::testing
