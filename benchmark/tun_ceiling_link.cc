#include "tun_ceiling_link.hh"

#include <fcntl.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "util/buffer.hh"
#include "wire/ipv4.hh"

namespace tinytcp::bench {

namespace {

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error(what + ": " + std::strerror(errno));
}

}  // namespace

TunCeilingLink::TunCeilingLink(const std::string& dev, uint32_t local_ip, uint32_t peer_ip)
    : local_ip_(local_ip), peer_ip_(peer_ip) {
  if (dev.empty() || dev.size() >= IFNAMSIZ) {
    throw std::runtime_error("bad device name '" + dev + "'");
  }
  fd_ = ::open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd_ < 0) {
    fail("open /dev/net/tun");
  }
  ifreq request{};
  request.ifr_flags = IFF_TUN | IFF_NO_PI;
  std::memcpy(request.ifr_name, dev.data(), dev.size());
  if (::ioctl(fd_, TUNSETIFF, &request) < 0) {
    const int saved = errno;
    ::close(fd_);
    errno = saved;
    fail("TUNSETIFF " + dev);
  }
  // A persistent device keeps the offloads a previous owner (tt-serve
  // --dev tunN+offload) enabled: checksum offload would hand us datagrams with
  // partial checksums. Plain means none.
  if (::ioctl(fd_, TUNSETOFFLOAD, 0) < 0) {
    const int saved = errno;
    ::close(fd_);
    errno = saved;
    fail("TUNSETOFFLOAD 0 " + dev);
  }
}

TunCeilingLink::~TunCeilingLink() {
  ::close(fd_);
}

void TunCeilingLink::send(const wire::TcpHeader& header, std::string_view payload) {
  const size_t tcp_size = wire::tcp_header_size(header) + payload.size();
  BufferWriter out(out_, sizeof out_);
  wire::Ipv4Header ip;
  ip.total_length = static_cast<uint16_t>(wire::Ipv4Header::kMinSize + tcp_size);
  ip.id = ip_id_++;
  ip.dont_fragment = true;
  ip.protocol = wire::TcpHeader::kProtocol;
  ip.src = wire::Ipv4Address{local_ip_};
  ip.dst = wire::Ipv4Address{peer_ip_};
  wire::serialize(ip, out);
  if (!wire::serialize_tcp(header, payload, local_ip_, peer_ip_, out) || !out.ok()) {
    throw std::runtime_error("segment does not fit in one datagram");
  }
  const ssize_t n = ::write(fd_, out_, out.size());
  if (n < 0) {
    fail("write to the TUN device");
  }
  ++counters_.writes;
}

std::optional<wire::TcpView> TunCeilingLink::receive(bool* idle) {
  *idle = false;
  const ssize_t n = ::read(fd_, in_, sizeof in_);
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      *idle = true;
      return std::nullopt;
    }
    fail("read from the TUN device");
  }
  ++counters_.reads;
  const auto ip = wire::parse_ipv4(std::string_view(in_, static_cast<size_t>(n)));
  if (!ip || ip->header.protocol != wire::TcpHeader::kProtocol ||
      ip->header.src.value != peer_ip_ || ip->header.dst.value != local_ip_ ||
      ip->header.is_fragment()) {
    ++counters_.ignored;
    return std::nullopt;
  }
  auto tcp = wire::parse_tcp(ip->payload, peer_ip_, local_ip_);
  if (!tcp) {
    ++counters_.ignored;
    return std::nullopt;
  }
  return *tcp;
}

bool TunCeilingLink::wait_readable(int timeout_ms) const {
  pollfd p{fd_, POLLIN, 0};
  const int r = ::poll(&p, 1, timeout_ms);
  if (r < 0 && errno != EINTR) {
    fail("poll");
  }
  return r > 0;
}

CpuTimes process_cpu_times() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return {seconds(usage.ru_utime), seconds(usage.ru_stime)};
}

}  // namespace tinytcp::bench
