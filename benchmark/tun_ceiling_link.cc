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

#ifdef TINYTCP_HAVE_LIBURING
#include <liburing.h>
#endif

#include "util/buffer.hh"
#include "wire/ipv4.hh"

namespace tinytcp::bench {

namespace {

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error(what + ": " + std::strerror(errno));
}

}  // namespace

#ifdef TINYTCP_HAVE_LIBURING
struct TunCeilingLink::Uring {
  static constexpr uint64_t kReadTag = 1ull << 63;  // user data of a READ: tag | index
  io_uring ring{};
  int queued = 0;
  char out[kUringBatch][sizeof(TunCeilingLink::out_)];
  bool batch_reads = false;  // kUringReads
  char in[kUringBatch][2048];
  int results[kUringBatch] = {};
  int next = 0;          // next READ of the batch to hand out
  int armed = 0;         // READs in the batch
  bool emptied = false;  // the batch met -EAGAIN: report idle once it is used up
};

bool uring_available() {
  return true;
}
#else
struct TunCeilingLink::Uring {};

bool uring_available() {
  return false;
}
#endif

TunCeilingLink::TunCeilingLink(const std::string& dev, uint32_t local_ip, uint32_t peer_ip,
                               LinkIo io)
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
  if (io != LinkIo::kSyscall) {
#ifdef TINYTCP_HAVE_LIBURING
    uring_ = std::make_unique<Uring>();
    uring_->batch_reads = io == LinkIo::kUringReads;
    const int r = io_uring_queue_init(2 * kUringBatch, &uring_->ring, 0);
    if (r < 0) {
      uring_.reset();
      ::close(fd_);
      errno = -r;
      fail("io_uring_queue_init");
    }
#else
    ::close(fd_);
    throw std::runtime_error("built without liburing (Debian: liburing-dev): no io_uring mode");
#endif
  }
}

TunCeilingLink::~TunCeilingLink() {
#ifdef TINYTCP_HAVE_LIBURING
  if (uring_) {
    io_uring_queue_exit(&uring_->ring);
  }
#endif
  ::close(fd_);
}

void TunCeilingLink::write_now(const char* data, size_t size) {
  const ssize_t n = ::write(fd_, data, size);
  if (n < 0) {
    fail("write to the TUN device");
  }
  ++counters_.writes;
}

void TunCeilingLink::flush() {
#ifdef TINYTCP_HAVE_LIBURING
  if (!uring_ || uring_->queued == 0) {
    return;
  }
  const int queued = uring_->queued;
  uring_->queued = 0;
  const int r = io_uring_submit_and_wait(&uring_->ring, static_cast<unsigned>(queued));
  if (r < 0) {
    errno = -r;
    fail("io_uring_submit_and_wait");
  }
  if (r < queued) {  // the rest would never complete: waiting for them would hang
    errno = EIO;
    fail("io_uring_submit_and_wait took fewer entries than queued");
  }
  ++counters_.enters;
  int reaped = 0;
  while (reaped < queued) {
    io_uring_cqe* cqe = nullptr;
    const int w = io_uring_wait_cqe(&uring_->ring, &cqe);
    if (w < 0) {
      errno = -w;
      fail("io_uring_wait_cqe");
    }
    const int res = cqe->res;
    const size_t expected = static_cast<size_t>(io_uring_cqe_get_data64(cqe));
    io_uring_cqe_seen(&uring_->ring, cqe);
    ++reaped;
    check_write(res, expected);
  }
#endif
}

void TunCeilingLink::check_write(int result, size_t expected) {
  if (result < 0) {
    errno = -result;
    fail("io_uring WRITE to the TUN device");
  }
  if (static_cast<size_t>(result) != expected) {
    throw std::runtime_error("io_uring WRITE to the TUN device was short");
  }
  ++counters_.writes;
}

void TunCeilingLink::read_batch() {
#ifdef TINYTCP_HAVE_LIBURING
  Uring& u = *uring_;
  for (int i = 0; i < kUringBatch; ++i) {
    io_uring_sqe* sqe = io_uring_get_sqe(&u.ring);  // room: queued < kUringBatch, ring 2x
    io_uring_prep_read(sqe, fd_, u.in[i], sizeof u.in[i], 0);
    sqe->rw_flags = RWF_NOWAIT;  // an empty device: -EAGAIN now, not a poll
    const uint64_t tag = Uring::kReadTag | static_cast<uint64_t>(i);
    io_uring_sqe_set_data64(sqe, tag);
  }
  const int total = u.queued + kUringBatch;
  u.queued = 0;
  const int r = io_uring_submit_and_wait(&u.ring, static_cast<unsigned>(total));
  if (r < 0) {
    errno = -r;
    fail("io_uring_submit_and_wait");
  }
  if (r < total) {  // the rest would never complete: waiting for them would hang
    errno = EIO;
    fail("io_uring_submit_and_wait took fewer entries than queued");
  }
  ++counters_.enters;
  u.emptied = false;
  for (int reaped = 0; reaped < total; ++reaped) {
    io_uring_cqe* cqe = nullptr;
    const int w = io_uring_wait_cqe(&u.ring, &cqe);
    if (w < 0) {
      errno = -w;
      fail("io_uring_wait_cqe");
    }
    const int res = cqe->res;
    const uint64_t data = io_uring_cqe_get_data64(cqe);
    io_uring_cqe_seen(&u.ring, cqe);
    if ((data & Uring::kReadTag) == 0) {
      check_write(res, static_cast<size_t>(data));
      continue;
    }
    u.results[data & ~Uring::kReadTag] = res;
    u.emptied = u.emptied || res == -EAGAIN;
  }
  u.next = 0;
  u.armed = kUringBatch;
#endif
}

void TunCeilingLink::send(const wire::TcpHeader& header, std::string_view payload) {
  const size_t tcp_size = wire::tcp_header_size(header) + payload.size();
  char* buffer = out_;  // kUring: the next queued datagram's own buffer
#ifdef TINYTCP_HAVE_LIBURING
  if (uring_) {
    buffer = uring_->out[uring_->queued];
  }
#endif
  BufferWriter out(buffer, sizeof out_);
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
#ifdef TINYTCP_HAVE_LIBURING
  if (uring_) {
    Uring& u = *uring_;
    io_uring_sqe* sqe = io_uring_get_sqe(&u.ring);
    if (sqe == nullptr) {
      throw std::runtime_error("io_uring submission queue full");
    }
    io_uring_prep_write(sqe, fd_, buffer, static_cast<unsigned>(out.size()), 0);
    io_uring_sqe_set_data64(sqe, out.size());
    if (++u.queued == kUringBatch) {
      flush();
    }
    return;
  }
#endif
  write_now(out_, out.size());
}

std::optional<wire::TcpView> TunCeilingLink::receive(bool* idle) {
  *idle = false;
#ifdef TINYTCP_HAVE_LIBURING
  if (uring_ && uring_->batch_reads) {
    Uring& u = *uring_;
    for (;;) {
      while (u.next < u.armed) {
        const int i = u.next++;
        const int res = u.results[i];
        if (res == -EAGAIN) {
          continue;
        }
        if (res < 0) {
          errno = -res;
          fail("io_uring READ from the TUN device");
        }
        ++counters_.reads;
        return parse(std::string_view(u.in[i], static_cast<size_t>(res)));
      }
      if (u.emptied) {
        u.emptied = false;
        *idle = true;
        return std::nullopt;
      }
      read_batch();
    }
  }
#endif
  const ssize_t n = ::read(fd_, in_, sizeof in_);
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      *idle = true;
      return std::nullopt;
    }
    fail("read from the TUN device");
  }
  ++counters_.reads;
  return parse(std::string_view(in_, static_cast<size_t>(n)));
}

std::optional<wire::TcpView> TunCeilingLink::parse(std::string_view datagram) {
  const auto ip = wire::parse_ipv4(datagram);
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
