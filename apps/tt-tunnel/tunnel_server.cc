#include "tt-tunnel/tunnel_server.hh"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

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

TunnelServer::TunnelServer(const TunnelOptions& options, const HostPort& at,
                           const HostPort& forward)
    : options_(options),
      forward_(resolve(forward)),
      server_(serve_streams(options.transport, at, tunnel_limits(options))),
      sockets_([this](int fd, uint32_t events) { server_->watch(fd, events); },
               [this](int fd) { server_->unwatch(fd); }) {}

TunnelServer::~TunnelServer() {
  relays_.clear();
}

std::string TunnelServer::summary() const {
  return fmt::format("{}; {}", stats_.to_line(), server_->summary());
}

void TunnelServer::accept_streams() {
  for (size_t i = 0; i < kAcceptsPerPass; ++i) {
    auto stream = server_->accept();
    if (!stream) {
      return;
    }
    ++stats_.accepted;
    const uint64_t number = next_number_++;
    const std::string who = fmt::format("connection {} from {}", number, stream->peer());
    if (relays_.size() >= options_.max_connections) {
      ++stats_.refused;
      spdlog::warn("{}: refused, {} forwarded connections already (--max-connections)", who,
                   options_.max_connections);
      stream->abort_because(StreamEnd::AbortCause::Refused);
      continue;
    }
    try {
      AppSocket target = sockets_.connect(forward_);
      spdlog::info("{}", who);
      relays_[number] =
          std::make_unique<PlainRelay>(sockets_, std::move(target), std::move(stream));
    } catch (const std::runtime_error& e) {
      ++stats_.refused;
      spdlog::warn("{}: cannot connect to the target: {}", who, e.what());
      stream->abort_because(abort_cause_of(e.what()));
    }
  }
}

void TunnelServer::run(const std::atomic<bool>& stop) {
  while (!stop.load(std::memory_order_relaxed)) {
    accept_streams();
    bool progress = false;
    for (auto it = relays_.begin(); it != relays_.end();) {
      const RelayStatus r = it->second->step();
      progress = progress || r.progress;
      if (r.error) {
        spdlog::info("connection {}: {}", it->first, *r.error);
      }
      if (r.finished) {
        record(it->first, *it->second, r.error ? "broken" : "finished");
        spdlog::info("connection {} closed", it->first);
        it = relays_.erase(it);
        continue;
      }
      ++it;
    }
    sockets_.sync();
    server_->wait(progress ? Duration::zero() : kIdleWait);
  }
  for (const auto& [number, relay] : relays_) {
    record(number, *relay, "open");
  }
}

void TunnelServer::record(uint64_t number, const PlainRelay& relay, const char* end) {
  // The relay's app side is the target here: what it took went up.
  stats_.record(ConnectionRecord{number, end, relay.bytes_to_app(), relay.bytes_to_carrier(),
                                 relay.session_stats()});
}

}  // namespace tinytcp::apps
