#include "io/kernel_device.hh"

#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

namespace tinytcp::io {
namespace {

ifreq make_ifreq(const std::string& name) {
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, name.c_str(), IFNAMSIZ - 1);
  return ifr;
}

}  // namespace

const char* to_string(DeviceDrop drop) {
  switch (drop) {
    case DeviceDrop::kReadError:
      return "read-error";
    case DeviceDrop::kTooBig:
      return "too-big";
    case DeviceDrop::kRejected:
      return "rejected";
    case DeviceDrop::kNoBuffers:
      return "no-buffers";
    case DeviceDrop::kDeviceDown:
      return "device-down";
    case DeviceDrop::kWriteError:
      return "write-error";
    case DeviceDrop::kCount:
      break;
  }
  return "unknown";
}

KernelDevice::KernelDevice(const KernelDeviceConfig& config, short flags, LinkType type)
    : type_(type),
      fd_(::open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC)),
      control_(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)),
      buffer_(kReceiveBufferBytes) {
  const char* kind = (flags & IFF_TAP) != 0 ? "TAP" : "TUN";
  const std::string what =
      std::string(kind) + " device " + (config.name.empty() ? std::string("(any)") : config.name);
  if (config.name.size() >= IFNAMSIZ) {
    throw_errno(ENAMETOOLONG, "open " + what);
  }
  if (!fd_) {
    throw_errno("open /dev/net/tun for " + what);
  }
  if (!control_) {
    throw_errno("socket for ioctls on " + what);
  }
  ifreq ifr = make_ifreq(config.name);
  ifr.ifr_flags = static_cast<short>(flags | IFF_NO_PI);
  if (::ioctl(fd_.get(), TUNSETIFF, &ifr) < 0) {
    throw_errno("TUNSETIFF " + what);
  }
  name_ = ifr.ifr_name;

  if (config.txqueuelen > 0) {
    ifreq q = make_ifreq(name_);
    q.ifr_qlen = static_cast<int>(config.txqueuelen);
    if (::ioctl(control_.get(), SIOCSIFTXQLEN, &q) < 0) {
      // Not fatal: the device works, it only drops earlier under load.
      spdlog::warn("{}: cannot set txqueuelen {}: {}", name_, config.txqueuelen,
                   std::strerror(errno));
    }
  }
  ifreq q = make_ifreq(name_);
  if (::ioctl(control_.get(), SIOCGIFTXQLEN, &q) == 0) {
    txqueuelen_ = static_cast<uint32_t>(q.ifr_qlen);
  }
  refresh_mtu();
}

void KernelDevice::refresh_mtu() {
  ifreq ifr = make_ifreq(name_);
  if (::ioctl(control_.get(), SIOCGIFMTU, &ifr) < 0) {
    throw_errno("SIOCGIFMTU " + name_);
  }
  mtu_ = static_cast<size_t>(ifr.ifr_mtu);
}

void KernelDevice::drop(DeviceDrop reason) {
  drops_.count(reason);
  SPDLOG_DEBUG("{}: drop ({})", name_, to_string(reason));
}

size_t KernelDevice::receive_batch(const PacketHandler& on_packet, size_t max_packets) {
  size_t handed_up = 0;
  while (handed_up < max_packets) {
    const ssize_t n = ::read(fd_.get(), buffer_.data(), buffer_.size());
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      if (errno != EAGAIN && errno != EWOULDBLOCK) {
        ++stats_.receive_drops;
        drop(DeviceDrop::kReadError);
      }
      break;
    }
    const std::string_view packet(buffer_.data(), static_cast<size_t>(n));
    ++stats_.packets_received;
    stats_.bytes_received += packet.size();
    ++handed_up;
    on_packet(packet);
  }
  return handed_up;
}

void KernelDevice::send(std::string_view packet) {
  if (packet.size() > mtu_ + link_header_bytes()) {
    ++stats_.send_drops;
    drop(DeviceDrop::kTooBig);
    return;
  }
  ssize_t n = 0;
  do {
    n = ::write(fd_.get(), packet.data(), packet.size());
  } while (n < 0 && errno == EINTR);
  if (n >= 0) {
    ++stats_.packets_sent;
    stats_.bytes_sent += packet.size();
    return;
  }
  ++stats_.send_drops;
  switch (errno) {
    case EINVAL:
      drop(DeviceDrop::kRejected);
      break;
    case EAGAIN:
    case ENOBUFS:
      drop(DeviceDrop::kNoBuffers);
      break;
    case EIO:
      drop(DeviceDrop::kDeviceDown);
      break;
    default:
      drop(DeviceDrop::kWriteError);
      break;
  }
}

}  // namespace tinytcp::io
