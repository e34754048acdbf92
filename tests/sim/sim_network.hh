#pragma once

// A simulated network for whole-connection tests: two TcpConnections joined
// by two seeded one-way links with loss, delay, jitter, reordering,
// duplication and corruption, on a manual clock. Every segment is serialized
// through the wire codec (with a real checksum) and parsed again on arrival,
// so a corrupted segment is dropped by the checksum, as on a real network.

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
  double corrupt = 0;  // chance of flipping one to three bits
  Duration delay = std::chrono::milliseconds(10);
  Duration jitter{0};  // uniform extra delay in [0, jitter]
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
  uint64_t checksum_drops = 0;  // corrupted and caught by parse_tcp
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
    const int copies = rng_.chance(params_.duplicate) ? 2 : 1;
    if (copies == 2) {
      ++stats_.duplicated;
    }
    for (int c = 0; c < copies; ++c) {
      Duration d = params_.delay;
      if (params_.jitter > Duration::zero()) {
        d += Duration(
            static_cast<int64_t>(rng_.uniform(0, static_cast<uint64_t>(params_.jitter.count()))));
      }
      if (rng_.chance(params_.reorder)) {
        d += Duration(static_cast<int64_t>(
            rng_.uniform(0, static_cast<uint64_t>(4 * params_.delay.count()))));
      }
      queue_.emplace(std::make_pair(now + d, next_id_++), bytes);
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
      const std::string bytes = std::move(queue_.begin()->second);
      queue_.erase(queue_.begin());
      const auto view = wire::parse_tcp(bytes, src_ip_, dst_ip_);
      if (!view) {
        ++stats_.checksum_drops;
        continue;
      }
      ++stats_.delivered;
      deliver(stack::to_segment(*view));
    }
  }
  void clear() { queue_.clear(); }
  size_t in_flight() const { return queue_.size(); }
  const LinkStats& stats() const { return stats_; }

 private:
  LinkParams params_;
  Rng rng_;
  uint32_t src_ip_;
  uint32_t dst_ip_;
  Filter filter_;
  bool blocked_ = false;
  std::map<std::pair<Instant, uint64_t>, std::string> queue_;
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
