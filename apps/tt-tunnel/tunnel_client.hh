#pragma once

// TunnelClient: `tt-tunnel client`. Programs connect with kernel TCP to
// --listen; each connection is carried to the tunnel server (--to) over the
// chosen transport, in a robust session of its own (--robust) or on one plain
// carrier connection. One thread, one loop: the transport's StreamClient.

#include <netinet/in.h>

#include <atomic>
#include <list>
#include <memory>

#include "common/stream_client.hh"
#include "session/session.hh"
#include "tt-tunnel/app_socket.hh"
#include "tt-tunnel/relay.hh"
#include "tt-tunnel/tunnel_options.hh"

namespace tinytcp::apps {

class TunnelClient {
 public:
  // Throws std::runtime_error (one line) when --listen cannot be bound or the
  // transport cannot be set up.
  TunnelClient(const TunnelOptions& options, const HostPort& listen, const HostPort& to);
  ~TunnelClient();
  TunnelClient(const TunnelClient&) = delete;
  TunnelClient& operator=(const TunnelClient&) = delete;

  // The port --listen is bound to (useful with port 0).
  uint16_t port() const { return port_; }
  // Serves until `stop` is set (a signal handler sets it).
  void run(const std::atomic<bool>& stop);
  const TunnelStats& stats() const { return stats_; }

 private:
  struct Forward {
    std::unique_ptr<PlainRelay> plain;
    std::unique_ptr<session::Session> session;
    std::unique_ptr<SessionRelay> relay;
    std::unique_ptr<StreamEnd> carrier;
    uint64_t number = 0;
  };
  void accept_programs();
  bool step(Forward& f, Instant now, bool& finished);
  bool step_carrier(Forward& f, Instant now);
  void lose_carrier(Forward& f, Instant now, bool silent);

  TunnelOptions options_;
  session::SessionConfig session_config_;
  std::unique_ptr<StreamClient> client_;
  AppSockets sockets_;
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::list<Forward> forwards_;
  uint64_t next_number_ = 1;
  std::optional<Instant> last_renewal_;
  TunnelStats stats_;
};

// A listening kernel TCP socket on ADDR:PORT, non-blocking; throws (one line).
int listen_on(const HostPort& at, int backlog);

}  // namespace tinytcp::apps
