#pragma once

// BulkWorkload: bytes one way, client to server sink, as fast as the
// transport allows.
//   stream    --parallel connections for --time seconds (or --bytes in all)
//   messages  --count messages of --size bytes on one connection: with
//             --cc fixed:1 stop-and-wait, fixed:N a window of N segments
// Each connection ends with our FIN; the server answers with the bytes it
// counted and closes, so the time runs until the server holds every byte,
// and the counts are checked against what was sent (`verified`). Stopped
// before every count came back, the run is interrupted (report_interrupted).

#include "tt-perf/perf_workload.hh"

namespace tinytcp::apps {

class BulkWorkload : public PerfWorkload {
 public:
  explicit BulkWorkload(const ClientOptions& options) : options_(options) {}
  PerfReport run(StreamClient& client, const std::atomic<bool>& stop) override;

 private:
  ClientOptions options_;
};

}  // namespace tinytcp::apps
