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
#include "common/robust_streams.hh"
#include "io/impairment_spec.hh"
#include "runtime/peer_runtime.hh"
#include "runtime/stack_runtime.hh"
#include "stack/peer_hosts.hh"

namespace tinytcp::apps {

namespace {

// After accept() failed for want of file descriptors (EMFILE, ENFILE), the
// listening socket is left alone this long instead of being retried at once.
constexpr Duration kAcceptBackoff = std::chrono::milliseconds(100);

// ---------------------------------------------------------------- tinytcp

// udp: one Host per peer on one UDP port.
class UdpStreamServer : public StreamServer {
 public:
  UdpStreamServer(const TransportOptions& options, const HostPort& at, const ServerLimits& limits) {
    const uint16_t port = at.port;
    runtime::PeerRuntimeOptions o;
    if (!options.impair.empty()) {
      auto impair = io::parse_impairment(options.impair);
      if (!impair) {
        throw std::runtime_error(fmt::format("impairment: {}", impair.error()));
      }
      o.impair_in = *impair;
      o.impair_out = *impair;
      o.seed = options.seed;
    }
    // Every address: [::] for both families (io::UdpSocketConfig::dual_stack).
    o.socket.local = io::UdpEndpoint{0, port};
    if (!at.host.empty()) {
      o.socket.local = *io::UdpEndpoint::parse_address(resolve_address(at.host), port);
    }
    o.pcap = options.pcap;
    o.peers.host.address = tunnel_receiver_address();
    o.peers.host.tcp = transfer_tcp_config(options);
    o.peers.host.tcp.mss = static_cast<uint16_t>(o.socket.mtu - 40);
    // Per peer (file-recv: one session's connection and a spare), a few
    // TIME-WAITs each.
    o.peers.host.max_sockets = limits.sockets_per_peer;
    o.peers.host.max_time_wait = 4 * limits.sockets_per_peer;
    o.peers.ports = {port};
    o.peers.max_peers = limits.max_peers;
    o.peers.max_embryonic = limits.max_embryonic;
    runtime_ = std::make_shared<runtime::PeerRuntime>(o);
  }

  std::unique_ptr<StreamEnd> accept() override {
    const auto accepted = runtime_->peers().accept();
    if (!accepted) {
      return nullptr;
    }
    auto runtime = runtime_;
    const stack::PeerId peer = accepted->peer;
    return make_stack_stream([runtime, peer] { return runtime->peers().host(peer); },
                             [runtime] { return runtime->now(); }, [runtime] { runtime->flush(); },
                             accepted->socket, accepted->key.address, accepted->key.port);
  }

  void wait(Duration max_wait) override { runtime_->loop().run_once(max_wait); }
  void watch(int fd, uint32_t events) override { watched_.watch(runtime_->loop(), fd, events); }
  void unwatch(int fd) override { watched_.unwatch(runtime_->loop(), fd); }

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
  std::shared_ptr<runtime::PeerRuntime> runtime_;
  LoopWatches watched_;
};

// tun: many connections on the one Host of the device.
class TunStreamServer : public StreamServer {
 public:
  TunStreamServer(const TransportOptions& options, uint16_t port, const ServerLimits& limits)
      : runtime_(std::make_shared<runtime::StackRuntime>(runtime_options(options, true))) {
    const auto listener = runtime_->host().listen(port, limits.backlog);
    if (!listener) {
      throw std::runtime_error(
          fmt::format("cannot listen on port {}: {}", port, stack::to_string(listener.error())));
    }
    listener_ = *listener;
  }

  std::unique_ptr<StreamEnd> accept() override {
    const auto id = runtime_->host().accept(listener_);
    if (!id) {
      return nullptr;
    }
    const auto info = runtime_->host().info(*id);
    auto runtime = runtime_;
    return make_stack_stream([runtime] { return &runtime->host(); },
                             [runtime] { return runtime->now(); }, [runtime] { runtime->flush(); },
                             *id, info ? info->tuple.remote_ip : stack::IpAddress{},
                             info ? info->tuple.remote_port : 0);
  }

  void wait(Duration max_wait) override { runtime_->loop().run_once(max_wait); }
  void watch(int fd, uint32_t events) override { watched_.watch(runtime_->loop(), fd, events); }
  void unwatch(int fd) override { watched_.unwatch(runtime_->loop(), fd); }

  std::string summary() const override {
    const auto& s = runtime_->host().stats();
    return fmt::format("connections opened {}, dropped {}", s.connections_opened, s.drops.total());
  }

 private:
  std::shared_ptr<runtime::StackRuntime> runtime_;
  stack::SocketId listener_ = 0;
  LoopWatches watched_;
};

// ---------------------------------------------------------------- kernel

class KernelStreamServer : public StreamServer {
 public:
  KernelStreamServer(const HostPort& at, const ServerLimits& limits)
      : fd_(at.host.empty() ? listen_tcp(at.port, static_cast<int>(limits.backlog))
                            : listen_tcp(resolve(at), static_cast<int>(limits.backlog))),
        polled_(std::make_shared<PollSet>()) {
    ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);  // accept() must not wait
  }
  ~KernelStreamServer() override { ::close(fd_); }

  std::unique_ptr<StreamEnd> accept() override {
    if (accept_paused_until_ && std::chrono::steady_clock::now() < *accept_paused_until_) {
      return nullptr;
    }
    accept_paused_until_.reset();
    sockaddr_storage from{};
    socklen_t len = sizeof(from);
    const int fd =
        ::accept4(fd_, reinterpret_cast<sockaddr*>(&from), &len, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd >= 0) {
      set_no_delay(fd);
      const SocketAddress peer = SocketAddress::of(from, len);
      return make_kernel_stream(fd, polled_, peer.ip(), peer.port());
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
    append_wanted(fds, *polled_);
    append_wanted(fds, watched_);
    static_cast<void>(::poll(fds.data(), fds.size(), timeout_ms));
  }

  std::string summary() const override {
    return fmt::format("accept failures {}", accept_failures_);
  }
  void watch(int fd, uint32_t events) override { watched_[fd] = poll_events(events); }
  void unwatch(int fd) override { watched_.erase(fd); }

 private:
  int fd_;
  std::shared_ptr<PollSet> polled_;
  PollSet watched_;
  std::optional<std::chrono::steady_clock::time_point> accept_paused_until_;
  uint64_t accept_failures_ = 0;
};

}  // namespace

std::unique_ptr<StreamServer> serve_streams(const TransportOptions& options, const HostPort& at,
                                            const ServerLimits& limits) {
  std::unique_ptr<StreamServer> carriers;
  if (options.transport == "kernel") {
    carriers = std::make_unique<KernelStreamServer>(at, limits);
  } else if (options.transport == "udp") {
    carriers = std::make_unique<UdpStreamServer>(options, at, limits);
  } else if (!at.host.empty()) {
    throw std::runtime_error(
        fmt::format("--listen {}: an address is for the udp and kernel transports (tun: PORT)",
                    at.to_string()));
  } else {
    carriers = std::make_unique<TunStreamServer>(options, at.port, limits);
  }
  return options.robust ? robust_server(std::move(carriers), options.session) : std::move(carriers);
}

}  // namespace tinytcp::apps
