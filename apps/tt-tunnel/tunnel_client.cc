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

namespace tinytcp::apps {

namespace {

constexpr size_t kAcceptsPerPass = 64;
constexpr Duration kIdleWait = std::chrono::milliseconds(100);

}  // namespace

int listen_on(const HostPort& at, int backlog) {
  return listen_tcp(resolve(at), backlog, /*nonblocking=*/true);
}

TunnelClient::TunnelClient(const TunnelOptions& options, const HostPort& listen, const HostPort& to)
    : options_(options),
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
    sockaddr_storage from{};
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
    const SocketAddress peer = SocketAddress::of(from, len);
    AppSocket app = sockets_.adopt(fd, peer);
    const std::string who = peer.to_string();
    if (forwards_.size() >= options_.max_connections) {
      ++stats_.refused;
      spdlog::warn("refused {}: {} forwarded connections already (--max-connections)", who,
                   options_.max_connections);
      sockets_.close(app, true);
      continue;
    }
    std::string error;
    auto carrier = client_->connect(error);
    if (!carrier) {
      ++stats_.refused;
      spdlog::warn("refused {}: {}", who, error);
      sockets_.close(app, true);
      continue;
    }
    Forward f;
    f.number = next_number_++;
    f.relay = std::make_unique<PlainRelay>(sockets_, std::move(app), std::move(carrier));
    spdlog::info("connection {} from {}", f.number, who);
    forwards_.push_back(std::move(f));
  }
}

std::string TunnelClient::summary() const {
  return fmt::format("{}; {}", stats_.to_line(), client_->summary());
}

void TunnelClient::run(const std::atomic<bool>& stop) {
  while (!stop.load(std::memory_order_relaxed)) {
    accept_programs();
    bool progress = false;
    for (auto it = forwards_.begin(); it != forwards_.end();) {
      const RelayStatus r = it->relay->step();
      progress = progress || r.progress;
      if (r.error) {
        spdlog::info("connection {}: {}", it->number, *r.error);
      }
      if (r.finished) {
        record(*it, r.error ? "broken" : "finished");
        spdlog::info("connection {} closed", it->number);
        it = forwards_.erase(it);
        continue;
      }
      ++it;
    }
    sockets_.sync();
    const Duration wait = progress ? Duration::zero() : kIdleWait;
    client_->wait(wait);
  }
  for (const auto& f : forwards_) {
    record(f, "open");
  }
}

void TunnelClient::record(const Forward& f, const char* end) {
  stats_.record(ConnectionRecord{f.number, end, f.relay->bytes_to_carrier(),
                                 f.relay->bytes_to_app(), f.relay->session_stats()});
}

}  // namespace tinytcp::apps
