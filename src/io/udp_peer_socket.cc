#include "io/udp_peer_socket.hh"

#include <arpa/inet.h>
#include <netinet/udp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace tinytcp::io {
namespace {

// The socket for `config`'s local endpoint: its fd, and `family` set (see
// the header: the local endpoint decides, the unspecified one is dual-stack).
int open_socket(const UdpSocketConfig& config, int& family) {
  const UdpEndpoint& local = config.local;
  const bool both = config.dual_stack && local.is_unspecified();
  family = local.ipv6 || both ? AF_INET6 : AF_INET;
  int fd = ::socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0 && errno == EAFNOSUPPORT && both && !local.ipv6) {
    family = AF_INET;  // a kernel without IPv6: 0.0.0.0 as before
    fd = ::socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  }
  if (fd >= 0 && family == AF_INET6) {
    const int v6only = both ? 0 : 1;
    static_cast<void>(::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof(v6only)));
  }
  return fd;
}

}  // namespace

const char* to_string(UdpDrop drop) {
  switch (drop) {
    case UdpDrop::kTruncated:
      return "truncated";
    case UdpDrop::kReceiveError:
      return "receive-error";
    case UdpDrop::kNoPeer:
      return "no-peer";
    case UdpDrop::kTooBig:
      return "too-big";
    case UdpDrop::kRefused:
      return "refused";
    case UdpDrop::kNotPeer:
      return "not-peer";
    case UdpDrop::kNoBuffers:
      return "no-buffers";
    case UdpDrop::kNotPermitted:
      return "not-permitted";
    case UdpDrop::kUnreachable:
      return "unreachable";
    case UdpDrop::kSendError:
      return "send-error";
    case UdpDrop::kFamily:
      return "family";
    case UdpDrop::kCount:
      break;
  }
  return "unknown";
}

UdpPeerSocket::UdpPeerSocket(const UdpSocketConfig& config)
    : config_(config), socket_(open_socket(config_, family_)) {
  if (config_.batch == 0) {
    config_.batch = 1;
  }
  if (!socket_) {
    throw_errno(fmt::format("socket({}, SOCK_DGRAM) for UDP tunnel",
                            family_ == AF_INET6 ? "AF_INET6" : "AF_INET"));
  }
  // Bigger socket buffers absorb bursts; the kernel caps the request at
  // net.core.[rw]mem_max, which is fine.
  const int bytes = config_.socket_buffer_bytes;
  static_cast<void>(::setsockopt(socket_.get(), SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes)));
  static_cast<void>(::setsockopt(socket_.get(), SOL_SOCKET, SO_SNDBUF, &bytes, sizeof(bytes)));
  sockaddr_storage local{};
  const socklen_t local_length = config_.local.to_sockaddr(family_, local);
  if (::bind(socket_.get(), reinterpret_cast<const sockaddr*>(&local), local_length) < 0) {
    throw_errno("bind UDP socket to " + config_.local.to_string());
  }
  if (config_.segmentation_offload) {
    const int on = 1;
    // Without UDP_GRO the kernel never coalesces; GSO needs no socket option.
    static_cast<void>(::setsockopt(socket_.get(), IPPROTO_UDP, UDP_GRO, &on, sizeof(on)));
    gso_ = true;
  }

  const size_t n = config_.batch;
  receive_buffer_.reset(new char[n * config_.receive_slot_bytes]);
  receive_msgs_.resize(n);
  receive_iovs_.resize(n);
  receive_from_.resize(n);
  receive_control_.resize(n);
  send_msgs_.resize(n);
  send_iovs_.resize(n * kMaxSegments);
  send_control_.resize(n);
  send_to_.resize(n);
  send_segments_.resize(n);
  send_bytes_.resize(n);
}

UdpEndpoint UdpPeerSocket::local_endpoint() const {
  sockaddr_storage sa{};
  socklen_t len = sizeof(sa);
  if (::getsockname(socket_.get(), reinterpret_cast<sockaddr*>(&sa), &len) < 0) {
    throw_errno("getsockname of UDP socket");
  }
  return UdpEndpoint::from_sockaddr(sa).value_or(UdpEndpoint{});
}

void UdpPeerSocket::connect(const UdpEndpoint& peer) {
  sockaddr_storage sa{};
  const socklen_t length = peer.to_sockaddr(family_, sa);
  if (length == 0) {
    throw_errno(EAFNOSUPPORT, "connect IPv4 UDP socket to " + peer.to_string());
  }
  if (::connect(socket_.get(), reinterpret_cast<const sockaddr*>(&sa), length) < 0) {
    throw_errno("connect UDP socket to " + peer.to_string());
  }
  connected_ = peer;
}

void UdpPeerSocket::count_drop(UdpDrop reason, uint64_t n, bool sending) {
  (sending ? stats_.send_drops : stats_.receive_drops) += n;
  drops_.count(reason, n);
  SPDLOG_DEBUG("udp: drop {} ({})", n, to_string(reason));
}

size_t UdpPeerSocket::receive_batch(const Handler& on_packet, size_t max_packets,
                                    const Filter& filter) {
  size_t handed_up = 0;
  while (handed_up < max_packets) {
    const size_t want = std::min(config_.batch, max_packets - handed_up);
    for (size_t i = 0; i < want; ++i) {
      receive_iovs_[i].iov_base = receive_buffer_.get() + i * config_.receive_slot_bytes;
      receive_iovs_[i].iov_len = config_.receive_slot_bytes;
      msghdr& h = receive_msgs_[i].msg_hdr;
      h = msghdr{};
      h.msg_iov = &receive_iovs_[i];
      h.msg_iovlen = 1;
      h.msg_name = &receive_from_[i];
      h.msg_namelen = sizeof(sockaddr_storage);
      h.msg_control = receive_control_[i].bytes;
      h.msg_controllen = sizeof(receive_control_[i].bytes);
    }
    const int n = ::recvmmsg(socket_.get(), receive_msgs_.data(), static_cast<unsigned>(want),
                             MSG_DONTWAIT, nullptr);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        break;
      }
      if (errno == EINTR || errno == ECONNREFUSED || errno == EHOSTUNREACH ||
          errno == ENETUNREACH) {
        // An ICMP error queued by an earlier send: it consumed the error, not
        // a datagram; the next call reads on.
        count_drop(errno == ECONNREFUSED ? UdpDrop::kRefused : UdpDrop::kReceiveError, 1);
        continue;
      }
      count_drop(UdpDrop::kReceiveError, 1);
      break;
    }
    for (size_t i = 0; i < static_cast<size_t>(n); ++i) {
      const mmsghdr& m = receive_msgs_[i];
      if ((m.msg_hdr.msg_flags & MSG_TRUNC) != 0) {
        count_drop(UdpDrop::kTruncated, 1);
        continue;
      }
      const std::string_view data(static_cast<const char*>(receive_iovs_[i].iov_base), m.msg_len);
      // With UDP_GRO one read may hold several datagrams of `segment` bytes
      // (the last may be shorter); hand them up one by one.
      size_t segment = data.size();
      for (cmsghdr* c = CMSG_FIRSTHDR(&m.msg_hdr); c != nullptr;
           c = CMSG_NXTHDR(const_cast<msghdr*>(&m.msg_hdr), c)) {
        if (c->cmsg_level == IPPROTO_UDP && c->cmsg_type == UDP_GRO) {
          int size = 0;
          std::memcpy(&size, CMSG_DATA(c), sizeof(size));
          if (size > 0) {
            segment = static_cast<size_t>(size);
          }
        }
      }
      const UdpEndpoint from = UdpEndpoint::from_sockaddr(receive_from_[i]).value_or(UdpEndpoint{});
      if (filter && !filter(from, data.substr(0, segment))) {
        continue;  // the filter counted why (count_drop)
      }
      if (segment < data.size()) {
        ++coalesced_receives_;
      }
      size_t offset = 0;
      do {
        const std::string_view packet = data.substr(offset, segment);
        offset += packet.size();
        ++stats_.packets_received;
        stats_.bytes_received += packet.size();
        ++handed_up;
        on_packet(from, packet);
      } while (offset < data.size());
    }
    if (static_cast<size_t>(n) < want) {
      break;  // the socket is drained; save a recvmmsg that would say EAGAIN
    }
  }
  return handed_up;
}

void UdpPeerSocket::count_send_error(int error) {
  switch (error) {
    case ECONNREFUSED:
      count_drop(UdpDrop::kRefused, 1, true);
      break;
    case ENOBUFS:
      count_drop(UdpDrop::kNoBuffers, 1, true);
      break;
    case EPERM:
      count_drop(UdpDrop::kNotPermitted, 1, true);
      break;
    case EHOSTUNREACH:
    case ENETUNREACH:
      count_drop(UdpDrop::kUnreachable, 1, true);
      break;
    default:
      count_drop(UdpDrop::kSendError, 1, true);
      SPDLOG_DEBUG("udp: send failed: errno {}", error);
      break;
  }
}

void UdpPeerSocket::send_batch(const std::string_view* packets, const UdpEndpoint* to,
                               size_t count) {
  size_t next = 0;
  while (next < count) {
    // Fill up to `batch` messages: one datagram each, or with GSO a run of
    // equal-sized packets to one peer (a shorter one may end the run) as one
    // message.
    size_t messages = 0;
    while (next < count && messages < config_.batch) {
      const std::string_view first = packets[next];
      const UdpEndpoint* peer = to != nullptr ? &to[next] : connected_ ? &*connected_ : nullptr;
      if (first.size() > (peer != nullptr ? mtu(*peer) : config_.mtu)) {
        ++next;
        count_drop(UdpDrop::kTooBig, 1, true);
        continue;
      }
      socklen_t name_length = 0;
      if (to != nullptr) {
        name_length = to[next].to_sockaddr(family_, send_to_[messages]);
        if (name_length == 0) {
          ++next;
          count_drop(UdpDrop::kFamily, 1, true);
          continue;
        }
      }
      size_t k = 1;
      size_t bytes = first.size();
      if (gso_ && !first.empty()) {
        while (next + k < count && k < kMaxSegments) {
          const size_t size = packets[next + k].size();
          if (size == 0 || size > first.size() || bytes + size > kMaxSegmentedBytes ||
              (to != nullptr && to[next + k] != to[next])) {
            break;
          }
          ++k;
          bytes += size;
          if (size < first.size()) {
            break;
          }
        }
      }
      iovec* iov = &send_iovs_[messages * kMaxSegments];
      for (size_t j = 0; j < k; ++j) {
        // sendmmsg does not write through iov_base; the API just lacks const.
        iov[j].iov_base = const_cast<char*>(packets[next + j].data());
        iov[j].iov_len = packets[next + j].size();
      }
      msghdr& h = send_msgs_[messages].msg_hdr;
      h = msghdr{};
      h.msg_iov = iov;
      h.msg_iovlen = k;
      if (to != nullptr) {
        h.msg_name = &send_to_[messages];
        h.msg_namelen = name_length;
      }
      if (k > 1) {
        h.msg_control = send_control_[messages].bytes;
        h.msg_controllen = CMSG_SPACE(sizeof(uint16_t));
        cmsghdr* c = CMSG_FIRSTHDR(&h);
        c->cmsg_level = IPPROTO_UDP;
        c->cmsg_type = UDP_SEGMENT;
        c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
        const auto segment = static_cast<uint16_t>(first.size());
        std::memcpy(CMSG_DATA(c), &segment, sizeof(segment));
      }
      send_segments_[messages] = k;
      send_bytes_[messages] = bytes;
      ++messages;
      next += k;
    }
    if (flush_send(messages, count - next) > 0) {
      // The send buffer is full: the rest was counted as lost.
      for (size_t i = next; send_failure_ && i < count; ++i) {
        send_failure_(packets[i]);
      }
      return;
    }
  }
}

void UdpPeerSocket::report_message(size_t m) {
  if (!send_failure_) {
    return;
  }
  const msghdr& h = send_msgs_[m].msg_hdr;
  for (size_t j = 0; j < h.msg_iovlen; ++j) {
    send_failure_(
        std::string_view(static_cast<const char*>(h.msg_iov[j].iov_base), h.msg_iov[j].iov_len));
  }
}

size_t UdpPeerSocket::flush_send(size_t messages, size_t unsent_after) {
  size_t done = 0;
  while (done < messages) {
    const int n = ::sendmmsg(socket_.get(), send_msgs_.data() + done,
                             static_cast<unsigned>(messages - done), MSG_DONTWAIT);
    if (n < 0) {
      const int error = errno;
      if (error == EINTR) {
        continue;
      }
      if (error == EAGAIN || error == EWOULDBLOCK) {
        // The send buffer is full: everything not yet sent is lost, and trying
        // each one would only cost a syscall apiece.
        size_t lost = unsent_after;
        for (size_t m = done; m < messages; ++m) {
          lost += send_segments_[m];
          report_message(m);
        }
        count_drop(UdpDrop::kNoBuffers, lost, true);
        return lost;
      }
      const size_t k = send_segments_[done];
      if (k > 1 &&
          (error == EIO || error == EINVAL || error == ENOPROTOOPT || error == EOPNOTSUPP)) {
        // This kernel or route cannot segment: this run is lost, later ones go
        // one datagram per message.
        gso_ = false;
        spdlog::warn("udp: UDP segmentation offload refused ({}); sending without it",
                     std::strerror(error));
      }
      // The message at `done` was refused: its datagrams are lost, the rest go on.
      for (size_t j = 0; j < k; ++j) {
        count_send_error(error);
      }
      if (error == ENOBUFS) {
        report_message(done);
      }
      ++done;
      continue;
    }
    for (size_t m = done; m < done + static_cast<size_t>(n); ++m) {
      if (send_segments_[m] > 1) {
        ++segmented_sends_;
      }
      stats_.packets_sent += send_segments_[m];
      stats_.bytes_sent += send_bytes_[m];
    }
    done += static_cast<size_t>(n);
  }
  return 0;
}

}  // namespace tinytcp::io
