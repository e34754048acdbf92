// The robust client (robust_streams.hh): every connect() is a new session
// over carriers from the given client, reconnected when a carrier breaks.

#include "common/robust_streams.hh"

#include <list>
#include <utility>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "common/robust_steps.hh"
#include "io/system_clock.hh"
#include "session/session.hh"

namespace tinytcp::apps {

namespace {

using robust::abort_reason;
using robust::earliest;
using robust::merge;
using robust::step_session;
using robust::until;
using session::Session;

// udp: a carrier that died of silence renews the tunnel socket at most this
// often (sessions noticing one outage together renew it once), retrying
// while there is no route (a link that is down).
constexpr Duration kRenewInterval = std::chrono::seconds(2);
constexpr Duration kRenewRetry = std::chrono::milliseconds(100);
// A released session still closing is given up after this long.
constexpr Duration kReleasedLinger = std::chrono::seconds(10);

// ---------------------------------------------------------------- client

struct ClientSession {
  explicit ClientSession(const session::SessionConfig& config) : session(config) {}
  Session session;
  std::unique_ptr<StreamEnd> carrier;
  std::string peer;
  stack::IpAddress peer_address;
  std::optional<Instant> released_at;
  Instant last_active;        // the app's bytes moved either way, or the session was made
  uint64_t bytes_moved = 0;   // written + received, as of last_active
  uint64_t stepped_pass = 0;  // the loop pass (ClientCore::pass) its carrier was last stepped in
};

class ClientCore {
 public:
  ClientCore(std::unique_ptr<StreamClient> carriers, session::SessionConfig config,
             std::optional<Duration> passivate_after)
      : carriers_(std::move(carriers)),
        config_(std::move(config)),
        passivate_after_(passivate_after) {}

  StreamClient& carriers() { return *carriers_; }
  const session::SessionConfig& config() const { return config_; }
  void add(std::shared_ptr<ClientSession> s) { sessions_.push_back(std::move(s)); }

  // Moves bytes between a session and its carrier, (re)connecting one when
  // the session wants it. True: progress.
  bool drive(ClientSession& c, Instant now) {
    c.stepped_pass = pass_;
    Session& s = c.session;
    if (c.carrier && s.carrier_failed()) {
      lose(c, now, true);
    }
    if (!c.carrier && s.wants_carrier(now)) {
      std::string error;
      c.carrier = carriers_->connect(error);
      if (!c.carrier) {
        spdlog::debug("session carrier: {}", error);
        s.connect_failed(now);  // backs off like a carrier that broke
        return false;
      }
      ++carriers_opened_;
      if (c.peer.empty()) {
        c.peer = c.carrier->peer();
        c.peer_address = c.carrier->peer_address();
      }
      s.attach_carrier(now);
    }
    bool progress = false;
    if (c.carrier) {
      const StepOutcome out = c.carrier->step(PumpIo{
          [&s] { return s.carrier_output(); },
          [&s](size_t n) { s.consume_carrier_output(n); },
          [&s, now](std::string_view in) { s.on_carrier_input(in, now); },
          [] { return false; },
          {},
          {},
          [&s](std::string_view* pieces, size_t max) {
            return s.carrier_output_pieces(pieces, max);
          },
      });
      progress = out.progress;
      if (out.end) {
        spdlog::debug("session carrier lost: {}", out.end->error);
        lose(c, now, false);
      }
    }
    s.tick(now);
    // Activity is the application's bytes, either way (heartbeats on an
    // idle carrier are not).
    const uint64_t moved = s.stats().bytes_written + s.stats().bytes_received;
    if (moved != c.bytes_moved) {
      c.bytes_moved = moved;
      c.last_active = now;
    }
    if (c.carrier && passivate_after_ && s.state() == Session::State::Open &&
        now - c.last_active >= *passivate_after_ && s.stats().unacked_bytes == 0 &&
        s.carrier_output().empty() && s.readable().empty()) {
      spdlog::info("session idle for {:.1f} s: carrier closed (passive until the next byte)",
                   to_seconds(now - c.last_active));
      s.passivate(now);
      c.carrier->shutdown_write();
      c.carrier->release();
      c.carrier.reset();
      ++passivations_;
    }
    if (c.carrier && s.ended() && s.carrier_output().empty()) {
      c.carrier->shutdown_write();
      c.carrier->release();
      c.carrier.reset();
    }
    return progress;
  }

  // Every session's carrier; forgets released sessions that are done.
  std::pair<bool, std::optional<Instant>> drive_all(Instant now) {
    renew_if_wanted(now);
    bool progress = false;
    std::optional<Instant> deadline;
    for (auto it = sessions_.begin(); it != sessions_.end();) {
      ClientSession& c = **it;
      // A session its relay already drove in this pass has read its carrier
      // dry (nothing new arrives before the next wait): another recv() and
      // SIOCOUTQ per session per pass was most of the robust tunnel's system
      // calls per connection (docs/session.md, "Per-connection cost").
      if (!driven_this_pass(c, now)) {
        progress = drive(c, now) || progress;
      }
      const bool done = c.session.ended();
      if (c.released_at && ((done && !c.carrier) || now - *c.released_at > kReleasedLinger)) {
        if (c.carrier) {
          c.carrier->abort();
        }
        resumes_ += c.session.stats().resumes;
        it = sessions_.erase(it);
        continue;
      }
      deadline = earliest(deadline, c.session.next_deadline());
      ++it;
    }
    return {progress, deadline};
  }

  // The carriers' wait returned: what they hold may have changed.
  void next_pass() { ++pass_; }

  std::string summary() const {
    uint64_t resumes = resumes_;
    for (const auto& c : sessions_) {
      resumes += c->session.stats().resumes;
    }
    return fmt::format("sessions {}, carriers {} (lost {}), resumes {}, passivations {}; {}",
                       sessions_.size(), carriers_opened_, carriers_lost_, resumes, passivations_,
                       carriers_->summary());
  }

 private:
  bool driven_this_pass(ClientSession& c, Instant now) {
    const Session& s = c.session;
    if (c.stepped_pass != pass_ || !c.carrier || !s.carrier_output().empty() ||
        s.carrier_failed() || s.ended()) {
      return false;
    }
    const auto deadline = s.next_deadline();
    return !deadline || *deadline > now;
  }

  void lose(ClientSession& c, Instant now, bool silent) {
    c.carrier->abort();
    c.carrier.reset();
    c.session.carrier_lost(now);
    ++carriers_lost_;
    if (silent && (!last_renewal_ || now - *last_renewal_ >= kRenewInterval)) {
      renew_wanted_ = true;
    }
  }

  void renew_if_wanted(Instant now) {
    if (!renew_wanted_ || (last_attempt_ && now - *last_attempt_ < kRenewRetry)) {
      return;
    }
    last_attempt_ = now;
    try {
      carriers_->renew();
      renew_wanted_ = false;
      last_renewal_ = now;
    } catch (const std::exception& e) {
      spdlog::debug("new tunnel socket: {}", e.what());
    }
  }

  std::unique_ptr<StreamClient> carriers_;
  session::SessionConfig config_;
  std::list<std::shared_ptr<ClientSession>> sessions_;
  bool renew_wanted_ = false;
  std::optional<Instant> last_renewal_;
  std::optional<Instant> last_attempt_;
  uint64_t carriers_opened_ = 0;
  uint64_t carriers_lost_ = 0;
  uint64_t resumes_ = 0;
  std::optional<Duration> passivate_after_;
  uint64_t passivations_ = 0;
  uint64_t pass_ = 1;
};

class ClientSessionEnd : public StreamEnd {
 public:
  ClientSessionEnd(std::shared_ptr<ClientCore> core, std::shared_ptr<ClientSession> c)
      : core_(std::move(core)), c_(std::move(c)) {}
  ~ClientSessionEnd() override {
    if (!c_->released_at) {
      release();
    }
  }

  const std::string& peer() const override { return c_->peer; }
  stack::IpAddress peer_address() const override { return c_->peer_address; }

  StepOutcome step(const PumpIo& io) override {
    const Instant now = io::monotonic_now();
    const StepOutcome first = step_session(c_->session, io);
    const bool carried = core_->drive(*c_, now);
    return merge(first, step_session(c_->session, io), carried);
  }
  void shutdown_write() override {
    c_->session.shutdown_write();
    core_->drive(*c_, io::monotonic_now());
  }
  bool closed() override { return c_->session.ended(); }
  void release() override { c_->released_at = io::monotonic_now(); }
  void abort() override { abort_because(AbortCause::Application); }
  // The ABORT goes out now, or after a resume (the core keeps driving the
  // released session until it is out, at most kReleasedLinger).
  void abort_because(AbortCause cause) override {
    const Instant now = io::monotonic_now();
    c_->session.abort(abort_reason(cause));
    core_->drive(*c_, now);
    c_->released_at = now;
  }
  // The replay buffer and the receive ring are the session's own buffers.
  size_t offer(std::string_view data) override { return c_->session.write(data); }
  bool shows_input() const override { return true; }
  std::string_view received() override { return c_->session.readable(); }
  void consume_received(size_t n) override { c_->session.consume(n); }
  const session::SessionStats* session_stats() const override { return &c_->session.stats(); }
  uint64_t unacknowledged() override { return c_->session.stats().unacked_bytes; }

 private:
  std::shared_ptr<ClientCore> core_;
  std::shared_ptr<ClientSession> c_;
};

class RobustClient : public StreamClient {
 public:
  RobustClient(std::unique_ptr<StreamClient> carriers, const session::SessionConfig& config,
               std::optional<Duration> passivate_after)
      : core_(std::make_shared<ClientCore>(std::move(carriers), config, passivate_after)) {}

  std::unique_ptr<StreamEnd> connect(std::string&) override {
    auto c = std::make_shared<ClientSession>(core_->config());
    c->last_active = io::monotonic_now();
    core_->add(c);
    // Not driven yet: the relay's first step hands the program's first bytes
    // to the session before the carrier is connected, so they go in the
    // HELLO's write (docs/session.md, "Per-connection cost").
    return std::make_unique<ClientSessionEnd>(core_, std::move(c));
  }
  void wait(Duration max_wait) override {
    const Instant now = io::monotonic_now();
    const auto [progress, deadline] = core_->drive_all(now);
    core_->carriers().wait(progress ? Duration::zero() : until(deadline, now, max_wait));
    core_->next_pass();
  }
  void watch(int fd, uint32_t events) override { core_->carriers().watch(fd, events); }
  void unwatch(int fd) override { core_->carriers().unwatch(fd); }
  void renew() override { core_->carriers().renew(); }
  std::string summary() const override { return core_->summary(); }

 private:
  std::shared_ptr<ClientCore> core_;
};

}  // namespace

std::unique_ptr<StreamClient> robust_client(std::unique_ptr<StreamClient> carriers,
                                            const session::SessionConfig& config,
                                            std::optional<Duration> passivate_after) {
  return std::make_unique<RobustClient>(std::move(carriers), config, passivate_after);
}

}  // namespace tinytcp::apps
