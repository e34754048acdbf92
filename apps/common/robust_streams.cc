#include "common/robust_streams.hh"

#include <algorithm>
#include <deque>
#include <list>
#include <map>
#include <utility>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "io/system_clock.hh"
#include "session/session.hh"
#include "session/session_acceptor.hh"

namespace tinytcp::apps {

namespace {

using session::Session;
using session::SessionAcceptor;

// udp: a carrier that died of silence renews the tunnel socket at most this
// often (sessions noticing one outage together renew it once), retrying
// while there is no route (a link that is down).
constexpr Duration kRenewInterval = std::chrono::seconds(2);
constexpr Duration kRenewRetry = std::chrono::milliseconds(100);
// A released session still closing is given up after this long.
constexpr Duration kReleasedLinger = std::chrono::seconds(10);

std::optional<Instant> earliest(std::optional<Instant> a, std::optional<Instant> b) {
  if (!a) {
    return b;
  }
  return b ? std::min(*a, *b) : a;
}

Duration until(std::optional<Instant> deadline, Instant now, Duration max_wait) {
  if (!deadline) {
    return max_wait;
  }
  return std::clamp<Duration>(*deadline - now, Duration::zero(), max_wait);
}

// The endpoint's side of a session: its output into the session (as much as
// the replay buffer takes), the session's bytes to its input.
StepOutcome step_session(Session& s, const PumpIo& io) {
  StepOutcome out;
  for (std::string_view data = io.output(); !data.empty(); data = io.output()) {
    const size_t n = s.write(data);
    if (n == 0) {
      break;
    }
    io.consume(n);
    out.progress = true;
  }
  for (std::string_view in = s.readable(); !in.empty() && (!io.wants_input || io.wants_input());
       in = s.readable()) {
    io.input(in);
    s.consume(in.size());
    out.progress = true;
  }
  if (io.done()) {
    out.end = PumpOutcome{PumpResult::Done, {}};
  } else if (s.state() == Session::State::Failed) {
    out.end = PumpOutcome{PumpResult::Error, "session failed: " + s.error()};
  } else if (s.state() == Session::State::Aborted) {
    // A reset: the owner resets its side too (tt-tunnel: RST to the program).
    out.end = PumpOutcome{PumpResult::Error, "session " + s.error()};
  } else if (s.peer_finished()) {
    out.end = PumpOutcome{PumpResult::PeerClosed, "the peer closed the connection"};
  }
  return out;
}

session::AbortReason abort_reason(StreamEnd::AbortCause cause) {
  switch (cause) {
    case StreamEnd::AbortCause::Reset:
      return session::AbortReason::Reset;
    case StreamEnd::AbortCause::Refused:
      return session::AbortReason::Refused;
    case StreamEnd::AbortCause::Unreachable:
      return session::AbortReason::Unreachable;
    case StreamEnd::AbortCause::Application:
      break;
  }
  return session::AbortReason::Application;
}

StepOutcome merge(StepOutcome a, const StepOutcome& b, bool carrier_progress) {
  a.progress = a.progress || b.progress || carrier_progress;
  a.end = b.end;
  return a;
}

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
    core_->drive(*c, io::monotonic_now());
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

// ---------------------------------------------------------------- server

class ServerCore {
 public:
  using CarrierId = SessionAcceptor::CarrierId;
  using Handle = SessionAcceptor::SessionHandle;

  ServerCore(std::unique_ptr<StreamServer> carriers, const session::SessionConfig& config)
      : carriers_(std::move(carriers)), acceptor_(config) {}

  StreamServer& carriers() { return *carriers_; }
  SessionAcceptor& acceptor() { return acceptor_; }

  // Accepts carriers, moves bytes on every one, handles the acceptor's
  // events. True: progress.
  bool drive(Instant now) {
    for (auto carrier = carriers_->accept(); carrier; carrier = carriers_->accept()) {
      const CarrierId id = next_carrier_++;
      peers_[id] = {carrier->peer(), carrier->peer_address()};
      carrier_ends_[id] = std::move(carrier);
      ++carriers_accepted_;
      acceptor_.on_carrier_accepted(id, now);
    }
    bool progress = false;
    for (auto it = carrier_ends_.begin(); it != carrier_ends_.end();) {
      const CarrierId id = it->first;
      ++it;  // step_carrier may erase the carrier
      if (!stepped_this_pass(id)) {
        progress = step_carrier(id, now) || progress;
      }
    }
    acceptor_.tick(now);
    handle_events(now);
    return progress;
  }

  // The carrier a session currently has, if any.
  bool drive_session(Handle handle, Instant now) {
    const auto it = carrier_of_.find(handle);
    const bool progress =
        it != carrier_of_.end() && !stepped_this_pass(it->second) && step_carrier(it->second, now);
    handle_events(now);
    return progress;
  }

  // The carriers' wait returned: what they hold may have changed.
  void next_pass() { ++pass_; }

  std::optional<std::pair<Handle, std::pair<std::string, stack::IpAddress>>> next_opened() {
    if (opened_.empty()) {
      return std::nullopt;
    }
    const Handle h = opened_.front();
    opened_.pop_front();
    const auto c = carrier_of_.find(h);
    const auto p = c != carrier_of_.end() ? peers_.find(c->second) : peers_.end();
    return std::make_pair(
        h, p != peers_.end() ? p->second : std::pair<std::string, stack::IpAddress>{});
  }

  std::string summary() const {
    const auto& a = acceptor_.stats();
    return fmt::format(
        "sessions {} (pending {}), carriers {} (lost {}), resumes {}, aborted {}, refused {}; {}",
        acceptor_.session_count(), acceptor_.pending_count(), carriers_accepted_, carriers_lost_,
        resumes_, a.sessions_aborted, a.drops.total(), carriers_->summary());
  }

 private:
  // Stepped already in this pass with nothing to write: its recv() found it
  // dry, and nothing new arrives before the next wait (one recv() and one
  // SIOCOUTQ less per carrier for each of the acceptor's and the relay's
  // passes over it, docs/session.md "Per-connection cost").
  bool stepped_this_pass(CarrierId id) const {
    const auto it = stepped_pass_.find(id);
    return it != stepped_pass_.end() && it->second == pass_ && acceptor_.carrier_output(id).empty();
  }

  bool step_carrier(CarrierId id, Instant now) {
    const auto it = carrier_ends_.find(id);
    if (it == carrier_ends_.end()) {
      return false;
    }
    stepped_pass_[id] = pass_;
    const StepOutcome out = it->second->step(PumpIo{
        [this, id] { return acceptor_.carrier_output(id); },
        [this, id](size_t n) { acceptor_.consume_carrier_output(id, n); },
        [this, id, now](std::string_view in) { acceptor_.on_carrier_input(id, in, now); },
        [] { return false; },
        {},
        {},
        [this, id](std::string_view* pieces, size_t max) {
          return acceptor_.carrier_output_pieces(id, pieces, max);
        },
    });
    if (out.end) {
      spdlog::debug("carrier {} lost: {}", id, out.end->error);
      it->second->abort();
      forget(id);
      acceptor_.on_carrier_lost(id, now);
    }
    return out.progress;
  }

  void forget(CarrierId id) {
    carrier_ends_.erase(id);
    stepped_pass_.erase(id);
    peers_.erase(id);
    ++carriers_lost_;
    for (auto it = carrier_of_.begin(); it != carrier_of_.end();) {
      it = it->second == id ? carrier_of_.erase(it) : std::next(it);
    }
  }

  void handle_events(Instant now) {
    using Kind = SessionAcceptor::Event::Kind;
    while (const auto e = acceptor_.next_event()) {
      switch (e->kind) {
        case Kind::SessionOpened:
          carrier_of_[e->session] = e->carrier;
          opened_.push_back(e->session);
          break;
        case Kind::SessionResumed:
          carrier_of_[e->session] = e->carrier;
          ++resumes_;
          spdlog::debug("session {} resumed on carrier {}", e->session, e->carrier);
          break;
        case Kind::CloseCarrier:
          if (auto it = carrier_ends_.find(e->carrier); it != carrier_ends_.end()) {
            spdlog::debug("carrier {} closed: {}", e->carrier, e->reason);
            // What the acceptor still holds for it (a REFUSE) goes out first.
            it->second->step(PumpIo{
                [this, id = e->carrier] { return acceptor_.carrier_output(id); },
                [this, id = e->carrier](size_t n) { acceptor_.consume_carrier_output(id, n); },
                [](std::string_view) {},
                [] { return false; },
                {},
                {}});
            it->second->shutdown_write();
            it->second->release();
            forget(e->carrier);
            acceptor_.on_carrier_lost(e->carrier, now);
          }
          break;
        case Kind::SessionFinished:
        case Kind::SessionFailed:
        case Kind::SessionAborted:
          if (e->kind != Kind::SessionFinished) {
            spdlog::debug("session {} ended: {}", e->session, e->reason);
          }
          break;
      }
    }
  }

  std::unique_ptr<StreamServer> carriers_;
  SessionAcceptor acceptor_;
  std::map<CarrierId, std::unique_ptr<StreamEnd>> carrier_ends_;
  std::map<CarrierId, std::pair<std::string, stack::IpAddress>> peers_;
  std::map<CarrierId, uint64_t> stepped_pass_;
  uint64_t pass_ = 1;
  std::map<Handle, CarrierId> carrier_of_;
  std::deque<Handle> opened_;
  CarrierId next_carrier_ = 1;
  uint64_t carriers_accepted_ = 0;
  uint64_t carriers_lost_ = 0;
  uint64_t resumes_ = 0;
};

class ServerSessionEnd : public StreamEnd {
 public:
  ServerSessionEnd(std::shared_ptr<ServerCore> core, ServerCore::Handle handle, std::string peer,
                   const stack::IpAddress& address)
      : core_(std::move(core)), handle_(handle), peer_(std::move(peer)), address_(address) {}

  const std::string& peer() const override { return peer_; }
  stack::IpAddress peer_address() const override { return address_; }

  StepOutcome step(const PumpIo& io) override {
    Session* s = core_->acceptor().session(handle_);
    if (s == nullptr) {
      StepOutcome out;
      out.end = PumpOutcome{PumpResult::Error, "session gone"};
      return out;
    }
    const StepOutcome first = step_session(*s, io);
    const bool carried = core_->drive_session(handle_, io::monotonic_now());
    s = core_->acceptor().session(handle_);
    if (s == nullptr) {
      return first;
    }
    return merge(first, step_session(*s, io), carried);
  }
  void shutdown_write() override {
    if (Session* s = core_->acceptor().session(handle_)) {
      s->shutdown_write();
      core_->drive_session(handle_, io::monotonic_now());
    }
  }
  bool closed() override {
    const Session* s = core_->acceptor().session(handle_);
    return s == nullptr || s->ended();
  }
  // The acceptor keeps a finished session a while (a client whose last ACK
  // was cut off may still resume it) and then forgets it.
  void release() override {}
  void abort() override { abort_because(AbortCause::Application); }
  void abort_because(AbortCause cause) override {
    if (Session* s = core_->acceptor().session(handle_)) {
      s->abort(abort_reason(cause));
      core_->drive_session(handle_, io::monotonic_now());
    }
  }
  size_t offer(std::string_view data) override {
    Session* s = core_->acceptor().session(handle_);
    return s != nullptr ? s->write(data) : 0;
  }
  bool shows_input() const override { return true; }
  std::string_view received() override {
    const Session* s = core_->acceptor().session(handle_);
    return s != nullptr ? s->readable() : std::string_view();
  }
  void consume_received(size_t n) override {
    if (Session* s = core_->acceptor().session(handle_)) {
      s->consume(n);
    }
  }
  const session::SessionStats* session_stats() const override {
    const Session* s = core_->acceptor().session(handle_);
    return s != nullptr ? &s->stats() : nullptr;
  }
  uint64_t unacknowledged() override {
    const Session* s = core_->acceptor().session(handle_);
    return s != nullptr ? s->stats().unacked_bytes : 0;
  }

 private:
  std::shared_ptr<ServerCore> core_;
  ServerCore::Handle handle_;
  std::string peer_;
  stack::IpAddress address_;
};

class RobustServer : public StreamServer {
 public:
  RobustServer(std::unique_ptr<StreamServer> carriers, const session::SessionConfig& config)
      : core_(std::make_shared<ServerCore>(std::move(carriers), config)) {}

  std::unique_ptr<StreamEnd> accept() override {
    auto opened = core_->next_opened();
    if (!opened) {
      progress_ = core_->drive(io::monotonic_now()) || progress_;
      opened = core_->next_opened();
    }
    if (!opened) {
      return nullptr;
    }
    return std::make_unique<ServerSessionEnd>(core_, opened->first, opened->second.first,
                                              opened->second.second);
  }
  void wait(Duration max_wait) override {
    const Instant now = io::monotonic_now();
    const bool progress = core_->drive(now) || progress_;
    progress_ = false;
    core_->carriers().wait(progress ? Duration::zero()
                                    : until(core_->acceptor().next_deadline(), now, max_wait));
    core_->next_pass();
  }
  void watch(int fd, uint32_t events) override { core_->carriers().watch(fd, events); }
  void unwatch(int fd) override { core_->carriers().unwatch(fd); }
  std::string summary() const override { return core_->summary(); }

 private:
  std::shared_ptr<ServerCore> core_;
  bool progress_ = false;
};

}  // namespace

std::unique_ptr<StreamClient> robust_client(std::unique_ptr<StreamClient> carriers,
                                            const session::SessionConfig& config,
                                            std::optional<Duration> passivate_after) {
  return std::make_unique<RobustClient>(std::move(carriers), config, passivate_after);
}

std::unique_ptr<StreamServer> robust_server(std::unique_ptr<StreamServer> carriers,
                                            const session::SessionConfig& config) {
  return std::make_unique<RobustServer>(std::move(carriers), config);
}

}  // namespace tinytcp::apps
