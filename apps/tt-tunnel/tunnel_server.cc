#include "tt-tunnel/tunnel_server.hh"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "io/system_clock.hh"

namespace tinytcp::apps {

namespace {

constexpr size_t kAcceptsPerPass = 64;
constexpr Duration kIdleWait = std::chrono::milliseconds(100);

ServerLimits tunnel_limits(const TunnelOptions& options) {
  ServerLimits limits;
  // One client machine may forward many connections, each on a carrier of
  // its own inside that client's Host.
  limits.sockets_per_peer = options.max_connections + 4;
  limits.backlog = std::min<size_t>(options.max_connections, 1024);
  return limits;
}

}  // namespace

TunnelServer::TunnelServer(const TunnelOptions& options, uint16_t port, const HostPort& forward)
    : options_(options),
      forward_(resolve_endpoint(forward)),
      server_(serve_streams(options.transport, port, tunnel_limits(options))),
      sockets_([this](int fd, uint32_t events) { server_->watch(fd, events); },
               [this](int fd) { server_->unwatch(fd); }) {
  if (options.robust) {
    acceptor_ = std::make_unique<session::SessionAcceptor>(tunnel_session_config(options));
  }
}

TunnelServer::~TunnelServer() {
  relays_.clear();
  plain_.clear();
  carriers_.clear();
}

std::string TunnelServer::summary() const {
  return fmt::format("{}; {}", stats_.to_line(), server_->summary());
}

std::optional<AppSocket> TunnelServer::connect_target(const std::string& for_whom) {
  try {
    return sockets_.connect(forward_);
  } catch (const std::runtime_error& e) {
    ++stats_.refused;
    spdlog::warn("{}: cannot connect to the target: {}", for_whom, e.what());
    return std::nullopt;
  }
}

void TunnelServer::accept_carriers(Instant now) {
  for (size_t i = 0; i < kAcceptsPerPass; ++i) {
    auto carrier = server_->accept();
    if (!carrier) {
      return;
    }
    ++stats_.carriers;
    const uint64_t number = next_number_++;
    if (acceptor_) {
      carriers_[number] = std::move(carrier);
      acceptor_->on_carrier_accepted(number, now);
      continue;
    }
    ++stats_.accepted;
    const std::string who = fmt::format("connection {} from {}", number, carrier->peer());
    auto target = connect_target(who);
    if (!target) {
      carrier->abort();
      continue;
    }
    spdlog::info("{}", who);
    plain_[number] = std::make_unique<PlainRelay>(sockets_, std::move(*target), std::move(carrier));
  }
}

bool TunnelServer::step_plain(Instant) {
  bool progress = false;
  for (auto it = plain_.begin(); it != plain_.end();) {
    const RelayStatus r = it->second->step();
    progress = progress || r.progress;
    if (r.error) {
      spdlog::info("connection {}: {}", it->first, *r.error);
    }
    if (r.finished) {
      stats_.bytes_up += it->second->bytes_to_app();
      stats_.bytes_down += it->second->bytes_to_carrier();
      ++(r.error ? stats_.broken : stats_.finished);
      it = plain_.erase(it);
      continue;
    }
    ++it;
  }
  return progress;
}

void TunnelServer::handle_events(Instant now) {
  using Kind = session::SessionAcceptor::Event::Kind;
  while (const auto event = acceptor_->next_event()) {
    switch (event->kind) {
      case Kind::SessionOpened: {
        ++stats_.accepted;
        const std::string who = fmt::format("session {}", event->session);
        auto target = connect_target(who);
        if (!target) {
          // The client's program sees its connection closed.
          if (auto* s = acceptor_->session(event->session)) {
            s->shutdown_write();
          }
          break;
        }
        spdlog::info("{} opened", who);
        relays_[event->session] = std::make_unique<SessionRelay>(sockets_, std::move(*target));
        break;
      }
      case Kind::SessionResumed:
        ++stats_.resumes;
        spdlog::info("session {} resumed", event->session);
        break;
      case Kind::CloseCarrier:
        if (auto it = carriers_.find(event->carrier); it != carriers_.end()) {
          spdlog::debug("carrier {} closed: {}", event->carrier, event->reason);
          // What the acceptor still had for it (a REFUSE) goes out first.
          it->second->step(PumpIo{
              [this, id = event->carrier] { return acceptor_->carrier_output(id); },
              [this, id = event->carrier](size_t n) { acceptor_->consume_carrier_output(id, n); },
              [](std::string_view) {},
              [] { return false; },
              {},
              {}});
          it->second->shutdown_write();
          it->second->release();
          carriers_.erase(it);
          ++stats_.carriers_lost;
          acceptor_->on_carrier_lost(event->carrier, now);
        }
        break;
      case Kind::SessionFinished:
      case Kind::SessionFailed:
        if (auto it = relays_.find(event->session); it != relays_.end()) {
          if (event->kind == Kind::SessionFailed) {
            spdlog::info("session {} failed: {}", event->session, event->reason);
            it->second->abort();
            ++stats_.broken;
            relays_.erase(it);
          }
        }
        break;
    }
  }
}

bool TunnelServer::step_robust(Instant now) {
  bool progress = false;
  for (auto it = carriers_.begin(); it != carriers_.end();) {
    const CarrierId id = it->first;
    const StepOutcome c = it->second->step(PumpIo{
        [this, id] { return acceptor_->carrier_output(id); },
        [this, id](size_t n) { acceptor_->consume_carrier_output(id, n); },
        [this, id, now](std::string_view in) { acceptor_->on_carrier_input(id, in, now); },
        [] { return false; },
        {},
        {},
    });
    progress = progress || c.progress;
    if (c.end) {
      spdlog::debug("carrier {} lost: {}", id, c.end->error);
      it->second->abort();
      it = carriers_.erase(it);
      ++stats_.carriers_lost;
      acceptor_->on_carrier_lost(id, now);
      continue;
    }
    ++it;
  }
  handle_events(now);
  for (auto it = relays_.begin(); it != relays_.end();) {
    session::Session* s = acceptor_->session(it->first);
    if (s == nullptr) {
      it->second->abort();
      ++stats_.broken;
      it = relays_.erase(it);
      continue;
    }
    const RelayStatus r = it->second->step(*s);
    progress = progress || r.progress;
    if (r.error) {
      spdlog::info("session {}: {}", it->first, *r.error);
    }
    if (r.finished) {
      stats_.bytes_up += s->stats().bytes_read;
      stats_.bytes_down += s->stats().bytes_written;
      ++(s->state() == session::Session::State::Failed ? stats_.broken : stats_.finished);
      spdlog::info("session {} closed", it->first);
      it = relays_.erase(it);
      continue;
    }
    ++it;
  }
  acceptor_->tick(now);
  handle_events(now);
  return progress;
}

void TunnelServer::run(const std::atomic<bool>& stop) {
  while (!stop.load(std::memory_order_relaxed)) {
    const Instant now = io::monotonic_now();
    accept_carriers(now);
    const bool progress = acceptor_ ? step_robust(now) : step_plain(now);
    sockets_.sync();
    Duration wait = kIdleWait;
    if (progress) {
      wait = Duration::zero();
    } else if (acceptor_) {
      if (const auto d = acceptor_->next_deadline()) {
        wait = std::clamp<Duration>(*d - now, Duration::zero(), kIdleWait);
      }
    }
    server_->wait(wait);
  }
}

}  // namespace tinytcp::apps
