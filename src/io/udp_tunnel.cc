#include "io/udp_tunnel.hh"

#include <arpa/inet.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace tinytcp::io {
namespace {

sockaddr_in to_sockaddr(const UdpEndpoint& e) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(e.address);
  sa.sin_port = htons(e.port);
  return sa;
}

UdpEndpoint from_sockaddr(const sockaddr_in& sa) {
  return UdpEndpoint{ntohl(sa.sin_addr.s_addr), ntohs(sa.sin_port)};
}

}  // namespace

std::optional<UdpEndpoint> UdpEndpoint::parse(std::string_view text) {
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) {
    return std::nullopt;
  }
  const std::string host(text.substr(0, colon));
  const std::string_view port_text = text.substr(colon + 1);
  in_addr addr{};
  if (::inet_pton(AF_INET, host.c_str(), &addr) != 1) {
    return std::nullopt;
  }
  unsigned port = 0;
  const auto [end, ec] =
      std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc{} || end != port_text.data() + port_text.size() || port_text.empty() ||
      port > 65535) {
    return std::nullopt;
  }
  return UdpEndpoint{ntohl(addr.s_addr), static_cast<uint16_t>(port)};
}

std::string UdpEndpoint::to_string() const {
  return fmt::format("{}.{}.{}.{}:{}", address >> 24, (address >> 16) & 0xff, (address >> 8) & 0xff,
                     address & 0xff, port);
}

const char* to_string(UdpTunnelDrop drop) {
  switch (drop) {
    case UdpTunnelDrop::kTruncated:
      return "truncated";
    case UdpTunnelDrop::kReceiveError:
      return "receive-error";
    case UdpTunnelDrop::kNoPeer:
      return "no-peer";
    case UdpTunnelDrop::kTooBig:
      return "too-big";
    case UdpTunnelDrop::kRefused:
      return "refused";
    case UdpTunnelDrop::kNoBuffers:
      return "no-buffers";
    case UdpTunnelDrop::kNotPermitted:
      return "not-permitted";
    case UdpTunnelDrop::kUnreachable:
      return "unreachable";
    case UdpTunnelDrop::kSendError:
      return "send-error";
    case UdpTunnelDrop::kCount:
      break;
  }
  return "unknown";
}

UdpTunnel::UdpTunnel(const UdpTunnelConfig& config)
    : config_(config), socket_(::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) {
  if (config_.batch == 0) {
    config_.batch = 1;
  }
  if (!socket_) {
    throw_errno("socket(AF_INET, SOCK_DGRAM) for UDP tunnel");
  }
  // Bigger socket buffers absorb bursts; the kernel caps the request at
  // net.core.[rw]mem_max, which is fine.
  const int bytes = config_.socket_buffer_bytes;
  static_cast<void>(::setsockopt(socket_.get(), SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes)));
  static_cast<void>(::setsockopt(socket_.get(), SOL_SOCKET, SO_SNDBUF, &bytes, sizeof(bytes)));
  const sockaddr_in local = to_sockaddr(config_.local);
  if (::bind(socket_.get(), reinterpret_cast<const sockaddr*>(&local), sizeof(local)) < 0) {
    throw_errno("bind UDP tunnel to " + config_.local.to_string());
  }
  if (config_.peer) {
    connect(*config_.peer);
  }

  const size_t n = config_.batch;
  receive_buffer_.resize(n * config_.receive_slot_bytes);
  receive_msgs_.resize(n);
  receive_iovs_.resize(n);
  receive_from_.resize(n);
  send_msgs_.resize(n);
  send_iovs_.resize(n);
}

UdpEndpoint UdpTunnel::local_endpoint() const {
  sockaddr_in sa{};
  socklen_t len = sizeof(sa);
  if (::getsockname(socket_.get(), reinterpret_cast<sockaddr*>(&sa), &len) < 0) {
    throw_errno("getsockname of UDP tunnel");
  }
  return from_sockaddr(sa);
}

void UdpTunnel::connect(const UdpEndpoint& peer) {
  const sockaddr_in sa = to_sockaddr(peer);
  if (::connect(socket_.get(), reinterpret_cast<const sockaddr*>(&sa), sizeof(sa)) < 0) {
    throw_errno("connect UDP tunnel to " + peer.to_string());
  }
  peer_ = peer;
}

void UdpTunnel::drop(UdpTunnelDrop reason) {
  drops_.count(reason);
  SPDLOG_DEBUG("udp tunnel: drop ({})", to_string(reason));
}

size_t UdpTunnel::receive_batch(const PacketHandler& on_packet, size_t max_packets) {
  size_t handed_up = 0;
  while (handed_up < max_packets) {
    const size_t want = std::min(config_.batch, max_packets - handed_up);
    for (size_t i = 0; i < want; ++i) {
      receive_iovs_[i].iov_base = receive_buffer_.data() + i * config_.receive_slot_bytes;
      receive_iovs_[i].iov_len = config_.receive_slot_bytes;
      msghdr& h = receive_msgs_[i].msg_hdr;
      h = msghdr{};
      h.msg_iov = &receive_iovs_[i];
      h.msg_iovlen = 1;
      h.msg_name = &receive_from_[i];
      h.msg_namelen = sizeof(sockaddr_in);
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
        drop(errno == ECONNREFUSED ? UdpTunnelDrop::kRefused : UdpTunnelDrop::kReceiveError);
        continue;
      }
      drop(UdpTunnelDrop::kReceiveError);
      break;
    }
    for (size_t i = 0; i < static_cast<size_t>(n); ++i) {
      const mmsghdr& m = receive_msgs_[i];
      if ((m.msg_hdr.msg_flags & MSG_TRUNC) != 0) {
        ++stats_.receive_drops;
        drop(UdpTunnelDrop::kTruncated);
        continue;
      }
      if (!peer_) {
        // The listening side: the first sender becomes the peer, and from now
        // on the kernel filters everyone else out.
        const UdpEndpoint from = from_sockaddr(receive_from_[i]);
        connect(from);
        spdlog::info("udp tunnel: peer is {}", from.to_string());
      }
      const std::string_view packet(static_cast<const char*>(receive_iovs_[i].iov_base), m.msg_len);
      ++stats_.packets_received;
      stats_.bytes_received += packet.size();
      ++handed_up;
      on_packet(packet);
    }
    if (static_cast<size_t>(n) < want) {
      break;  // the socket is drained; save a recvmmsg that would say EAGAIN
    }
  }
  return handed_up;
}

void UdpTunnel::count_send_error(int error) {
  ++stats_.send_drops;
  switch (error) {
    case ECONNREFUSED:
      drop(UdpTunnelDrop::kRefused);
      break;
    case ENOBUFS:
      drop(UdpTunnelDrop::kNoBuffers);
      break;
    case EPERM:
      drop(UdpTunnelDrop::kNotPermitted);
      break;
    case EHOSTUNREACH:
    case ENETUNREACH:
      drop(UdpTunnelDrop::kUnreachable);
      break;
    default:
      drop(UdpTunnelDrop::kSendError);
      SPDLOG_DEBUG("udp tunnel: send failed: errno {}", error);
      break;
  }
}

void UdpTunnel::send(std::string_view packet) {
  send_batch(&packet, 1);
}

void UdpTunnel::send_batch(const std::string_view* packets, size_t count) {
  if (!peer_) {
    stats_.send_drops += count;
    drops_.count(UdpTunnelDrop::kNoPeer, count);
    SPDLOG_DEBUG("udp tunnel: drop {} (no peer yet)", count);
    return;
  }
  size_t next = 0;
  while (next < count) {
    // Fill one sendmmsg batch, skipping what is too big for the link.
    size_t filled = 0;
    while (next < count && filled < config_.batch) {
      const std::string_view p = packets[next++];
      if (p.size() > config_.mtu) {
        ++stats_.send_drops;
        drop(UdpTunnelDrop::kTooBig);
        continue;
      }
      // sendmmsg does not write through iov_base; the API just lacks const.
      send_iovs_[filled].iov_base = const_cast<char*>(p.data());
      send_iovs_[filled].iov_len = p.size();
      msghdr& h = send_msgs_[filled].msg_hdr;
      h = msghdr{};
      h.msg_iov = &send_iovs_[filled];
      h.msg_iovlen = 1;
      ++filled;
    }
    size_t done = 0;
    while (done < filled) {
      const int n = ::sendmmsg(socket_.get(), send_msgs_.data() + done,
                               static_cast<unsigned>(filled - done), MSG_DONTWAIT);
      if (n < 0) {
        if (errno == EINTR) {
          continue;
        }
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
          // The send buffer is full: everything not yet sent is lost, and
          // trying each one would only cost a syscall apiece.
          const size_t lost = (filled - done) + (count - next);
          stats_.send_drops += lost;
          drops_.count(UdpTunnelDrop::kNoBuffers, lost);
          SPDLOG_DEBUG("udp tunnel: send buffer full, drop {}", lost);
          return;
        }
        // The datagram at `done` was refused: it is lost, the rest go on.
        count_send_error(errno);
        ++done;
        continue;
      }
      for (size_t i = done; i < done + static_cast<size_t>(n); ++i) {
        ++stats_.packets_sent;
        stats_.bytes_sent += send_iovs_[i].iov_len;
      }
      done += static_cast<size_t>(n);
    }
  }
}

}  // namespace tinytcp::io
