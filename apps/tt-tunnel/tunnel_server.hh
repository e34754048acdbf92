#pragma once

// TunnelServer: `tt-tunnel server`. Streams from tunnel clients arrive on
// --listen over the chosen transport (udp: any number of clients on one UDP
// port, a TCP/IP stack each), as robust sessions (--robust,
// common/robust_streams.hh: a resumed session continues unseen) or plain
// carriers; each is connected on to --forward with kernel TCP.

#include <netinet/in.h>

#include <atomic>
#include <map>
#include <memory>

#include "common/stream_server.hh"
#include "tt-tunnel/app_socket.hh"
#include "tt-tunnel/relay.hh"
#include "tt-tunnel/tunnel_options.hh"

namespace tinytcp::apps {

class TunnelServer {
 public:
  // Throws std::runtime_error (one line) when the port cannot be served or
  // the target does not resolve.
  TunnelServer(const TunnelOptions& options, const HostPort& at, const HostPort& forward);
  ~TunnelServer();
  TunnelServer(const TunnelServer&) = delete;
  TunnelServer& operator=(const TunnelServer&) = delete;

  void run(const std::atomic<bool>& stop);
  const TunnelStats& stats() const { return stats_; }
  std::string summary() const;

 private:
  void accept_streams();
  void record(uint64_t number, const PlainRelay& relay, const char* end);

  TunnelOptions options_;
  SocketAddress forward_;
  std::unique_ptr<StreamServer> server_;
  AppSockets sockets_;
  TunnelStats stats_;
  uint64_t next_number_ = 1;
  std::map<uint64_t, std::unique_ptr<PlainRelay>> relays_;
};

}  // namespace tinytcp::apps
