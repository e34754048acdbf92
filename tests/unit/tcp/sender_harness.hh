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

#include <gtest/gtest.h>

#include <deque>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tcp/tcp_sender.hh"

namespace tinytcp::tcp::testing {

using namespace std::chrono_literals;

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
  SegmentCheck& seqno(uint64_t absolute) {
    EXPECT_EQ(seg_.seqno.raw(), Wrap32::wrap(absolute, isn_).raw()) << "seqno";
    return *this;
  }
  SegmentCheck& payload(std::string_view p) {
    EXPECT_EQ(seg_.payload, p) << "payload";
    return *this;
  }
  SegmentCheck& payload_size(size_t n) {
    EXPECT_EQ(seg_.payload.size(), n) << "payload size";
    return *this;
  }
  SegmentCheck& syn(bool on = true) {
    EXPECT_EQ(seg_.syn, on) << "SYN";
    return *this;
  }
  SegmentCheck& fin(bool on = true) {
    EXPECT_EQ(seg_.fin, on) << "FIN";
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

  void make() { sender.emplace(config, kIsn); }

  TcpSender::Transmit sink() {
    return [this](const TcpSegment& seg) {
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
  void establish(PeerOptions peer = default_peer(), uint16_t window = 65535) {
    make();
    sender->push(now, sink());
    expect_segment().syn().seqno(0);
    sender->set_peer_options(peer);
    TcpSegment syn_ack;
    syn_ack.syn = true;
    syn_ack.ack = true;
    syn_ack.seqno = kPeerSeq - 1;
    syn_ack.ackno = Wrap32::wrap(1, kIsn);
    syn_ack.window = window;
    EXPECT_EQ(sender->receive(syn_ack, now), AckResult::Advanced);
    sender->push(now, sink());
    ASSERT_TRUE(sender->syn_acked());
  }

  static PeerOptions default_peer() {
    PeerOptions p;
    p.mss = 1000;  // round numbers: 1000 payload bytes per segment
    p.send_window_shift = 0;
    p.sack = false;
    p.timestamps = false;
    return p;
  }

  void push(std::string_view data) {
    EXPECT_EQ(sender->outbound().push(data), data.size());
    sender->push(now, sink());
  }
  void push_bytes(size_t n, char c = 'x') { push(std::string(n, c)); }
  void close() {
    sender->outbound().close();
    sender->push(now, sink());
  }
  void tick(Duration d) {
    now += d;
    sender->tick(now, sink());
  }

  // An acknowledgment from the peer (then push(), as TcpConnection does).
  AckResult ack(uint64_t absolute, uint16_t window = 65535,
                std::vector<std::pair<uint64_t, uint64_t>> sacks = {},
                std::optional<uint32_t> ts_echo = std::nullopt) {
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
    return receive(seg);
  }
  AckResult receive(const TcpSegment& seg) {
    const AckResult r = sender->receive(seg, now);
    sender->push(now, sink());
    return r;
  }

  SegmentCheck expect_segment() {
    if (sent.empty()) {
      ADD_FAILURE() << "expected a segment, none was sent";
      return SegmentCheck(SentSegment{}, kIsn);
    }
    SentSegment s = std::move(sent.front());
    sent.pop_front();
    return SegmentCheck(std::move(s), kIsn);
  }
  void expect_nothing_sent() {
    EXPECT_TRUE(sent.empty()) << sent.size() << " segment(s) sent, first at "
                              << (sent.empty() ? 0 : sent.front().seqno.raw() - kIsn.raw());
    sent.clear();
  }
  size_t drain() {
    const size_t n = sent.size();
    sent.clear();
    return n;
  }
  Duration rto() const { return sender->state().rto; }

  TcpConfig config;
  std::optional<TcpSender> sender;
  Instant now;
  std::deque<SentSegment> sent;
};

}  // namespace tinytcp::tcp::testing
