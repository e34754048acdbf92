#include "tt-tunnel/app_socket.hh"

#include <arpa/inet.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "io/event_loop.hh"

namespace tinytcp::apps {

AppSocket AppSockets::adopt(int fd, const SocketAddress& peer) {
  // Forwarded bytes leave at once: the program on the far side decides
  // about batching, not the tunnel.
  set_no_delay(fd);
  return AppSocket{fd, make_kernel_stream(fd, polled_, peer.ip(), peer.port())};
}

AppSocket AppSockets::connect(const SocketAddress& to) {
  const int fd = ::socket(to.family(), SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    throw std::runtime_error(fmt::format("socket: {}", std::strerror(errno)));
  }
  set_no_delay(fd);  // as in adopt()
  if (::connect(fd, to.get(), to.length) != 0 && errno != EINPROGRESS) {
    const int error = errno;
    ::close(fd);
    throw std::runtime_error(fmt::format("connect: {}", std::strerror(error)));
  }
  AppSocket socket = adopt(fd, to);
  (*polled_)[fd] = POLLIN | POLLOUT;  // POLLOUT: the handshake completed (or failed)
  return socket;
}

void AppSockets::close(AppSocket& socket, bool reset) {
  if (socket.fd < 0) {
    return;
  }
  if (synced_.erase(socket.fd) != 0) {
    unwatch_(socket.fd);
  }
  if (reset) {
    socket.stream->abort();
  } else {
    socket.stream->shutdown_write();
    socket.stream->release();
  }
  socket.stream.reset();
  socket.fd = -1;
}

void AppSockets::sync() {
  for (const auto& [fd, events] : *polled_) {
    auto it = synced_.find(fd);
    if (it != synced_.end() && it->second == events) {
      continue;
    }
    synced_[fd] = events;
    watch_(fd, ((events & POLLIN) != 0 ? io::EventLoop::kReadable : 0U) |
                   ((events & POLLOUT) != 0 ? io::EventLoop::kWritable : 0U));
  }
}

}  // namespace tinytcp::apps
