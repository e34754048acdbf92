#include "common/kernel_tcp.hh"

#include <fcntl.h>
#include <linux/sockios.h>
#include <linux/tcp.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

namespace tinytcp::apps {

std::string HostPort::to_string() const {
  return host.find(':') != std::string::npos ? fmt::format("[{}]:{}", host, port)
                                             : fmt::format("{}:{}", host, port);
}

namespace {

// 1-65535, digits only; throws "bad port 'PORT_TEXT' in 'TEXT'".
uint16_t parse_port(const std::string& port_text, const std::string& text) {
  char* end = nullptr;
  const unsigned long port = std::strtoul(port_text.c_str(), &end, 10);
  if (port_text.empty() || *end != '\0' || port == 0 || port > 65535 ||
      !std::isdigit(static_cast<unsigned char>(port_text[0]))) {
    throw std::invalid_argument(fmt::format("bad port '{}' in '{}'", port_text, text));
  }
  return static_cast<uint16_t>(port);
}

}  // namespace

HostPort parse_host_port(const std::string& text) {
  std::string host;
  std::string port_text;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string::npos) {
      throw std::invalid_argument(fmt::format("missing ']' in '{}' (expected [IPv6]:PORT)", text));
    }
    host = text.substr(1, close - 1);
    const auto address = io::UdpEndpoint::parse_address(host, 0);
    if (!address || !address->ipv6) {
      throw std::invalid_argument(fmt::format("bad IPv6 address '{}' in '{}'", host, text));
    }
    if (close + 1 >= text.size() || text[close + 1] != ':') {
      throw std::invalid_argument(fmt::format("expected [IPv6]:PORT, got '{}'", text));
    }
    port_text = text.substr(close + 2);
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string::npos || colon == 0) {
      throw std::invalid_argument(fmt::format("expected HOST:PORT or [IPv6]:PORT, got '{}'", text));
    }
    host = text.substr(0, colon);
    if (host.find_first_of(":[]") != std::string::npos) {
      throw std::invalid_argument(
          fmt::format("an IPv6 address goes in brackets: [ADDR]:PORT, got '{}'", text));
    }
    port_text = text.substr(colon + 1);
  }
  return HostPort{host, parse_port(port_text, text)};
}

HostPort parse_listen(const std::string& text) {
  if (text.find(':') == std::string::npos) {
    return HostPort{"", parse_port(text, text)};
  }
  return parse_host_port(text);
}

SocketAddress SocketAddress::of(const sockaddr_storage& storage, socklen_t length) {
  SocketAddress a;
  a.storage = storage;
  a.length = length;
  return a;
}

SocketAddress SocketAddress::of(const io::UdpEndpoint& endpoint, int family) {
  SocketAddress a;
  a.length = endpoint.to_sockaddr(family, a.storage);
  return a;
}

io::UdpEndpoint SocketAddress::endpoint() const {
  return io::UdpEndpoint::from_sockaddr(storage).value_or(io::UdpEndpoint{});
}

stack::IpAddress SocketAddress::ip() const {
  const io::UdpEndpoint e = endpoint();
  if (e.ipv6) {
    return wire::Ipv6Address{e.address6};
  }
  return wire::Ipv4Address{e.address};
}

SocketAddress resolve(const HostPort& endpoint) {
  if (const auto literal = io::UdpEndpoint::parse_address(endpoint.host, endpoint.port)) {
    return SocketAddress::of(*literal, literal->ipv6 ? AF_INET6 : AF_INET);
  }
  SocketAddress out;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(endpoint.port);
  if (const int rc = ::getaddrinfo(endpoint.host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    throw std::runtime_error(
        fmt::format("cannot resolve {}: {}", endpoint.host, ::gai_strerror(rc)));
  }
  // The first IPv4 address, else the first IPv6 one.
  const addrinfo* pick = nullptr;
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    if ((a->ai_family == AF_INET || a->ai_family == AF_INET6) &&
        (pick == nullptr || (pick->ai_family == AF_INET6 && a->ai_family == AF_INET))) {
      pick = a;
    }
  }
  if (pick != nullptr && pick->ai_addrlen <= sizeof out.storage) {
    std::memcpy(&out.storage, pick->ai_addr, pick->ai_addrlen);
    out.length = pick->ai_addrlen;
  }
  ::freeaddrinfo(found);
  if (out.length == 0) {
    throw std::runtime_error(fmt::format("cannot resolve {}", endpoint.host));
  }
  return out;
}

std::string resolve_address(const std::string& host) {
  return resolve(HostPort{host, 0}).ip().to_string();
}

std::string udp_device(const HostPort& to) {
  return "udp:" + resolve(to).to_string();
}

int connect_tcp(const HostPort& to, Duration timeout, const std::string& congestion_control) {
  const SocketAddress address = resolve(to);
  const int fd = ::socket(address.family(), SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    throw std::runtime_error(fmt::format("socket: {}", std::strerror(errno)));
  }
  if (!congestion_control.empty() &&
      ::setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, congestion_control.data(),
                   static_cast<socklen_t>(congestion_control.size())) != 0) {
    const int error = errno;
    ::close(fd);
    throw std::invalid_argument(fmt::format("kernel congestion control '{}': {}",
                                            congestion_control, std::strerror(error)));
  }
  int rc = ::connect(fd, address.get(), address.length);
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
        fmt::format("cannot reach {}: {}", to.to_string(), std::strerror(error)));
  }
  set_no_delay(fd);
  return fd;
}

void set_no_delay(int fd) {
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

int listen_tcp(const SocketAddress& at, int backlog, bool nonblocking) {
  const int fd =
      ::socket(at.family(), SOCK_STREAM | SOCK_CLOEXEC | (nonblocking ? SOCK_NONBLOCK : 0), 0);
  if (fd < 0) {
    throw std::runtime_error(
        fmt::format("cannot listen on {}: socket: {}", at.to_string(), std::strerror(errno)));
  }
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (at.family() == AF_INET6) {
    // [::] takes IPv4 clients too; a specific IPv6 address only its own.
    const int v6only = at.endpoint().is_unspecified() ? 0 : 1;
    ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof v6only);
  }
  if (::bind(fd, at.get(), at.length) != 0 || ::listen(fd, backlog) != 0) {
    const int error = errno;
    ::close(fd);
    throw std::runtime_error(
        fmt::format("cannot listen on {}: {}", at.to_string(), std::strerror(error)));
  }
  return fd;
}

int listen_tcp(uint16_t port, int backlog) {
  const io::UdpEndpoint every{0, port};
  SocketAddress any = SocketAddress::of(every, AF_INET6);  // [::]
  const int probe = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (probe < 0 && errno == EAFNOSUPPORT) {
    // A kernel without IPv6: 0.0.0.0 as before.
    any = SocketAddress::of(every, AF_INET);
  } else if (probe >= 0) {
    ::close(probe);
  }
  return listen_tcp(any, backlog);
}

uint16_t local_port(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  return SocketAddress::of(addr, len).port();
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

}  // namespace tinytcp::apps
