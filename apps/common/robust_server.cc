// The robust server (robust_streams.hh): sessions over the carriers a
// SessionAcceptor takes from the given server, resumed on new carriers.

#include "common/robust_streams.hh"

#include <deque>
#include <map>
#include <utility>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "common/robust_steps.hh"
#include "io/system_clock.hh"
#include "session/session.hh"
#include "session/session_acceptor.hh"

namespace tinytcp::apps {

namespace {

using robust::abort_reason;
using robust::merge;
using robust::step_session;
using robust::until;
using session::Session;
using session::SessionAcceptor;

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
    // Timers first: what they let go (a held WELCOME, a heartbeat) is
    // written by the steps below, not a wait later.
    acceptor_.tick(now);
    bool progress = false;
    for (auto it = carrier_ends_.begin(); it != carrier_ends_.end();) {
      const CarrierId id = it->first;
      ++it;  // step_carrier may erase the carrier
      if (!stepped_this_pass(id)) {
        progress = step_carrier(id, now) || progress;
      }
    }
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

std::unique_ptr<StreamServer> robust_server(std::unique_ptr<StreamServer> carriers,
                                            const session::SessionConfig& config) {
  return std::make_unique<RobustServer>(std::move(carriers), config);
}

}  // namespace tinytcp::apps
