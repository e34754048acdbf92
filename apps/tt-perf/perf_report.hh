#pragma once

// PerfReport: what one tt-perf client run measured, printed as one line of
// text or as JSON (--json). Rates are derived from the totals here, so both
// forms agree.

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/latency_samples.hh"
#include "tt-perf/perf_transport.hh"

namespace tinytcp::apps {

struct PerfReport {
  std::string mode;
  std::string transport;
  std::string cc;  // as configured ("" for the default)
  bool sack = true;
  bool robust = false;
  size_t connections = 0;        // opened during the run
  double seconds = 0;            // start to completion
  uint64_t bytes_sent = 0;       // payload the client wrote (headers excluded)
  uint64_t bytes_received = 0;   // payload it read back
  uint64_t bytes_delivered = 0;  // stream, messages: what the server counted
  uint64_t transactions = 0;     // rr, crr: completed; echo, messages: messages
  std::optional<LatencySummary> latency;
  PacketCounts packets;
  std::string packet_method;
  std::optional<bool> verified;  // echo: SHA-256 of echo == sent; stream: counts match
  std::string sha256;            // echo: of the bytes sent
  uint64_t errors = 0;           // connections that failed
  std::string error;             // the first failure

  double transactions_per_second() const;
  double bits_per_second() const;
  nlohmann::json to_json() const;
  std::string to_text() const;
};

}  // namespace tinytcp::apps
