#pragma once

// A simulated network for whole-connection tests: two TcpConnections joined
// by two seeded one-way links with loss, delay, jitter, reordering,
// duplication and corruption, on a manual clock. Every segment is serialized
// through the wire codec (with a real checksum) and parsed again on arrival,
// so a corrupted segment is dropped by the checksum, as on a real network.
// `corrupt` damages a segment so that the checksum always catches it;
// `undetected_corrupt` damages it so that it never does (RFC 1071: the
// one's complement sum cannot see words reordered, or one word's bit set
// where another's is cleared), as a link whose CRC missed an error would.

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "stack/tcp_codec.hh"
#include "tcp/tcp_connection.hh"
#include "util/random.hh"
#include "wire/tcp_header.hh"

namespace tinytcp::sim {

struct LinkParams {
  double loss = 0;
  double duplicate = 0;
  double reorder = 0;  // chance of an extra delay of up to 4 x `delay`
  double corrupt = 0;  // chance of flipping one to three bits of one 16-bit word
  // Chance of damage the Internet checksum cannot detect: two different
  // 16-bit words swapped, or the same bit set in one word and cleared in
  // another. Anywhere in the segment, or only in its payload.
  double undetected_corrupt = 0;
  bool undetected_in_payload_only = false;
  Duration delay = std::chrono::milliseconds(10);
  Duration jitter{0};  // uniform extra delay in [0, jitter]
  // A bottleneck before the delay: packets leave one after another at this
  // many bytes per second (IPv4 datagram bytes), queueing behind each other,
  // so a sender that sends faster sees its round trip grow. 0: no limit.
  uint64_t rate_bytes_per_s = 0;
  // IPv4 datagram size the link carries (20 bytes of IPv4 header added to
  // each segment). A larger segment fails the running test: a real device
  // would drop it (RFC 6691).
  size_t mtu = 1500;
};

struct LinkStats {
  uint64_t sent = 0;
  uint64_t lost = 0;
  uint64_t duplicated = 0;
  uint64_t corrupted = 0;
  uint64_t checksum_drops = 0;      // corrupted and caught by parse_tcp
  uint64_t undetected_damaged = 0;  // damaged past the checksum (undetected_corrupt)
  // Of them, delivered: parse_tcp found nothing wrong (the damage may still
  // make the header unparseable, which counts in checksum_drops).
  uint64_t undetected_delivered = 0;
  uint64_t delivered = 0;
  uint64_t filtered = 0;   // dropped by the test's filter
  uint64_t oversized = 0;  // larger than the MTU (a test failure)
};

// One direction. Packets are bytes in flight, keyed by arrival time.
class Link {
 public:
  static constexpr size_t kIpv4HeaderBytes = 20;

  using Filter = std::function<bool(const tcp::TcpSegment&)>;  // true: drop it

  Link(LinkParams params, uint64_t seed, uint32_t src_ip, uint32_t dst_ip)
      : params_(params), rng_(seed), src_ip_(src_ip), dst_ip_(dst_ip) {}

  void set_params(const LinkParams& p) { params_ = p; }
  void set_filter(Filter f) { filter_ = std::move(f); }
  // Sees every segment as it is delivered, before the receiving end does.
  void set_observer(std::function<void(const tcp::TcpSegment&)> f) { observer_ = std::move(f); }
  // Holds every packet (a cable pulled out) until released.
  void set_blocked(bool blocked) { blocked_ = blocked; }

  void send(const tcp::TcpSegment& segment, Instant now) {
    ++stats_.sent;
    if (filter_ && filter_(segment)) {
      ++stats_.filtered;
      return;
    }
    if (blocked_ || rng_.chance(params_.loss)) {
      ++stats_.lost;
      return;
    }
    std::string bytes(wire::TcpHeader::kMaxSize + segment.payload.size(), '\0');
    BufferWriter out(bytes.data(), bytes.size());
    TINYTCP_CHECK(stack::serialize_segment(segment, 1000, 2000, src_ip_, dst_ip_, out));
    bytes.resize(out.size());
    if (bytes.size() + kIpv4HeaderBytes > params_.mtu) {
      ++stats_.oversized;
      ADD_FAILURE() << "segment of " << segment.payload.size() << " payload bytes and "
                    << bytes.size() - segment.payload.size() << " header bytes exceeds MTU "
                    << params_.mtu;
      return;
    }
    if (rng_.chance(params_.corrupt)) {
      ++stats_.corrupted;
      // One to three bits of one 16-bit word: the Internet checksum catches
      // every such error (flips spread over several words can cancel out,
      // which a real link's CRC would catch instead).
      const uint64_t word = rng_.uniform(0, bytes.size() / 2 - 1);
      const uint64_t flips = rng_.uniform(1, 3);
      uint16_t mask = 0;
      while (static_cast<uint64_t>(__builtin_popcount(mask)) < flips) {
        mask = static_cast<uint16_t>(mask | (1u << rng_.uniform(0, 15)));
      }
      bytes[word * 2] = static_cast<char>(bytes[word * 2] ^ (mask >> 8));
      bytes[word * 2 + 1] = static_cast<char>(bytes[word * 2 + 1] ^ (mask & 0xff));
    }
    bool damaged = false;
    if (params_.undetected_corrupt > 0 && rng_.chance(params_.undetected_corrupt)) {
      const size_t first_word =
          params_.undetected_in_payload_only ? (bytes.size() - segment.payload.size() + 1) / 2 : 0;
      damaged = damage_undetectably(bytes, first_word);
      stats_.undetected_damaged += damaged ? 1 : 0;
    }
    const int copies = rng_.chance(params_.duplicate) ? 2 : 1;
    if (copies == 2) {
      ++stats_.duplicated;
    }
    for (int c = 0; c < copies; ++c) {
      Duration d = params_.delay;
      if (params_.rate_bytes_per_s > 0) {
        const Instant start = std::max(now, busy_until_);
        busy_until_ =
            start + Duration(static_cast<int64_t>((bytes.size() + kIpv4HeaderBytes) *
                                                  1'000'000'000ull / params_.rate_bytes_per_s));
        d += busy_until_ - now;
      }
      if (params_.jitter > Duration::zero()) {
        d += Duration(
            static_cast<int64_t>(rng_.uniform(0, static_cast<uint64_t>(params_.jitter.count()))));
      }
      if (rng_.chance(params_.reorder)) {
        d += Duration(static_cast<int64_t>(
            rng_.uniform(0, static_cast<uint64_t>(4 * params_.delay.count()))));
      }
      queue_.emplace(std::make_pair(now + d, next_id_++), Packet{bytes, damaged});
    }
  }

  std::optional<Instant> next_arrival() const {
    if (queue_.empty()) {
      return std::nullopt;
    }
    return queue_.begin()->first.first;
  }

  // Hands every packet due by `now` to `deliver` (parsed; corrupt ones dropped).
  template <typename F>
  void deliver_due(Instant now, F&& deliver) {
    while (!queue_.empty() && queue_.begin()->first.first <= now) {
      const Packet packet = std::move(queue_.begin()->second);
      queue_.erase(queue_.begin());
      const auto view = wire::parse_tcp(packet.bytes, src_ip_, dst_ip_);
      if (!view) {
        ++stats_.checksum_drops;
        continue;
      }
      ++stats_.delivered;
      stats_.undetected_delivered += packet.damaged ? 1 : 0;
      const tcp::TcpSegment segment = stack::to_segment(*view);
      if (observer_) {
        observer_(segment);
      }
      deliver(segment);
    }
  }
  void clear() { queue_.clear(); }
  size_t in_flight() const { return queue_.size(); }
  const LinkStats& stats() const { return stats_; }

 private:
  Instant busy_until_{};  // the bottleneck sends its last queued bit then
  struct Packet {
    std::string bytes;
    bool damaged = false;  // by undetected_corrupt
  };

  // Changes two different 16-bit words at or after `first_word` of the
  // segment so that its one's complement sum stays the same (RFC 1071 §2:
  // the sum is commutative, and +2^k in one word with -2^k in another cancel).
  // False if there is nothing to change (fewer than two words, or all equal).
  bool damage_undetectably(std::string& bytes, size_t first_word) {
    const size_t words = bytes.size() / 2;
    if (words < first_word + 2) {
      return false;
    }
    const auto word_at = [&](size_t w) {
      return static_cast<uint16_t>((static_cast<uint8_t>(bytes[2 * w]) << 8) |
                                   static_cast<uint8_t>(bytes[2 * w + 1]));
    };
    const auto set_word = [&](size_t w, uint16_t v) {
      bytes[2 * w] = static_cast<char>(v >> 8);
      bytes[2 * w + 1] = static_cast<char>(v & 0xff);
    };
    for (int attempt = 0; attempt < 16; ++attempt) {
      const size_t i = rng_.uniform(first_word, words - 1);
      const size_t j = rng_.uniform(first_word, words - 1);
      const uint16_t a = word_at(i);
      const uint16_t b = word_at(j);
      if (i == j || a == b) {
        continue;
      }
      if (rng_.chance(0.5)) {
        set_word(i, b);  // swapped
        set_word(j, a);
        return true;
      }
      // A bit that is clear in one word and set in the other moves across.
      const auto differ = static_cast<uint16_t>(~a & b);
      if (differ == 0) {
        continue;
      }
      int bit = static_cast<int>(rng_.uniform(0, 15));
      while ((differ & (1u << bit)) == 0) {
        bit = (bit + 1) % 16;
      }
      set_word(i, static_cast<uint16_t>(a | (1u << bit)));
      set_word(j, static_cast<uint16_t>(b & ~(1u << bit)));
      return true;
    }
    return false;
  }

  LinkParams params_;
  Rng rng_;
  uint32_t src_ip_;
  uint32_t dst_ip_;
  Filter filter_;
  std::function<void(const tcp::TcpSegment&)> observer_;
  bool blocked_ = false;
  std::map<std::pair<Instant, uint64_t>, Packet> queue_;
  uint64_t next_id_ = 0;
  LinkStats stats_;
};

// Two connections, A and B, and the links between them.
class Network {
 public:
  Network(const tcp::TcpConfig& config_a, const tcp::TcpConfig& config_b, LinkParams ab,
          LinkParams ba, uint64_t seed)
      : ab_(ab, seed * 2 + 1, kIpA, kIpB), ba_(ba, seed * 2 + 2, kIpB, kIpA) {
    Rng rng(seed);
    a_ = std::make_unique<tcp::TcpConnection>(
        config_a, tcp::Wrap32{static_cast<uint32_t>(rng.next())},
        [this](const tcp::TcpSegment& s) { ab_.send(s, now_); });
    b_ = std::make_unique<tcp::TcpConnection>(
        config_b, tcp::Wrap32{static_cast<uint32_t>(rng.next())},
        [this](const tcp::TcpSegment& s) { ba_.send(s, now_); });
  }

  tcp::TcpConnection& a() { return *a_; }
  tcp::TcpConnection& b() { return *b_; }
  Link& ab() { return ab_; }
  Link& ba() { return ba_; }
  Instant now() const { return now_; }

  // Delivers due packets and fires due timers at the current time.
  void step_now() {
    ab_.deliver_due(now_, [this](const tcp::TcpSegment& s) { b_->receive(s, now_); });
    ba_.deliver_due(now_, [this](const tcp::TcpSegment& s) { a_->receive(s, now_); });
    a_->tick(now_);
    b_->tick(now_);
  }

  // The earliest pending event, if any.
  std::optional<Instant> next_event() const {
    std::optional<Instant> next;
    for (const auto& t :
         {ab_.next_arrival(), ba_.next_arrival(), a_->next_deadline(), b_->next_deadline()}) {
      if (t && (!next || *t < *next)) {
        next = t;
      }
    }
    return next;
  }

  // Runs until `done()` or `limit` of virtual time passes; `app()` is called
  // at every step (to write, read and tick). Returns whether done() held.
  bool run_until(const std::function<bool()>& done, Duration limit,
                 const std::function<void()>& app = {}) {
    const Instant end = now_ + limit;
    while (true) {
      if (app) {
        app();
      }
      step_now();
      if (app) {
        app();
      }
      if (done()) {
        return true;
      }
      const auto next = next_event();
      if (!next || *next > end) {
        now_ = std::max(now_, end);
        return done();
      }
      now_ = std::max(now_ + std::chrono::microseconds(1), *next);
    }
  }

  // Advances the clock by `d`, processing everything on the way.
  void run_for(Duration d, const std::function<void()>& app = {}) {
    run_until([] { return false; }, d, app);
  }

  static constexpr uint32_t kIpA = 0x0a000001;
  static constexpr uint32_t kIpB = 0x0a000002;

 private:
  Instant now_;
  Link ab_;
  Link ba_;
  std::unique_ptr<tcp::TcpConnection> a_;
  std::unique_ptr<tcp::TcpConnection> b_;
};

}  // namespace tinytcp::sim
