#include "tt-perf/perf_workload.hh"

#include <algorithm>
#include <stdexcept>

#include "tt-perf/bulk_workload.hh"
#include "tt-perf/echo_workload.hh"
#include "tt-perf/request_workload.hh"

namespace tinytcp::apps {

std::unique_ptr<PerfWorkload> make_workload(const ClientOptions& options) {
  if (options.mode == "stream" || options.mode == "messages") {
    return std::make_unique<BulkWorkload>(options);
  }
  if (options.mode == "rr" || options.mode == "crr") {
    return std::make_unique<RequestWorkload>(options);
  }
  if (options.mode == "echo") {
    return std::make_unique<EchoWorkload>(options);
  }
  throw std::invalid_argument("unknown mode " + options.mode);
}

Duration wait_until(PerfClock::time_point deadline, Duration cap) {
  const auto left = std::chrono::duration_cast<Duration>(deadline - PerfClock::now());
  return std::clamp(left, Duration::zero(), cap);
}

void report_interrupted(PerfReport& report, const std::string& progress) {
  if (report.errors != 0) {
    return;
  }
  ++report.errors;
  report.error = "interrupted with " + progress;
}

}  // namespace tinytcp::apps
