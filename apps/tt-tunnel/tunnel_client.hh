#pragma once

// TunnelClient: `tt-tunnel client`. Programs connect with kernel TCP to
// --listen; each connection is carried to the tunnel server (--to) on a
// stream of the chosen transport: a robust session of its own (--robust,
// common/robust_streams.hh) or one plain carrier connection. One thread, one
// loop: the StreamClient's.

#include <atomic>
#include <list>
#include <memory>

#include "common/stream_client.hh"
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
  std::string summary() const;

 private:
  struct Forward {
    std::unique_ptr<PlainRelay> relay;
    uint64_t number = 0;
  };
  void accept_programs();
  void record(const Forward& f, const char* end);

  TunnelOptions options_;
  std::unique_ptr<StreamClient> client_;
  AppSockets sockets_;
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::list<Forward> forwards_;
  uint64_t next_number_ = 1;
  TunnelStats stats_;
};

// A listening kernel TCP socket on ADDR:PORT, non-blocking; throws (one line).
int listen_on(const HostPort& at, int backlog);

}  // namespace tinytcp::apps
