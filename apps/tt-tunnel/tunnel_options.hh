#pragma once

// What both ends of tt-tunnel are told on the command line, and the counters
// they print (one line at exit, or JSON with --json).

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/stream_transport.hh"
#include "session/session_config.hh"

namespace tinytcp::apps {

struct TunnelOptions {
  TransportOptions transport;
  bool robust = true;
  std::optional<std::string> psk;   // contents of --key-file
  size_t max_connections = 256;     // forwarded connections at once
  std::optional<Duration> give_up;  // robust: a session disconnected this long fails
};

// The session settings for the tunnel's options (replay and receive buffers,
// heartbeats, backoff, key).
session::SessionConfig tunnel_session_config(const TunnelOptions& options);

struct TunnelStats {
  uint64_t accepted = 0;       // forwarded connections begun
  uint64_t refused = 0;        // turned away (limit, no carrier, target unreachable)
  uint64_t finished = 0;       // closed cleanly, both ways
  uint64_t broken = 0;         // ended with an error (program reset, session failed)
  uint64_t carriers = 0;       // carrier connections opened (client) or accepted (server)
  uint64_t carriers_lost = 0;  // carriers that broke or were given up
  uint64_t bytes_up = 0;       // from the client's programs toward the server's targets
  uint64_t bytes_down = 0;
  uint64_t resumes = 0;  // robust: sessions moved onto a new carrier

  nlohmann::json to_json() const;
  std::string to_line() const;
};

}  // namespace tinytcp::apps
