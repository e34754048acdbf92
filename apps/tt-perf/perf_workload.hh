#pragma once

// PerfWorkload: one client mode of tt-perf (bulk_workload.hh: stream and
// messages; request_workload.hh: rr and crr; echo_workload.hh: echo). run()
// drives its connections on the client's loop until the workload completes,
// fails, or `stop` is set, and returns what it measured; the caller fills in
// the transport's part of the report.

#include <atomic>
#include <chrono>
#include <memory>
#include <string>

#include "common/stream_client.hh"
#include "tt-perf/perf_options.hh"
#include "tt-perf/perf_report.hh"

namespace tinytcp::apps {

using PerfClock = std::chrono::steady_clock;

class PerfWorkload {
 public:
  virtual ~PerfWorkload() = default;
  virtual PerfReport run(StreamClient& client, const std::atomic<bool>& stop) = 0;
};

// The workload of options.mode; throws std::invalid_argument for another mode.
std::unique_ptr<PerfWorkload> make_workload(const ClientOptions& options);

// How long the loop may sleep: until `deadline`, at most `cap`.
Duration wait_until(PerfClock::time_point deadline, Duration cap);

// A run that `stop` ended before it completed (SIGINT, SIGTERM: a `timeout`
// around a stalled run) is an error, "interrupted with PROGRESS" (exit 1):
// neither verified nor bytes that did not match. An earlier error stays the
// one reported.
void report_interrupted(PerfReport& report, const std::string& progress);

}  // namespace tinytcp::apps
