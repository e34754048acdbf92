#pragma once

// The fixture of the TcpConnection tests: one connection against a scripted
// peer whose segments the test builds by hand.

#include <gtest/gtest.h>

#include <deque>
#include <memory>
#include <string>

#include "tcp/tcp_connection.hh"

namespace tinytcp::tcp {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr Wrap32 kIsn{1000};
constexpr Wrap32 kPeerIsn{0xfffffff0};

// A stored copy of a segment we sent (the payload copied).
struct Sent {
  TcpSegment segment;
  std::string payload;
};

// Drives one TcpConnection against a scripted peer: the test builds the
// peer's segments by hand and checks what the connection answers.
class TcpConnectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config_.msl = seconds(1);
    make();
  }
  void make() {
    conn_ = std::make_unique<TcpConnection>(config_, kIsn, [this](const TcpSegment& s) {
      sent_.push_back(Sent{s, std::string(s.payload)});
      sent_.back().segment.payload = sent_.back().payload;
    });
  }
  TcpSegment expect_segment() {
    EXPECT_FALSE(sent_.empty()) << "nothing sent";
    if (sent_.empty()) {
      return {};
    }
    Sent s = std::move(sent_.front());
    sent_.pop_front();
    s.segment.payload = {};
    last_payload_ = s.payload;
    return s.segment;
  }
  void expect_nothing_sent() {
    EXPECT_TRUE(sent_.empty()) << sent_.size() << " segments sent";
    sent_.clear();
  }
  // A segment from the peer; `offset` counts from the peer's ISN + 1.
  TcpSegment peer(uint32_t offset, std::string_view data = "", bool ack = true) {
    TcpSegment s;
    s.seqno = kPeerIsn + 1 + offset;
    s.ack = ack;
    s.ackno = our_nxt_;
    s.window = 65535;
    s.payload = data;
    if (peer_timestamps_) {
      s.options.timestamps = Timestamps{++peer_tsval_, 0};
    }
    return s;
  }
  TcpSegment peer_syn(bool with_ack) {
    TcpSegment s;
    s.syn = true;
    s.seqno = kPeerIsn;
    s.ack = with_ack;
    s.ackno = kIsn + 1;
    s.window = 65535;
    s.options.mss = 1400;
    s.options.window_scale = 2;
    s.options.sack_permitted = true;
    if (peer_timestamps_) {
      s.options.timestamps = Timestamps{++peer_tsval_, 0};
    }
    return s;
  }
  void deliver(const TcpSegment& s) { conn_->receive(s, now_); }
  void advance(Duration d) {
    now_ += d;
    conn_->tick(now_);
  }
  // Active open to ESTABLISHED; the SYN and final ACK consumed.
  void establish_active() {
    conn_->connect(now_);
    expect_segment();
    deliver(peer_syn(true));
    our_nxt_ = kIsn + 1;
    const auto ack = expect_segment();
    ASSERT_EQ(conn_->state(), TcpState::Established);
    ASSERT_EQ(ack.ackno, kPeerIsn + 1);
  }
  uint64_t drops(ConnectionDrop d) const { return conn_->stats().drops[d]; }

  TcpConfig config_;
  std::unique_ptr<TcpConnection> conn_;
  std::deque<Sent> sent_;
  std::string last_payload_;
  Instant now_;
  Wrap32 our_nxt_ = kIsn + 1;
  // The peer's SYN offers timestamps, and its segments carry TSval.
  bool peer_timestamps_ = false;
  uint32_t peer_tsval_ = 100;
};

}  // namespace tinytcp::tcp
