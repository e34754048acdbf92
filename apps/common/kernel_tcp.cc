#include "common/kernel_tcp.hh"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <linux/tcp.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

namespace tinytcp::apps {

HostPort parse_host_port(const std::string& text) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) {
    throw std::invalid_argument(fmt::format("expected HOST:PORT, got '{}'", text));
  }
  const std::string port_text = text.substr(colon + 1);
  char* end = nullptr;
  const unsigned long port = std::strtoul(port_text.c_str(), &end, 10);
  if (*end != '\0' || port == 0 || port > 65535) {
    throw std::invalid_argument(fmt::format("bad port '{}' in '{}'", port_text, text));
  }
  return HostPort{text.substr(0, colon), static_cast<uint16_t>(port)};
}

int connect_tcp(const HostPort& to, Duration timeout, const std::string& congestion_control) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(to.port);
  if (const int rc = ::getaddrinfo(to.host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    throw std::runtime_error(fmt::format("cannot resolve {}: {}", to.host, ::gai_strerror(rc)));
  }
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    ::freeaddrinfo(found);
    throw std::runtime_error(fmt::format("socket: {}", std::strerror(errno)));
  }
  if (!congestion_control.empty() &&
      ::setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, congestion_control.data(),
                   static_cast<socklen_t>(congestion_control.size())) != 0) {
    const int error = errno;
    ::freeaddrinfo(found);
    ::close(fd);
    throw std::invalid_argument(fmt::format("kernel congestion control '{}': {}",
                                            congestion_control, std::strerror(error)));
  }
  int rc = ::connect(fd, found->ai_addr, found->ai_addrlen);
  ::freeaddrinfo(found);
  int error = rc == 0 ? 0 : errno;
  if (rc != 0 && error == EINPROGRESS) {
    pollfd p{fd, POLLOUT, 0};
    rc = ::poll(&p, 1, static_cast<int>(to_ms(timeout)));
    if (rc == 0) {
      error = ETIMEDOUT;
    } else {
      socklen_t len = sizeof error;
      ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len);
    }
  }
  if (error != 0) {
    ::close(fd);
    throw std::runtime_error(
        fmt::format("cannot reach {}:{}: {}", to.host, to.port, std::strerror(error)));
  }
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

int listen_tcp(uint16_t port, int backlog) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    throw std::runtime_error(fmt::format("socket: {}", std::strerror(errno)));
  }
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(fd, backlog) != 0) {
    const int error = errno;
    ::close(fd);
    throw std::runtime_error(
        fmt::format("cannot listen on port {}: {}", port, std::strerror(error)));
  }
  return fd;
}

uint16_t local_port(int fd) {
  sockaddr_in addr{};
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  return ntohs(addr.sin_port);
}

KernelTcpInfo kernel_tcp_info(int fd) {
  tcp_info info{};
  socklen_t len = sizeof info;
  KernelTcpInfo out;
  if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) == 0) {
    out.bytes_sent = info.tcpi_bytes_sent;
    out.bytes_retransmitted = info.tcpi_bytes_retrans;
    out.total_retransmits = info.tcpi_total_retrans;
  }
  return out;
}

uint64_t kernel_unacknowledged(int fd) {
  int queued = 0;
  if (::ioctl(fd, SIOCOUTQ, &queued) != 0 || queued < 0) {
    return 0;
  }
  return static_cast<uint64_t>(queued);
}

std::string resolve_ipv4(const std::string& host) {
  in_addr addr{};
  if (::inet_pton(AF_INET, host.c_str(), &addr) == 1) {
    return host;
  }
  addrinfo hints{};
  hints.ai_family = AF_INET;
  addrinfo* result = nullptr;
  if (::getaddrinfo(host.c_str(), nullptr, &hints, &result) != 0 || result == nullptr) {
    throw std::runtime_error(fmt::format("cannot resolve {}", host));
  }
  char text[INET_ADDRSTRLEN] = {};
  const auto* sin = reinterpret_cast<const sockaddr_in*>(result->ai_addr);
  ::inet_ntop(AF_INET, &sin->sin_addr, text, sizeof text);
  ::freeaddrinfo(result);
  return text;
}

}  // namespace tinytcp::apps
