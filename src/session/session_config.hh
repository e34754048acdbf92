#pragma once

// SessionConfig: the knobs of a robust session (session.hh) and of the server
// that accepts them (session_acceptor.hh). Defaults are sized for throughput
// on a fast path and for noticing a dead carrier within about 2 s.

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>

#include "util/hash.hh"
#include "util/time.hh"

namespace tinytcp::session {

struct SessionConfig {
  // Bytes written but not yet acknowledged that the session holds for replay;
  // write() takes no more (flow control toward the application).
  size_t replay_capacity = 4 * 1024 * 1024;
  // Bytes received but not yet read by the application; the peer may send no
  // further (it learns the limit from every ACK).
  size_t receive_capacity = 4 * 1024 * 1024;
  // An ACK every this many bytes received (and when asked). 0: a quarter of
  // receive_capacity.
  size_t ack_interval = 64 * 1024;
  // An ACK as heartbeat after this long with nothing sent on the carrier.
  Duration heartbeat_interval = std::chrono::milliseconds(500);
  // The carrier is dead after this long with nothing received on it.
  Duration carrier_timeout = std::chrono::seconds(2);
  // Client reconnection: exponential from backoff_initial, capped at
  // backoff_max, each delay jittered down to half of itself.
  Duration backoff_initial = std::chrono::milliseconds(50);
  Duration backoff_max = std::chrono::milliseconds(500);
  // Disconnected this long: the session fails ("gave up"). nullopt: never.
  std::optional<Duration> give_up;
  // Server: the WELCOME waits up to this long for the first reply bytes (or
  // the server's FIN), so that it goes in their write: one carrier write and
  // one wake-up of the client less per short connection. Released at once
  // when anything else is queued or the client has sent half kInitialLimit
  // (it may be waiting for our limit). 0: never held.
  Duration welcome_hold = Duration::zero();
  // Pre-shared key: handshakes and every control frame authenticated.
  std::optional<std::string> psk;
  // Source of ids, secrets, nonces and jitter; tests pass a seeded one.
  std::function<std::string(size_t)> random = secure_random_bytes;

  // Server (SessionAcceptor) bounds.
  size_t max_sessions = 1024;
  size_t max_pending_carriers = 256;  // accepted, handshake not done
  Duration handshake_timeout = std::chrono::seconds(5);
  // A session with no carrier for this long is dropped (the client is gone).
  Duration idle_session_lifetime = std::chrono::minutes(10);
  // A finished session is kept this long, so a client whose last ACK was cut
  // off can still resume it and finish.
  Duration finished_linger = std::chrono::seconds(30);
};

}  // namespace tinytcp::session
