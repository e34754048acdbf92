#pragma once

// RequestWorkload: transactions, each timed from request to complete reply.
//   rr   --parallel connections, each sending 1 byte and waiting for the
//        1-byte reply, again and again for --time seconds
//   crr  --parallel slots, each again and again: connect, send a 64-byte
//        request, read the 8 KiB reply, close (the latency includes the
//        handshake)
// The rate is completed transactions over the time they took.

#include "tt-perf/perf_workload.hh"

namespace tinytcp::apps {

class RequestWorkload : public PerfWorkload {
 public:
  explicit RequestWorkload(const ClientOptions& options) : options_(options) {}
  PerfReport run(StreamClient& client, const std::atomic<bool>& stop) override;

 private:
  ClientOptions options_;
};

}  // namespace tinytcp::apps
