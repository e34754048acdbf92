#include "io/kernel_device.hh"

#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

#include "io/tso_batcher.hh"
#include "io/virtio_net_header.hh"

namespace tinytcp::io {
namespace {

ifreq make_ifreq(const std::string& name) {
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, name.c_str(), IFNAMSIZ - 1);
  return ifr;
}

DeviceDrop write_error_reason(int error) {
  switch (error) {
    case EINVAL:
      return DeviceDrop::kRejected;
    case EAGAIN:
    case ENOBUFS:
      return DeviceDrop::kNoBuffers;
    case EIO:
      return DeviceDrop::kDeviceDown;
    default:
      return DeviceDrop::kWriteError;
  }
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
    case DeviceDrop::kBadVnetHeader:
      return "bad-vnet-header";
    case DeviceDrop::kUnsupportedGso:
      return "unsupported-gso";
    case DeviceDrop::kCount:
      break;
  }
  return "unknown";
}

KernelDevice::KernelDevice(const KernelDeviceConfig& config, short flags, LinkType type)
    : type_(type),
      fd_(::open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC)),
      control_(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)),
      offload_(config.offload),
      buffer_(kReceiveBufferBytes + VirtioNetHeader::kSize) {
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
  ifr.ifr_flags = static_cast<short>(flags | IFF_NO_PI | (offload_ ? IFF_VNET_HDR : 0));
  if (::ioctl(fd_.get(), TUNSETIFF, &ifr) < 0) {
    throw_errno("TUNSETIFF " + what);
  }
  name_ = ifr.ifr_name;
  if (offload_) {
    int size = static_cast<int>(VirtioNetHeader::kSize);
    if (::ioctl(fd_.get(), TUNSETVNETHDRSZ, &size) < 0) {
      throw_errno("TUNSETVNETHDRSZ " + what);
    }
    int little_endian = 1;
    if (::ioctl(fd_.get(), TUNSETVNETLE, &little_endian) < 0) {
      throw_errno("TUNSETVNETLE " + what);
    }
    iov_.reserve(128);
    tso_header_.resize(VirtioNetHeader::kSize + 120);
  }
  // The kernel hands us super-packets and partial checksums only when asked;
  // without offload, clear what an earlier user of a persistent device set.
  // TSO6: IPv6 TCP comes as super-packets too (TCPv6 GSO), as fast as IPv4.
  const unsigned long offloads = offload_ ? (TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6) : 0;
  if (::ioctl(fd_.get(), TUNSETOFFLOAD, offloads) < 0) {
    if (offload_) {
      throw_errno("TUNSETOFFLOAD " + what);
    }
    spdlog::warn("{}: cannot clear offloads: {}", name_, std::strerror(errno));
  }

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
  start_uring(config);
}

void KernelDevice::start_uring(const KernelDeviceConfig& config) {
  if (!config.uring) {
    return;
  }
  if (offload_) {
    spdlog::info("{}: io_uring not used: with offload a batch already leaves in few writes", name_);
    return;
  }
  std::string why;
  uring_ = UringWriter::create(fd_.get(), &why);
  if (uring_) {
    reader_ = UringReader::create(fd_.get(), buffer_.size(), &why);
  }
  if (!uring_ || !reader_) {
    spdlog::warn("{}: io_uring unavailable ({}): one write() and read() per packet", name_, why);
    uring_.reset();
    return;
  }
  uring_done_ = [this](size_t index, int result) {
    const std::string_view packet = uring_packets_[index];
    if (result < 0) {
      errno = -result;
    }
    count_send(result >= 0, packet);
  };
  spdlog::info("{}: io_uring: up to {} writes or {} reads per io_uring_enter", name_,
               UringWriter::kEntries, UringReader::kEntries);
}

void KernelDevice::send_batch_uring(const std::string_view* packets, size_t count) {
  // Too big for the device: counted and left out here, as send() does.
  size_t i = 0;
  while (i < count) {
    size_t n = 0;
    while (i + n < count && packets[i + n].size() <= mtu_ + link_header_bytes()) {
      ++n;
    }
    write_run_uring(packets + i, n, i + n == count);
    i += n;
    if (i < count) {
      send(packets[i]);  // the oversized one: counted as too big
      ++i;
    }
  }
}

void KernelDevice::write_run_uring(const std::string_view* packets, size_t count, bool read_ahead) {
  // The reader's buffers are free: no receive_batch() is handing them up, no
  // read-ahead packets wait in them, and it is not broken.
  const bool ahead = read_ahead && read_ahead_ && count > 0 && !receiving_ && ahead_end_ == 0 &&
                     reader_ && !reader_->broken();
  const size_t alone = ahead ? count - std::min<size_t>(count, UringReader::kEntries) : count;
  uring_packets_ = packets;
  size_t written =
      (alone > 1 || (alone > 0 && ahead)) ? uring_->write(packets, alone, uring_done_) : 0;
  if (uring_->broken()) {
    spdlog::warn("{}: io_uring submission failed: one write() per packet from now on", name_);
    uring_.reset();
  } else if (ahead && written == alone && write_and_read_ahead(packets + alone, count - alone)) {
    written = count;
  }
  uring_packets_ = nullptr;
  for (size_t k = written; k < count; ++k) {  // one packet, or a ring that broke
    send(packets[k]);
  }
}

bool KernelDevice::write_and_read_ahead(const std::string_view* packets, size_t count) {
  if (!reader_->write_then_read(packets, count, write_results_, uring_reads_armed_)) {
    return false;  // nothing submitted; the next receive_batch() falls back to read()
  }
  bool written = true;
  if (write_results_[0] == -EOPNOTSUPP) {
    // No RWF_NOWAIT writes on this descriptor: nothing was written; these
    // and all later writes go through uring_ (which writes without it).
    spdlog::info("{}: no RWF_NOWAIT writes: writes no longer carry reads", name_);
    read_ahead_ = false;
    written = false;
  } else {
    const std::string_view* batch = uring_packets_;
    uring_packets_ = packets;
    for (size_t i = 0; i < count; ++i) {
      uring_done_(i, write_results_[i]);
    }
    uring_packets_ = batch;
  }
  // Kept for the next receive_batch() only when a READ found a packet: a
  // batch of -EAGAIN would cost the event loop a pass for nothing.
  ahead_next_ = 0;
  ahead_end_ = 0;
  for (size_t i = 0; i < reader_->reads(); ++i) {
    if (reader_->result(i) != -EAGAIN) {
      ahead_end_ = reader_->reads();
      break;
    }
  }
  if (ahead_end_ == 0) {
    uring_reads_armed_ = kMinUringReads;
  }
  return written;
}

std::optional<Instant> KernelDevice::next_deadline() const {
  if (ahead_next_ < ahead_end_) {
    return Instant{};  // long due: hand them up at once
  }
  return std::nullopt;
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
  if (reader_) {
    return receive_batch_uring(on_packet, max_packets);
  }
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
    if (hand_up(std::string_view(buffer_.data(), static_cast<size_t>(n)), on_packet)) {
      ++handed_up;
    }
  }
  return handed_up;
}

bool KernelDevice::take_read(size_t i, const PacketHandler& on_packet, size_t* handed_up,
                             size_t* got) {
  const int result = reader_->result(i);
  if (result >= 0) {
    ++*got;
    // The view lives in the reader's buffer i until its next enter.
    if (hand_up(reader_->datagram(i), on_packet)) {
      ++*handed_up;
    }
    return true;
  }
  if (result != -EAGAIN && result != -EWOULDBLOCK && result != -EINTR) {
    ++stats_.receive_drops;
    drop(DeviceDrop::kReadError);
  }
  return false;  // the device ran dry (or failed)
}

size_t KernelDevice::receive_batch_uring(const PacketHandler& on_packet, size_t max_packets) {
  // While packets are handed up from the reader's buffers, a send_batch()
  // (the handler may send) must not read ahead into them.
  struct Receiving {
    bool& flag;
    explicit Receiving(bool& f) : flag(f) { flag = true; }
    ~Receiving() { flag = false; }
  } receiving(receiving_);
  size_t handed_up = 0;
  size_t found = 0;  // packets this call read
  size_t armed = uring_reads_armed_;
  bool enter = true;
  if (ahead_end_ > 0) {
    // What the last send_batch()'s enter read ahead: this call's first batch.
    size_t got = 0;
    bool emptied = false;
    while (ahead_next_ < ahead_end_ && handed_up < max_packets) {
      emptied = !take_read(ahead_next_++, on_packet, &handed_up, &got) || emptied;
    }
    found += got;
    packets_read_ahead_ += got;
    if (ahead_next_ < ahead_end_) {
      return handed_up;  // `max_packets` reached: the rest with the next call
    }
    ahead_next_ = ahead_end_ = 0;
    // As after an enter of the loop below.
    enter = got > 0;
    armed = emptied ? std::clamp<size_t>(2 * got, kMinUringReads, UringReader::kEntries)
                    : UringReader::kEntries;
  }
  while (enter && handed_up < max_packets && !reader_->broken()) {
    const size_t want = std::min(armed, max_packets - handed_up);
    const size_t ran = reader_->read(want);
    size_t got = 0;
    bool emptied = false;
    for (size_t i = 0; i < ran; ++i) {
      emptied = !take_read(i, on_packet, &handed_up, &got) || emptied;
    }
    found += got;
    // As read() in a loop would: stop when an enter finds nothing. One that
    // found the device dry after some packets enters again, smaller: while
    // those were read, the sender has queued more (stopping at the first
    // EAGAIN makes passes short, and each pass costs a wait and an ACK).
    if (got == 0) {
      break;
    }
    armed = emptied ? std::clamp<size_t>(2 * got, kMinUringReads, UringReader::kEntries)
                    : UringReader::kEntries;
  }
  if (reader_->broken()) {
    spdlog::warn("{}: io_uring reads failed: one read() per packet from now on", name_);
    reader_.reset();
    receiving_ = false;
    return handed_up + receive_batch(on_packet, max_packets - handed_up);
  }
  // The next call arms twice what this one found (the enter that found the
  // device dry, which ends most calls, says nothing about the traffic).
  uring_reads_armed_ = std::clamp<size_t>(2 * found, kMinUringReads, UringReader::kEntries);
  return handed_up;
}

bool KernelDevice::hand_up(std::string_view packet, const PacketHandler& on_packet) {
  if (offload_ && type_ == LinkType::kEthernet) {
    if (packet.size() < VirtioNetHeader::kSize) {  // TAP: handed up with the header
      ++stats_.receive_drops;
      drop(DeviceDrop::kBadVnetHeader);
      return false;
    }
  } else if (offload_ && !strip_virtio_net_header(packet)) {  // offload: packet is in buffer_
    ++stats_.receive_drops;
    return false;
  }
  ++stats_.packets_received;
  stats_.bytes_received += packet.size();
  on_packet(packet);
  return true;
}

bool KernelDevice::strip_virtio_net_header(std::string_view& packet) {
  const VnetReadInfo info = take_virtio_net_header(buffer_.data(), packet.size());
  switch (info.result) {
    case VnetRead::kPacket:
      break;
    case VnetRead::kBadHeader:
      drop(DeviceDrop::kBadVnetHeader);
      return false;
    case VnetRead::kUnsupportedGso:
      drop(DeviceDrop::kUnsupportedGso);
      return false;
  }
  packet.remove_prefix(VirtioNetHeader::kSize);
  offload_stats_.checksums_completed += info.checksum_completed ? 1 : 0;
  offload_stats_.super_packets_received += info.super_packet ? 1 : 0;
  return true;
}

bool KernelDevice::write_parts(const iovec* parts, size_t count) {
  ssize_t n = 0;
  do {
    n = ::writev(fd_.get(), parts, static_cast<int>(count));
  } while (n < 0 && errno == EINTR);
  return n >= 0;  // errno says why not
}

void KernelDevice::send(std::string_view packet) {
  if (packet.size() > mtu_ + link_header_bytes()) {
    ++stats_.send_drops;
    drop(DeviceDrop::kTooBig);
    return;
  }
  if (offload_) {
    static const char kPlain[VirtioNetHeader::kSize] = {};  // no offload for this one
    send_with_header(kPlain, packet);
    return;
  }
  ssize_t n = 0;
  do {
    n = ::write(fd_.get(), packet.data(), packet.size());
  } while (n < 0 && errno == EINTR);
  count_send(n >= 0, packet);
}

void KernelDevice::count_send(bool written, std::string_view packet) {
  if (written) {
    ++stats_.packets_sent;
    stats_.bytes_sent += packet.size();
    return;
  }
  const int error = errno;
  count_write_error(error);
  if (error == EAGAIN || error == ENOBUFS) {
    report_send_failure(packet);
  }
}

void KernelDevice::send_with_header(const char* header, std::string_view packet) {
  if (!offload_ || packet.size() > kReceiveBufferBytes + link_header_bytes()) {
    ++stats_.send_drops;
    drop(DeviceDrop::kTooBig);
    return;
  }
  const iovec parts[2] = {{const_cast<char*>(header), VirtioNetHeader::kSize},
                          {const_cast<char*>(packet.data()), packet.size()}};
  count_send(write_parts(parts, 2), packet);
}

void KernelDevice::send_batch(const std::string_view* packets, size_t count) {
  if (uring()) {
    send_batch_uring(packets, count);
    return;
  }
  if (!offload_ || type_ == LinkType::kEthernet) {
    for (size_t i = 0; i < count; ++i) {
      send(packets[i]);
    }
    return;
  }
  size_t i = 0;
  while (i < count) {
    const TsoRun run = find_tso_run(packets + i, count - i);
    if (run.count < 2) {
      send(packets[i]);
      ++i;
      continue;
    }
    if (tso_header_.size() < tso_header_bytes(run)) {
      tso_header_.resize(tso_header_bytes(run));
    }
    write_tso_header(packets + i, run, tso_header_.data());
    iov_.clear();
    iov_.push_back({tso_header_.data(), tso_header_bytes(run)});
    size_t bytes = 0;
    for (size_t k = i; k < i + run.count; ++k) {
      const std::string_view payload = packets[k].substr(run.header_bytes);
      iov_.push_back({const_cast<char*>(payload.data()), payload.size()});
      bytes += packets[k].size();
    }
    if (write_parts(iov_.data(), iov_.size())) {
      stats_.packets_sent += run.count;
      stats_.bytes_sent += bytes;
      ++offload_stats_.super_packets_sent;
      offload_stats_.segments_coalesced += run.count;
    } else {
      // The reason is counted; the segments then go one by one, so a kernel
      // that refuses the super-packet loses nothing.
      drop(write_error_reason(errno));
      for (size_t k = i; k < i + run.count; ++k) {
        send(packets[k]);
      }
    }
    i += run.count;
  }
}

void KernelDevice::count_write_error(int error) {
  ++stats_.send_drops;
  drop(write_error_reason(error));
}

}  // namespace tinytcp::io
