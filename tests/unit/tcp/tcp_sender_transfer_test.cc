// Whole transfers through a lossy link to a reference receiver: every
// congestion control, with and without SACK, must deliver every byte intact
// within bounded virtual time and without giving up.

#include <gtest/gtest.h>

#include <map>
#include <queue>
#include <string>
#include <vector>

#include "tcp/tcp_sender.hh"
#include "util/random.hh"

namespace tinytcp::tcp {
namespace {

using namespace std::chrono_literals;

constexpr Wrap32 kIsn{0xffff0000u};
constexpr Wrap32 kPeerIsn{4242};

// A receiver reduced to what the sender sees: cumulative ACK, SACK blocks
// (RFC 2018 §4: the block holding the newest segment first), a fixed window.
class ReferenceReceiver {
 public:
  explicit ReferenceReceiver(bool sack) : sack_(sack) {}

  void on_segment(uint64_t start, const std::string& payload, bool fin) {
    const uint64_t end = start + payload.size() + (fin ? 1 : 0);
    if (fin) {
      fin_at_ = start + payload.size();
    }
    for (size_t i = 0; i < payload.size(); ++i) {
      const uint64_t at = start + i - 1;
      if (at >= data_.size()) {
        data_.resize(at + 1, '\0');
      }
      data_[at] = payload[i];
    }
    if (end <= next_) {
      return;
    }
    ranges_[std::max(start, next_)] = std::max(ranges_[std::max(start, next_)], end);
    merge();
    latest_ = start;
  }

  TcpSegment make_ack() const {
    TcpSegment ack;
    ack.ack = true;
    ack.seqno = kPeerIsn + 1;
    ack.ackno = Wrap32::wrap(next_, kIsn);
    ack.window = 65535;
    if (sack_) {
      std::vector<std::pair<uint64_t, uint64_t>> blocks;
      for (const auto& [l, r] : ranges_) {
        if (latest_ >= l && latest_ < r) {
          blocks.insert(blocks.begin(), {l, r});
        } else {
          blocks.emplace_back(l, r);
        }
      }
      for (const auto& [l, r] : blocks) {
        if (ack.options.sack_count == 3) {
          break;
        }
        ack.options.sack[ack.options.sack_count++] =
            SackBlock{Wrap32::wrap(l, kIsn), Wrap32::wrap(r, kIsn)};
      }
    }
    return ack;
  }

  uint64_t next() const { return next_; }
  std::string data() const { return data_.substr(0, next_ > 1 ? next_ - 1 : 0); }
  bool got_fin() const { return fin_at_ && next_ == *fin_at_ + 1; }

 private:
  void merge() {
    auto it = ranges_.begin();
    while (it != ranges_.end() && it->first <= next_) {
      next_ = std::max(next_, it->second);
      it = ranges_.erase(it);
    }
    for (it = ranges_.begin(); it != ranges_.end();) {
      auto nxt = std::next(it);
      if (nxt != ranges_.end() && nxt->first <= it->second) {
        it->second = std::max(it->second, nxt->second);
        ranges_.erase(nxt);
      } else {
        it = nxt;
      }
    }
  }

  bool sack_;
  uint64_t next_ = 1;
  uint64_t latest_ = 0;
  std::map<uint64_t, uint64_t> ranges_;
  std::string data_;
  std::optional<uint64_t> fin_at_;
};

struct TransferCase {
  const char* cc;
  bool sack;
  double loss;
};

class TransferTest : public ::testing::TestWithParam<TransferCase> {};

TEST_P(TransferTest, DeliversEveryByteOverALossyLink) {
  const TransferCase c = GetParam();
  const uint64_t seed = seed_from_env("TINYTCP_SEED", 0x7a115f3);
  SCOPED_TRACE(::testing::Message() << "TINYTCP_SEED=" << seed);
  Rng rng(seed);
  constexpr size_t kTotal = 300'000;
  constexpr Duration kDelay = 10ms;
  const std::string content = rng.bytes(kTotal);

  TcpConfig config;
  config.congestion_control = c.cc;
  config.send_buffer_bytes = 64 << 10;
  config.max_retransmissions = 30;
  TcpSender sender(config, kIsn);
  ReferenceReceiver receiver(c.sack);
  Instant now;

  struct Event {
    Instant at;
    uint64_t order;
    bool to_receiver;
    uint64_t start;
    std::string payload;
    bool fin;
    TcpSegment ack;
    bool operator>(const Event& o) const { return at != o.at ? at > o.at : order > o.order; }
  };
  std::priority_queue<Event, std::vector<Event>, std::greater<>> link;
  uint64_t order = 0;
  auto transmit = [&](const TcpSegment& seg) {
    if (seg.syn) {
      return;  // the handshake is done by hand below
    }
    if (rng.chance(c.loss)) {
      return;
    }
    const uint64_t start = seg.seqno.unwrap(kIsn, sender.oldest_unacked().unwrap(kIsn, 0));
    link.push(Event{now + kDelay, order++, true, start, std::string(seg.payload), seg.fin, {}});
  };

  sender.push(now, transmit);
  PeerOptions peer;
  peer.mss = 1000;
  peer.sack = c.sack;
  sender.set_peer_options(peer);
  TcpSegment syn_ack;
  syn_ack.syn = true;
  syn_ack.ack = true;
  syn_ack.seqno = kPeerIsn;
  syn_ack.ackno = kIsn + 1;
  syn_ack.window = 65535;
  now += 2 * kDelay;
  ASSERT_EQ(sender.receive(syn_ack, now), AckResult::Advanced);

  size_t written = 0;
  const Instant limit = now + std::chrono::hours(2);
  while (!sender.fin_acked() && !sender.failure() && now < limit) {
    if (written < kTotal) {
      written += sender.outbound().push(std::string_view(content).substr(written));
      if (written == kTotal) {
        sender.outbound().close();
      }
    }
    sender.push(now, transmit);
    std::optional<Instant> next = sender.next_deadline();
    if (!link.empty() && (!next || link.top().at < *next)) {
      next = link.top().at;
    }
    ASSERT_TRUE(next.has_value()) << "stalled: nothing in flight and no timer";
    now = std::max(now, *next);
    while (!link.empty() && link.top().at <= now) {
      Event e = link.top();
      link.pop();
      if (e.to_receiver) {
        receiver.on_segment(e.start, e.payload, e.fin);
        if (!rng.chance(c.loss)) {
          link.push(Event{now + kDelay, order++, false, 0, {}, false, receiver.make_ack()});
        }
      } else {
        sender.receive(e.ack, now);
        sender.push(now, transmit);
      }
    }
    sender.tick(now, transmit);
  }
  ASSERT_FALSE(sender.failure().has_value());
  ASSERT_TRUE(sender.fin_acked()) << "virtual time ran out";
  EXPECT_TRUE(receiver.got_fin());
  EXPECT_TRUE(receiver.data() == content) << "payload corrupted";
  const auto& s = sender.stats();
  if (c.loss == 0) {
    EXPECT_EQ(s.retransmitted_segments, 0u);
  } else {
    EXPECT_GT(s.retransmitted_segments, 0u);
  }
  if (c.loss >= 0.05) {
    EXPECT_GT(s.fast_retransmits, 0u);
    if (c.sack) {
      EXPECT_GT(s.sack_recovered_segments, 0u);
    }
  }
  if (!c.sack) {
    EXPECT_EQ(s.sack_recovered_segments, 0u);
  }
}

std::vector<TransferCase> all_cases() {
  std::vector<TransferCase> cases;
  for (const char* cc : {"reno", "newreno", "cubic", "fixed:8"}) {
    for (const bool sack : {false, true}) {
      for (const double loss : {0.0, 0.01, 0.05, 0.2}) {
        cases.push_back({cc, sack, loss});
      }
    }
  }
  return cases;
}

std::string case_name(const ::testing::TestParamInfo<TransferCase>& info) {
  std::string name = info.param.cc;
  for (auto& ch : name) {
    if (ch == ':') {
      ch = '_';
    }
  }
  name += info.param.sack ? "_sack" : "_nosack";
  name += "_loss" + std::to_string(static_cast<int>(info.param.loss * 100));
  return name;
}

INSTANTIATE_TEST_SUITE_P(TcpSender, TransferTest, ::testing::ValuesIn(all_cases()), case_name);

}  // namespace
}  // namespace tinytcp::tcp
