#pragma once

// PerfServer: `tt-perf server --listen PORT`. Accepts tt-perf clients on any
// transport (common/stream_server.hh) and runs a ServerSession for each:
// sink, echo or reply, as the client's header says. One thread, one loop.

#include <atomic>
#include <cstdint>
#include <list>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "common/stream_server.hh"
#include "common/stream_transport.hh"
#include "tt-perf/server_session.hh"

namespace tinytcp::apps {

struct PerfServerStats {
  uint64_t accepted = 0;
  uint64_t finished = 0;
  uint64_t failed = 0;  // bad header, reset, lost
  uint64_t bytes_in = 0;
  uint64_t bytes_out = 0;
  nlohmann::json to_json() const;
  std::string to_line() const;
};

class PerfServer {
 public:
  // Throws std::runtime_error (one line) when it cannot listen.
  PerfServer(const TransportOptions& options, const HostPort& at, size_t max_connections);
  ~PerfServer();
  PerfServer(const PerfServer&) = delete;
  PerfServer& operator=(const PerfServer&) = delete;

  // Serves until `stop` is set.
  void run(const std::atomic<bool>& stop);
  const PerfServerStats& stats() const { return stats_; }
  std::string summary() const;

 private:
  void accept_sessions();

  size_t max_connections_;
  std::unique_ptr<StreamServer> server_;
  std::list<std::unique_ptr<ServerSession>> sessions_;
  PerfServerStats stats_;
};

}  // namespace tinytcp::apps
