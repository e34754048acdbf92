#pragma once

// AppSockets: the kernel TCP connections of the programs a tunnel forwards
// (on the client the ones accepted on --listen, on the server the ones made
// to --forward), as non-blocking StreamEnds on the tunnel's loop. Each pass,
// sync() tells the loop which of them to wake on (readable unless the other
// side is full, writable while output waits); close() takes a socket off the
// loop before closing it.

#include <netinet/in.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "common/kernel_tcp.hh"
#include "common/stream_end.hh"

namespace tinytcp::apps {

struct AppSocket {
  int fd = -1;
  std::unique_ptr<StreamEnd> stream;
};

class AppSockets {
 public:
  // How the loop is told: watch(fd, io::EventLoop bits), unwatch(fd).
  using Watch = std::function<void(int fd, uint32_t events)>;
  using Unwatch = std::function<void(int fd)>;
  AppSockets(Watch watch, Unwatch unwatch)
      : watch_(std::move(watch)), unwatch_(std::move(unwatch)) {}

  // Takes a connected socket (from accept()).
  AppSocket adopt(int fd, const SocketAddress& peer);
  // Starts a non-blocking connection to `to`; throws std::runtime_error (one
  // line) when no socket can be made.
  AppSocket connect(const SocketAddress& to);
  // Graceful (FIN after what was written) or abortive (RST).
  void close(AppSocket& socket, bool reset);
  // Brings the loop's watches up to date with what the streams want.
  void sync();

 private:
  Watch watch_;
  Unwatch unwatch_;
  std::shared_ptr<PollSet> polled_ = std::make_shared<PollSet>();
  std::map<int, short> synced_;
};

}  // namespace tinytcp::apps
