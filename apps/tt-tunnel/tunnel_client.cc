#include "tt-tunnel/tunnel_client.hh"

#include <arpa/inet.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "io/event_loop.hh"
#include "io/system_clock.hh"

namespace tinytcp::apps {

namespace {

constexpr size_t kAcceptsPerPass = 64;
constexpr Duration kIdleWait = std::chrono::milliseconds(100);
// udp: after a carrier died of silence, the tunnel socket is made again (a
// new source address and port: the machine's address may have changed), at
// most this often, so that sessions noticing one outage together do not
// renew it once each.
constexpr Duration kRenewInterval = std::chrono::seconds(2);

}  // namespace

int listen_on(const HostPort& at, int backlog) {
  const sockaddr_in address = resolve_endpoint(at);
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    throw std::runtime_error(fmt::format("socket: {}", std::strerror(errno)));
  }
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(fd, backlog) != 0) {
    const int error = errno;
    ::close(fd);
    throw std::runtime_error(
        fmt::format("cannot listen on {}:{}: {}", at.host, at.port, std::strerror(error)));
  }
  return fd;
}

TunnelClient::TunnelClient(const TunnelOptions& options, const HostPort& listen, const HostPort& to)
    : options_(options),
      session_config_(tunnel_session_config(options)),
      client_(connect_streams(options.transport, to)),
      sockets_([this](int fd, uint32_t events) { client_->watch(fd, events); },
               [this](int fd) { client_->unwatch(fd); }) {
  listen_fd_ = listen_on(listen, 128);
  port_ = local_port(listen_fd_);
  client_->watch(listen_fd_, io::EventLoop::kReadable);
}

TunnelClient::~TunnelClient() {
  forwards_.clear();
  client_->unwatch(listen_fd_);
  ::close(listen_fd_);
}

void TunnelClient::accept_programs() {
  for (size_t i = 0; i < kAcceptsPerPass; ++i) {
    sockaddr_in from{};
    socklen_t len = sizeof from;
    const int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&from), &len,
                             SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED) {
        spdlog::warn("accept: {}", std::strerror(errno));
      }
      return;
    }
    ++stats_.accepted;
    AppSocket app = sockets_.adopt(fd, from);
    const std::string who = ipv4_text(ntohl(from.sin_addr.s_addr), ntohs(from.sin_port));
    if (forwards_.size() >= options_.max_connections) {
      ++stats_.refused;
      spdlog::warn("refused {}: {} forwarded connections already (--max-connections)", who,
                   options_.max_connections);
      sockets_.close(app, true);
      continue;
    }
    Forward f;
    f.number = next_number_++;
    if (options_.robust) {
      f.session = std::make_unique<session::Session>(session_config_);
      f.relay = std::make_unique<SessionRelay>(sockets_, std::move(app));
    } else {
      std::string error;
      auto carrier = client_->connect(error);
      if (!carrier) {
        ++stats_.refused;
        spdlog::warn("refused {}: {}", who, error);
        sockets_.close(app, true);
        continue;
      }
      ++stats_.carriers;
      f.plain = std::make_unique<PlainRelay>(sockets_, std::move(app), std::move(carrier));
    }
    spdlog::info("connection {} from {}", f.number, who);
    forwards_.push_back(std::move(f));
  }
}

void TunnelClient::lose_carrier(Forward& f, Instant now, bool silent) {
  f.carrier->abort();
  f.carrier.reset();
  f.session->carrier_lost(now);
  ++stats_.carriers_lost;
  if (silent && (!last_renewal_ || now - *last_renewal_ >= kRenewInterval)) {
    last_renewal_ = now;
    client_->renew();
  }
}

bool TunnelClient::step_carrier(Forward& f, Instant now) {
  session::Session& s = *f.session;
  if (f.carrier && s.carrier_failed()) {
    spdlog::debug("connection {}: carrier given up", f.number);
    lose_carrier(f, now, true);
  }
  if (!f.carrier && s.wants_carrier(now)) {
    std::string error;
    f.carrier = client_->connect(error);
    if (!f.carrier) {
      spdlog::debug("connection {}: {}", f.number, error);
      return false;
    }
    ++stats_.carriers;
    s.attach_carrier(now);
  }
  if (!f.carrier) {
    return false;
  }
  const StepOutcome c = f.carrier->step(PumpIo{
      [&s] { return s.carrier_output(); },
      [&s](size_t n) { s.consume_carrier_output(n); },
      [&s, now](std::string_view in) { s.on_carrier_input(in, now); },
      [] { return false; },
      {},
      {},
  });
  if (c.end) {
    spdlog::debug("connection {}: carrier lost: {}", f.number, c.end->error);
    lose_carrier(f, now, false);
  } else if (s.finished() && s.carrier_output().empty()) {
    f.carrier->shutdown_write();
    f.carrier->release();
    f.carrier.reset();
  }
  return c.progress;
}

bool TunnelClient::step(Forward& f, Instant now, bool& finished) {
  if (f.plain) {
    const RelayStatus r = f.plain->step();
    if (r.error) {
      spdlog::info("connection {}: {}", f.number, *r.error);
    }
    if (r.finished) {
      stats_.bytes_up += f.plain->bytes_to_carrier();
      stats_.bytes_down += f.plain->bytes_to_app();
      ++(r.error ? stats_.broken : stats_.finished);
      finished = true;
    }
    return r.progress;
  }
  bool progress = false;
  RelayStatus r = f.relay->step(*f.session);
  progress = progress || r.progress;
  progress = step_carrier(f, now) || progress;
  f.session->tick(now);
  r = f.relay->step(*f.session);
  progress = progress || r.progress;
  if (r.error) {
    spdlog::info("connection {}: {}", f.number, *r.error);
  }
  if (r.finished && !f.carrier) {
    const auto& s = f.session->stats();
    stats_.bytes_up += s.bytes_written;
    stats_.bytes_down += s.bytes_read;
    stats_.resumes += s.resumes;
    ++(f.session->state() == session::Session::State::Failed ? stats_.broken : stats_.finished);
    finished = true;
  }
  return progress;
}

void TunnelClient::run(const std::atomic<bool>& stop) {
  while (!stop.load(std::memory_order_relaxed)) {
    accept_programs();
    const Instant now = io::monotonic_now();
    bool progress = false;
    std::optional<Instant> deadline;
    for (auto it = forwards_.begin(); it != forwards_.end();) {
      bool finished = false;
      progress = step(*it, now, finished) || progress;
      if (finished) {
        spdlog::info("connection {} closed", it->number);
        it = forwards_.erase(it);
        continue;
      }
      if (it->session) {
        if (const auto d = it->session->next_deadline()) {
          deadline = deadline ? std::min(*deadline, *d) : *d;
        }
      }
      ++it;
    }
    sockets_.sync();
    Duration wait = kIdleWait;
    if (progress) {
      wait = Duration::zero();
    } else if (deadline) {
      wait = std::clamp<Duration>(*deadline - now, Duration::zero(), kIdleWait);
    }
    client_->wait(wait);
  }
}

}  // namespace tinytcp::apps
