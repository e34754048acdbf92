#include "tt-perf/perf_server.hh"

#include <algorithm>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace tinytcp::apps {

namespace {

constexpr size_t kAcceptsPerPass = 64;
constexpr Duration kIdleWait = std::chrono::milliseconds(100);

ServerLimits perf_limits(size_t max_connections) {
  ServerLimits limits;
  // crr from one client machine: many connections and TIME-WAITs per peer.
  limits.sockets_per_peer = max_connections;
  limits.backlog = std::min<size_t>(max_connections, 1024);
  return limits;
}

}  // namespace

nlohmann::json PerfServerStats::to_json() const {
  return {{"accepted", accepted},
          {"finished", finished},
          {"failed", failed},
          {"bytes_in", bytes_in},
          {"bytes_out", bytes_out}};
}

std::string PerfServerStats::to_line() const {
  return fmt::format("connections {} ({} finished, {} failed), bytes in {}, out {}", accepted,
                     finished, failed, bytes_in, bytes_out);
}

PerfServer::PerfServer(const TransportOptions& options, const HostPort& at, size_t max_connections)
    : max_connections_(max_connections),
      server_(serve_streams(options, at, perf_limits(max_connections))) {}

PerfServer::~PerfServer() {
  sessions_.clear();
}

std::string PerfServer::summary() const {
  return fmt::format("{}; {}", stats_.to_line(), server_->summary());
}

void PerfServer::accept_sessions() {
  for (size_t i = 0; i < kAcceptsPerPass; ++i) {
    auto stream = server_->accept();
    if (!stream) {
      return;
    }
    ++stats_.accepted;
    if (sessions_.size() >= max_connections_) {
      ++stats_.failed;
      spdlog::warn("refused {}: {} connections already (--max-connections)", stream->peer(),
                   max_connections_);
      stream->abort();
      continue;
    }
    SPDLOG_DEBUG("connection from {}", stream->peer());
    sessions_.push_back(std::make_unique<ServerSession>(std::move(stream)));
  }
}

void PerfServer::run(const std::atomic<bool>& stop) {
  while (!stop.load(std::memory_order_relaxed)) {
    accept_sessions();
    bool progress = false;
    for (auto it = sessions_.begin(); it != sessions_.end();) {
      const SessionResult r = (*it)->step();
      progress = progress || r.progress;
      if (!r.finished) {
        ++it;
        continue;
      }
      stats_.bytes_in += (*it)->bytes_in();
      stats_.bytes_out += (*it)->bytes_out();
      if (r.error) {
        ++stats_.failed;
        spdlog::info("{}: {}", (*it)->peer(), *r.error);
      } else {
        ++stats_.finished;
      }
      it = sessions_.erase(it);
    }
    server_->wait(progress ? Duration::zero() : kIdleWait);
  }
}

}  // namespace tinytcp::apps
