// Robust sessions under cut carriers (issue 17): a client Session and a
// SessionAcceptor over in-memory carriers on a manual clock. Each run makes
// well over 1,000 cuts, at random offsets and at the boundaries (0, 1, the
// ack interval +-1, the replay buffer size +-1) of either direction's data,
// during the open (also exactly between the HELLO and the data behind it),
// during resumption and during half-close; by RST (both ends
// told), by a silent black hole (only the heartbeat timeout notices) and by an
// address change (a new carrier while the server still holds the old one).
// Both directions must arrive byte for byte: nothing lost, duplicated or
// reordered. TINYTCP_SEED=<n> replays a run.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "session/session.hh"
#include "session/session_acceptor.hh"
#include "sim/session_pair.hh"
#include "util/random.hh"

namespace tinytcp::session {
namespace {

using namespace std::chrono_literals;
using testing::small_config;

enum class CutKind { Rst, BlackHole, AddressChange };
const char* to_string(CutKind k) {
  return k == CutKind::Rst ? "rst" : k == CutKind::BlackHole ? "black-hole" : "address-change";
}

struct CutCounts {
  int total = 0;
  int by_kind[3] = {0, 0, 0};
  int handshake = 0;  // during the open or a resumption
  int half_close = 0;
  int boundary = 0;
  int hello_data = 0;  // exactly between a HELLO and the data behind it
  int restarts = 0;    // a HELLO lost with its carrier: the client started over
};

// A HELLO frame on the wire (no PSK): header, version, flags, id, secret,
// nonce, limit.
constexpr uint64_t kHelloFrame = kFrameHeaderBytes + 2 + 16 + 32 + 16 + 8;

// Half the scenarios' servers hold the WELCOME for reply bytes (tt-tunnel's
// setting), so cuts also fall while a WELCOME waits.
SessionConfig server_config(uint64_t seed) {
  SessionConfig c = small_config(seed * 2 + 2);
  if (seed % 2 == 0) {
    c.welcome_hold = std::chrono::milliseconds(2);
  }
  return c;
}

class CutScenario {
 public:
  CutScenario(uint64_t seed, CutCounts& counts)
      : rng_(seed),
        counts_(counts),
        client_(small_config(seed * 2 + 1)),
        server_(server_config(seed)) {
    up_ = rng_.bytes(rng_.uniform(0, 300 * 1024));
    down_ = rng_.bytes(rng_.uniform(0, 200 * 1024));
    max_cuts_ = static_cast<int>(rng_.uniform(8, 16));
    config_ = small_config(0);
  }

  // Runs to the end; returns "" or what went wrong.
  std::string run() {
    connect();
    for (int step = 0; step < 2000000; ++step) {
      if (client_.state() == Session::State::Failed) {
        return "client failed: " + client_.error();
      }
      Session* s = server_session();
      if (client_.finished() && s != nullptr && s->finished()) {
        break;
      }
      app_io();
      maybe_cut();
      const bool moved = deliver();
      drain_events();
      if (client_.wants_carrier(now_)) {
        connect();
        continue;
      }
      if (!moved) {
        advance();
      }
    }
    Session* s = server_session();
    if (s == nullptr || !client_.finished() || !s->finished()) {
      return "did not finish: client " + std::string(to_string(client_.state())) + " read " +
             std::to_string(up_read_.size()) + "/" + std::to_string(up_.size()) + " down " +
             std::to_string(down_read_.size()) + "/" + std::to_string(down_.size());
    }
    if (up_read_ != up_) {
      return "client->server bytes differ (" + std::to_string(up_read_.size()) + " of " +
             std::to_string(up_.size()) + ")";
    }
    if (down_read_ != down_) {
      return "server->client bytes differ (" + std::to_string(down_read_.size()) + " of " +
             std::to_string(down_.size()) + ")";
    }
    // The client names its session in the HELLO and resumes it whatever
    // happened to the WELCOME: the server made exactly one session, however
    // the open was cut (a HELLO lost with its carrier made none).
    counts_.restarts += static_cast<int>(client_.stats().restarts);
    if (opened_ != 1 || server_.session_count() != 1) {
      return "sessions opened " + std::to_string(opened_) + ", held " +
             std::to_string(server_.session_count());
    }
    for (const auto* stats : {&client_.stats(), &s->stats()}) {
      std::string bad;
      stats->drops.for_each([&](SessionDrop d, uint64_t n) {
        if (n > 0 && d != SessionDrop::CarrierTimeout) {
          bad += std::string(to_string(d)) + "=" + std::to_string(n) + " ";
        }
      });
      if (!bad.empty()) {
        return "unexpected drops: " + bad;
      }
    }
    return "";
  }

 private:
  using CarrierId = SessionAcceptor::CarrierId;

  Session* server_session() { return handle_ == 0 ? nullptr : server_.session(handle_); }

  void connect() {
    ++carrier_;
    black_hole_ = false;
    client_.attach_carrier(now_);
    server_.on_carrier_accepted(carrier_, now_);
    wire_delivered_ = 0;
    // Some carriers are cut during their handshake (the open or a resumption).
    wire_cut_at_.reset();
    if (cuts_ < max_cuts_ && rng_.chance(0.25)) {
      // A third of them exactly behind a HELLO (before the data behind it).
      hello_cut_ = client_.state() == Session::State::Opening && rng_.chance(1.0 / 3);
      wire_cut_at_ = hello_cut_ ? kHelloFrame : rng_.uniform(0, 160);
    }
    drain_events();
  }

  void app_io() {
    if (up_sent_ < up_.size()) {
      up_sent_ += client_.write(std::string_view(up_).substr(up_sent_));
    }
    if (up_sent_ == up_.size()) {
      client_.shutdown_write();
    }
    while (!client_.readable().empty()) {
      down_read_ += client_.readable();
      client_.consume(client_.readable().size());
    }
    Session* s = server_session();
    if (s == nullptr) {
      return;
    }
    if (down_sent_ < down_.size()) {
      down_sent_ += s->write(std::string_view(down_).substr(down_sent_));
    }
    if (down_sent_ == down_.size()) {
      s->shutdown_write();
    }
    while (!s->readable().empty()) {
      up_read_ += s->readable();
      s->consume(s->readable().size());
    }
  }

  // The data position a target watches: what the server (up) or the client
  // (down) has received.
  uint64_t watched() const { return watch_up_ ? up_read_.size() : down_read_.size(); }

  void arm() {
    const uint64_t ai = config_.ack_interval;
    const uint64_t rc = config_.replay_capacity;
    const uint64_t boundaries[] = {0, 1, ai - 1, ai, ai + 1, rc - 1, rc, rc + 1};
    watch_up_ = rng_.chance(0.5);
    uint64_t offset;
    if (rng_.chance(0.5)) {
      offset = boundaries[rng_.uniform(0, 7)];
      boundary_ = true;
    } else {
      offset = rng_.uniform(0, 2 * ai);
      boundary_ = false;
    }
    target_ = watched() + offset;
    armed_at_ = now_;
  }

  void maybe_cut() {
    if (cuts_ >= max_cuts_ || !client_.has_carrier() || client_.carrier_failed() || black_hole_) {
      return;
    }
    if (!target_) {
      arm();
    }
    const bool half_closing = up_sent_ == up_.size() && down_sent_ == down_.size();
    // A target the stream cannot reach any more (its sender is done) becomes
    // a cut during the half-close, after a while.
    const bool stuck = half_closing && now_ - armed_at_ > 300ms;
    if (watched() >= *target_ || stuck) {
      if (up_sent_ == up_.size() || down_sent_ == down_.size()) {
        ++counts_.half_close;  // one side has half-closed (or is about to)
      }
      if (boundary_ && !stuck) {
        ++counts_.boundary;
      }
      cut();
      target_.reset();
    }
  }

  void cut() {
    const auto kind = static_cast<CutKind>(rng_.uniform(0, 2));
    ++cuts_;
    ++counts_.total;
    ++counts_.by_kind[static_cast<int>(kind)];
    history_ += std::string(to_string(kind)) + "@" + std::to_string(watched()) + " ";
    switch (kind) {
      case CutKind::Rst:
        client_.carrier_lost(now_);
        server_.on_carrier_lost(carrier_, now_);
        break;
      case CutKind::BlackHole:
        black_hole_ = true;  // until the client's heartbeat timeout notices
        break;
      case CutKind::AddressChange:
        connect();  // the server still holds the old carrier until the resume
        break;
    }
    drain_events();
  }

  // One bounded delivery each way; a target is never overshot.
  bool deliver() {
    bool moved = false;
    const auto limit = [&](bool up) -> size_t {
      size_t chunk = static_cast<size_t>(rng_.uniform(1, 20000));
      if (target_ && watch_up_ == up && cuts_ < max_cuts_) {
        chunk = static_cast<size_t>(std::min<uint64_t>(
            chunk, std::max<uint64_t>(1, *target_ - std::min(*target_, watched()))));
      }
      if (wire_cut_at_) {
        chunk = static_cast<size_t>(
            std::min<uint64_t>(chunk, *wire_cut_at_ - std::min(*wire_cut_at_, wire_delivered_)));
      }
      return chunk;
    };
    if (wire_cut_at_ && wire_delivered_ >= *wire_cut_at_) {
      wire_cut_at_.reset();
      ++counts_.handshake;
      if (hello_cut_) {
        ++counts_.hello_data;
      }
      cut();
      return true;
    }
    if (client_.has_carrier() && !client_.carrier_failed()) {
      const auto up = client_.carrier_output();
      const size_t n = std::min(up.size(), limit(true));
      if (n > 0) {
        const std::string bytes(up.substr(0, n));
        client_.consume_carrier_output(n);
        wire_delivered_ += n;
        if (!black_hole_) {
          server_.on_carrier_input(carrier_, bytes, now_);
        }
        moved = true;
      }
    }
    drain_events();
    app_io();
    const auto down = server_.carrier_output(carrier_);
    const size_t n = std::min(down.size(), limit(false));
    if (n > 0) {
      const std::string bytes(down.substr(0, n));
      server_.consume_carrier_output(carrier_, n);
      wire_delivered_ += n;
      if (!black_hole_ && client_.has_carrier() && !client_.carrier_failed()) {
        client_.on_carrier_input(bytes, now_);
      }
      moved = true;
    }
    return moved;
  }

  void drain_events() {
    while (auto e = server_.next_event()) {
      using Kind = SessionAcceptor::Event::Kind;
      if (e->kind == Kind::SessionOpened) {
        // A new session (there must be exactly one: run() checks).
        handle_ = e->session;
        ++opened_;
        down_sent_ = 0;
        up_read_.clear();
      }
      if (e->kind == Kind::CloseCarrier && e->carrier == carrier_ && !black_hole_) {
        // An owner writes what the acceptor still holds (a REFUSE) before
        // closing; then the client sees the server close it.
        const std::string last(server_.carrier_output(carrier_));
        server_.consume_carrier_output(carrier_, last.size());
        if (!last.empty() && client_.has_carrier() && !client_.carrier_failed()) {
          client_.on_carrier_input(last, now_);
        }
        client_lost_ = true;
      }
      if (e->kind == Kind::CloseCarrier) {
        server_.on_carrier_lost(e->carrier, now_);
      }
    }
    if (client_lost_) {
      client_lost_ = false;
      client_.carrier_lost(now_);
    }
    if (client_.carrier_failed()) {
      client_.carrier_lost(now_);
      if (!black_hole_) {
        server_.on_carrier_lost(carrier_, now_);
      }
    }
  }

  void advance() {
    Instant next = now_ + 10ms;
    for (const auto d : {client_.next_deadline(), server_.next_deadline()}) {
      if (d && *d > now_) {
        next = std::min(next, *d);
      }
    }
    now_ = next;
    client_.tick(now_);
    server_.tick(now_);
    drain_events();
  }

 public:
  const std::string& history() const { return history_; }

 private:
  Rng rng_;
  CutCounts& counts_;
  SessionConfig config_;
  Session client_;
  SessionAcceptor server_;
  Instant now_;
  CarrierId carrier_ = 0;
  SessionAcceptor::SessionHandle handle_ = 0;
  uint64_t opened_ = 0;
  bool black_hole_ = false;
  bool client_lost_ = false;
  std::string up_, down_, up_read_, down_read_;
  size_t up_sent_ = 0, down_sent_ = 0;
  int cuts_ = 0;
  int max_cuts_ = 0;
  std::optional<uint64_t> target_;
  bool watch_up_ = true;
  bool boundary_ = false;
  Instant armed_at_;
  std::optional<uint64_t> wire_cut_at_;
  bool hello_cut_ = false;
  uint64_t wire_delivered_ = 0;
  std::string history_;
};

TEST(SessionCutTest, ThousandCutsLoseDuplicateOrReorderNothing) {
  const uint64_t seed = seed_from_env("TINYTCP_SEED", 20261126);
  CutCounts counts;
  Rng seeds(seed);
  for (uint64_t i = 0; i < 100 || counts.total < 1000; ++i) {
    CutScenario scenario(seeds.next(), counts);
    const std::string error = scenario.run();
    ASSERT_EQ(error, "") << "TINYTCP_SEED=" << seed << " scenario " << i
                         << "; cuts: " << scenario.history();
  }
  RecordProperty("cuts", counts.total);
  std::printf(
      "session cuts: %d (rst %d, black hole %d, address change %d; handshake %d, "
      "between HELLO and data %d, boundary %d, half-close %d; restarts after a lost HELLO %d), "
      "seed %llu\n",
      counts.total, counts.by_kind[0], counts.by_kind[1], counts.by_kind[2], counts.handshake,
      counts.hello_data, counts.boundary, counts.half_close, counts.restarts,
      static_cast<unsigned long long>(seed));
  EXPECT_GE(counts.total, 1000);
  EXPECT_GT(counts.by_kind[0], 0);
  EXPECT_GT(counts.by_kind[1], 0);
  EXPECT_GT(counts.by_kind[2], 0);
  EXPECT_GT(counts.handshake, 0);
  EXPECT_GT(counts.boundary, 0);
  EXPECT_GT(counts.half_close, 0);
  EXPECT_GT(counts.hello_data, 0);
  EXPECT_GT(counts.restarts, 0);
}

}  // namespace
}  // namespace tinytcp::session
