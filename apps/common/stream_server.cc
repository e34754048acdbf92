#include "common/stream_server.hh"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "common/kernel_tcp.hh"
#include "common/peer_runtime.hh"
#include "common/stack_runtime.hh"
#include "io/impairment_spec.hh"
#include "stack/peer_hosts.hh"

namespace tinytcp::apps {

namespace {

// Bytes of the endpoint's output moved per pass, and input read per pass
// from a kernel socket: enough for throughput, small enough that one busy
// session does not keep the loop from the others.
constexpr size_t kOutputSlice = 256 * 1024;
constexpr size_t kKernelReadPerPass = 1 << 20;
constexpr size_t kKernelReadBuffer = 256 * 1024;
// After accept() failed for want of file descriptors (EMFILE, ENFILE), the
// listening socket is left alone this long instead of being retried at once.
constexpr Duration kAcceptBackoff = std::chrono::milliseconds(100);

std::string ipv4_text(uint32_t address, uint16_t port) {
  return stack::PeerKey{address, port}.to_string();
}

// ---------------------------------------------------------------- tinytcp

// A socket on a Host that may go away (a udp peer that was forgotten).
class StackServerStream : public ServerStream {
 public:
  StackServerStream(std::function<stack::Host*()> host, std::function<Instant()> now,
                    std::function<void()> flush, stack::SocketId id, uint32_t address,
                    uint16_t port)
      : host_(std::move(host)),
        now_(std::move(now)),
        flush_(std::move(flush)),
        id_(id),
        address_(address),
        peer_(ipv4_text(address, port)) {}
  ~StackServerStream() override {
    if (open_) {
      abort();
    }
  }

  const std::string& peer() const override { return peer_; }
  uint32_t peer_address() const override { return address_; }

  StepOutcome step(const PumpIo& io) override {
    stack::Host* host = host_();
    if (host == nullptr) {
      StepOutcome out;
      out.end = PumpOutcome{PumpResult::Error, "connection lost (peer forgotten)"};
      return out;
    }
    StepOutcome out = step_stack_stream(*host, id_, io, now_(), kOutputSlice);
    const auto* c = host->connection(id_);
    const uint64_t unacknowledged = c != nullptr ? c->sender().outbound().bytes_buffered() : 0;
    out.progress = out.progress || unacknowledged != last_unacknowledged_;
    last_unacknowledged_ = unacknowledged;
    return out;
  }

  void shutdown_write() override {
    if (stack::Host* host = host_()) {
      host->shutdown_write(id_, now_());
    }
  }

  bool closed() override {
    stack::Host* host = host_();
    const auto info = host != nullptr ? host->info(id_) : std::nullopt;
    if (!info) {
      return true;
    }
    // Bytes the peer still sends are not wanted any more.
    if (const auto in = host->peek(id_); !in.empty()) {
      host->consume(id_, in.size(), now_());
    }
    const tcp::TcpState s = info->state;
    return s == tcp::TcpState::FinWait2 || s == tcp::TcpState::TimeWait ||
           s == tcp::TcpState::Closed;
  }

  void release() override {
    if (stack::Host* host = host_(); host != nullptr && open_) {
      host->close(id_, now_());
      flush_();
    }
    open_ = false;
  }

  void abort() override {
    if (stack::Host* host = host_(); host != nullptr && open_) {
      host->abort(id_, now_());
      flush_();
    }
    open_ = false;
  }

 private:
  std::function<stack::Host*()> host_;
  std::function<Instant()> now_;
  std::function<void()> flush_;
  stack::SocketId id_;
  uint32_t address_;
  std::string peer_;
  bool open_ = true;
  uint64_t last_unacknowledged_ = 0;
};

// udp: one Host per peer on one UDP port.
class UdpStreamServer : public StreamServer {
 public:
  UdpStreamServer(const TransportOptions& options, uint16_t port, const ServerLimits& limits) {
    PeerRuntimeOptions o;
    if (!options.impair.empty()) {
      auto impair = io::parse_impairment(options.impair);
      if (!impair) {
        throw std::runtime_error(fmt::format("impairment: {}", impair.error()));
      }
      o.impair_in = *impair;
      o.impair_out = *impair;
      o.seed = options.seed;
    }
    o.socket.local = io::UdpEndpoint{0, port};
    o.pcap = options.pcap;
    o.peers.host.address = tunnel_receiver_address();
    o.peers.host.tcp = transfer_tcp_config(options);
    o.peers.host.tcp.mss = static_cast<uint16_t>(o.socket.mtu - 40);
    // Per peer: one session's connection (and a spare), a few TIME-WAITs.
    o.peers.host.max_sockets = 4;
    o.peers.host.max_time_wait = 16;
    o.peers.ports = {port};
    o.peers.max_peers = limits.max_peers;
    o.peers.max_embryonic = limits.max_embryonic;
    runtime_ = std::make_shared<PeerRuntime>(o);
  }

  std::unique_ptr<ServerStream> accept() override {
    const auto accepted = runtime_->peers().accept();
    if (!accepted) {
      return nullptr;
    }
    auto runtime = runtime_;
    const stack::PeerId peer = accepted->peer;
    return std::make_unique<StackServerStream>(
        [runtime, peer] { return runtime->peers().host(peer); },
        [runtime] { return runtime->now(); }, [runtime] { runtime->flush(); }, accepted->socket,
        accepted->key.address, accepted->key.port);
  }

  void wait(Duration max_wait) override { runtime_->loop().run_once(max_wait); }
  void watch(int fd) override {
    runtime_->loop().add_fd(fd, io::EventLoop::kReadable, [](uint32_t) {});
  }
  void unwatch(int fd) override { runtime_->loop().remove_fd(fd); }

  std::string summary() const override {
    const auto& p = runtime_->peers();
    const auto& s = p.stats();
    return fmt::format(
        "peers {} ({} embryonic), created {}, evicted {}, handshake timeouts {}, finished {}, "
        "dropped {} (bad {}, not-syn {}, not-listening {}, full {})",
        p.size(), p.embryonic(), s.peers_created, s.embryonic_evicted, s.handshake_timeouts,
        s.peers_finished, s.drops.total(), s.drops[stack::PeerDrop::BadDatagram],
        s.drops[stack::PeerDrop::NotSyn], s.drops[stack::PeerDrop::NotListening],
        s.drops[stack::PeerDrop::PeersFull]);
  }

 private:
  std::shared_ptr<PeerRuntime> runtime_;
};

// tun: many connections on the one Host of the device.
class TunStreamServer : public StreamServer {
 public:
  TunStreamServer(const TransportOptions& options, uint16_t port, const ServerLimits& limits)
      : runtime_(std::make_shared<StackRuntime>(runtime_options(options, true))) {
    const auto listener = runtime_->host().listen(port, limits.backlog);
    if (!listener) {
      throw std::runtime_error(
          fmt::format("cannot listen on port {}: {}", port, stack::to_string(listener.error())));
    }
    listener_ = *listener;
  }

  std::unique_ptr<ServerStream> accept() override {
    const auto id = runtime_->host().accept(listener_);
    if (!id) {
      return nullptr;
    }
    const auto info = runtime_->host().info(*id);
    auto runtime = runtime_;
    return std::make_unique<StackServerStream>(
        [runtime] { return &runtime->host(); }, [runtime] { return runtime->now(); },
        [runtime] { runtime->flush(); }, *id, info ? info->tuple.remote_ip.value : 0,
        info ? info->tuple.remote_port : 0);
  }

  void wait(Duration max_wait) override { runtime_->loop().run_once(max_wait); }
  void watch(int fd) override {
    runtime_->loop().add_fd(fd, io::EventLoop::kReadable, [](uint32_t) {});
  }
  void unwatch(int fd) override { runtime_->loop().remove_fd(fd); }

  std::string summary() const override {
    const auto& s = runtime_->host().stats();
    return fmt::format("connections opened {}, dropped {}", s.connections_opened, s.drops.total());
  }

 private:
  std::shared_ptr<StackRuntime> runtime_;
  stack::SocketId listener_ = 0;
};

// ---------------------------------------------------------------- kernel

// The fds the server polls, each with the events it waits for: POLLOUT while
// output waits, POLLIN unless the endpoint holds input back.
using PollSet = std::map<int, short>;

class KernelServerStream : public ServerStream {
 public:
  KernelServerStream(int fd, std::shared_ptr<PollSet> polled, uint32_t address, uint16_t port)
      : fd_(fd), polled_(std::move(polled)), address_(address), peer_(ipv4_text(address, port)) {
    (*polled_)[fd_] = POLLIN;
    unacknowledged_ = kernel_unacknowledged(fd_);
  }
  ~KernelServerStream() override { release(); }

  const std::string& peer() const override { return peer_; }
  uint32_t peer_address() const override { return address_; }

  StepOutcome step(const PumpIo& io) override {
    StepOutcome out;
    if (fd_ < 0) {
      out.end = PumpOutcome{PumpResult::Error, "connection closed"};
      return out;
    }
    for (std::string_view data = io.output(); !data.empty(); data = io.output()) {
      const ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        io.consume(static_cast<size_t>(n));
        out.progress = true;
        continue;
      }
      if (n < 0 && errno != EAGAIN && errno != EINTR) {
        out.end = PumpOutcome{PumpResult::Error,
                              fmt::format("connection lost: {}", std::strerror(errno))};
        return out;
      }
      break;
    }
    const bool wants_input = !io.wants_input || io.wants_input();
    (*polled_)[fd_] =
        static_cast<short>((wants_input ? POLLIN : 0) | (io.output().empty() ? 0 : POLLOUT));
    buffer_.resize(kKernelReadBuffer);
    for (size_t read = 0; read < kKernelReadPerPass && (!io.wants_input || io.wants_input());) {
      const ssize_t n = ::recv(fd_, buffer_.data(), buffer_.size(), MSG_DONTWAIT);
      if (n > 0) {
        io.input(std::string_view(buffer_).substr(0, static_cast<size_t>(n)));
        read += static_cast<size_t>(n);
        out.progress = true;
        continue;
      }
      if (n == 0) {
        out.end = PumpOutcome{io.done() ? PumpResult::Done : PumpResult::PeerClosed,
                              "the peer closed the connection"};
        return out;
      }
      if (errno != EAGAIN && errno != EINTR) {
        out.end = PumpOutcome{PumpResult::Error,
                              fmt::format("connection lost: {}", std::strerror(errno))};
        return out;
      }
      break;
    }
    if (const uint64_t queued = kernel_unacknowledged(fd_); queued != unacknowledged_) {
      unacknowledged_ = queued;
      out.progress = true;
    }
    if (io.done()) {
      out.end = PumpOutcome{PumpResult::Done, {}};
    }
    return out;
  }

  void shutdown_write() override {
    if (fd_ >= 0) {
      ::shutdown(fd_, SHUT_WR);
    }
  }
  // The kernel delivers what was written after close() on its own.
  bool closed() override { return true; }

  void release() override {
    if (fd_ >= 0) {
      polled_->erase(fd_);
      ::close(fd_);
      fd_ = -1;
    }
  }

  void abort() override {
    if (fd_ >= 0) {
      const linger reset{1, 0};
      ::setsockopt(fd_, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
    }
    release();
  }

 private:
  int fd_;
  std::shared_ptr<PollSet> polled_;
  uint32_t address_;
  std::string peer_;
  std::string buffer_;
  uint64_t unacknowledged_ = 0;
};

class KernelStreamServer : public StreamServer {
 public:
  KernelStreamServer(uint16_t port, const ServerLimits& limits)
      : fd_(listen_tcp(port, static_cast<int>(limits.backlog))),
        polled_(std::make_shared<PollSet>()) {
    ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);  // accept() must not wait
  }
  ~KernelStreamServer() override { ::close(fd_); }

  std::unique_ptr<ServerStream> accept() override {
    if (accept_paused_until_ && std::chrono::steady_clock::now() < *accept_paused_until_) {
      return nullptr;
    }
    accept_paused_until_.reset();
    sockaddr_in from{};
    socklen_t len = sizeof(from);
    const int fd =
        ::accept4(fd_, reinterpret_cast<sockaddr*>(&from), &len, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd >= 0) {
      return std::make_unique<KernelServerStream>(fd, polled_, ntohl(from.sin_addr.s_addr),
                                                  ntohs(from.sin_port));
    }
    if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
      // Out of descriptors or memory: the connection waits in the kernel's
      // queue; retrying at once would spin.
      ++accept_failures_;
      if (accept_failures_ == 1 || accept_failures_ % 100 == 0) {
        spdlog::warn("accept: {} ({} times); retrying in {} ms", std::strerror(errno),
                     accept_failures_, kAcceptBackoff.count() / 1'000'000);
      }
      accept_paused_until_ = std::chrono::steady_clock::now() + kAcceptBackoff;
    }
    return nullptr;
  }

  void wait(Duration max_wait) override {
    std::vector<pollfd> fds;
    fds.reserve(polled_->size() + 1);
    int timeout_ms =
        static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(max_wait).count());
    if (accept_paused_until_) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(
          *accept_paused_until_ - std::chrono::steady_clock::now());
      timeout_ms = std::max(0, std::min<int>(timeout_ms, static_cast<int>(left.count())));
    } else {
      fds.push_back(pollfd{fd_, POLLIN, 0});
    }
    for (const auto& [fd, events] : *polled_) {
      fds.push_back(pollfd{fd, events, 0});
    }
    for (const int fd : watched_) {
      fds.push_back(pollfd{fd, POLLIN, 0});
    }
    static_cast<void>(::poll(fds.data(), fds.size(), timeout_ms));
  }

  std::string summary() const override {
    return fmt::format("accept failures {}", accept_failures_);
  }
  void watch(int fd) override { watched_.push_back(fd); }
  void unwatch(int fd) override {
    watched_.erase(std::remove(watched_.begin(), watched_.end(), fd), watched_.end());
  }

 private:
  int fd_;
  std::shared_ptr<PollSet> polled_;
  std::vector<int> watched_;
  std::optional<std::chrono::steady_clock::time_point> accept_paused_until_;
  uint64_t accept_failures_ = 0;
};

}  // namespace

StepOutcome step_stack_stream(stack::Host& host, stack::SocketId id, const PumpIo& io, Instant now,
                              size_t output_slice) {
  StepOutcome out;
  size_t written = 0;
  for (bool moved = true; moved;) {
    moved = false;
    for (std::string_view data = io.output(); !data.empty() && written < output_slice;
         data = io.output()) {
      const size_t n = host.write(id, data.substr(0, output_slice - written), now);
      if (n == 0) {
        break;
      }
      io.consume(n);
      written += n;
      moved = true;
    }
    for (std::string_view in = host.peek(id); !in.empty() && (!io.wants_input || io.wants_input());
         in = host.peek(id)) {
      io.input(in);
      host.consume(id, in.size(), now);
      moved = true;
    }
    out.progress = out.progress || moved;
  }
  out.more_output = written >= output_slice;
  if (io.done()) {
    out.end = PumpOutcome{PumpResult::Done, {}};
    return out;
  }
  const auto info = host.info(id);
  if (!info) {
    out.end = PumpOutcome{PumpResult::Error, "connection lost"};
  } else if (info->state == tcp::TcpState::Closed) {
    const auto reason = info->close_reason.value_or(tcp::CloseReason::Normal);
    out.end =
        PumpOutcome{reason == tcp::CloseReason::Normal ? PumpResult::PeerClosed : PumpResult::Error,
                    fmt::format("connection closed: {}", tcp::to_string(reason))};
  } else if (info->peer_finished) {
    out.end = PumpOutcome{PumpResult::PeerClosed, "the peer closed the connection"};
  }
  return out;
}

std::unique_ptr<StreamServer> serve_streams(const TransportOptions& options, uint16_t port,
                                            const ServerLimits& limits) {
  if (options.transport == "kernel") {
    return std::make_unique<KernelStreamServer>(port, limits);
  }
  if (options.transport == "udp") {
    return std::make_unique<UdpStreamServer>(options, port, limits);
  }
  return std::make_unique<TunStreamServer>(options, port, limits);
}

}  // namespace tinytcp::apps
