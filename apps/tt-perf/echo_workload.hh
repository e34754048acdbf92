#pragma once

// EchoWorkload: the echo experiment of issue 18. One connection; --messages
// messages of --size bytes (a range: each drawn uniformly, seeded), random
// bytes, each sent --gap after the one before (a range too). The server
// echoes; the client hashes what it sent and what came back (SHA-256) and
// reports the time from the first message to the last echoed byte (it
// closes only then), each message's round trip (sent to fully echoed), and
// whether the digests match.

#include "tt-perf/perf_workload.hh"

namespace tinytcp::apps {

class EchoWorkload : public PerfWorkload {
 public:
  explicit EchoWorkload(const ClientOptions& options) : options_(options) {}
  PerfReport run(StreamClient& client, const std::atomic<bool>& stop) override;

 private:
  ClientOptions options_;
};

}  // namespace tinytcp::apps
