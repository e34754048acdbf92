#include "common/stream_client.hh"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "common/kernel_tcp.hh"
#include "common/robust_streams.hh"
#include "runtime/stack_runtime.hh"

namespace tinytcp::apps {

namespace {

// ---------------------------------------------------------------- tinytcp

// udp and tun: one Host, a connection per connect(). renew() replaces the
// runtime; streams of an older one see their Host gone.
class StackStreamClient : public StreamClient {
 public:
  StackStreamClient(const TransportOptions& options, const HostPort& to) {
    runtime_options_ = runtime_options(options, false);
    if (options.transport == "udp") {
      runtime_options_.dev = udp_device(to);
      remote_ = tunnel_receiver_address();
    } else {
      // tun: an IPv6 address connects over IPv6, from the Host's IPv6
      // address on the device (when StackRuntime gives it one).
      const auto address = stack::IpAddress::parse(to.host);
      if (!address) {
        throw std::runtime_error(
            fmt::format("--to {}: the tun transport needs an IP address", to.host));
      }
      remote_ = *address;
    }
    port_ = to.port;
    renew();
  }

  std::unique_ptr<StreamEnd> connect(std::string& error) override {
    auto runtime = runtime_;
    const auto id = runtime->host().connect(remote_, port_, runtime->now());
    if (!id) {
      error = fmt::format("cannot open a connection: {}", stack::to_string(id.error()));
      return nullptr;
    }
    auto current = current_;
    return make_stack_stream(
        [runtime, current]() -> stack::Host* {
          return *current == runtime.get() ? &runtime->host() : nullptr;
        },
        [runtime] { return runtime->now(); }, [runtime] { runtime->flush(); }, *id, remote_, port_);
  }

  void wait(Duration max_wait) override { runtime_->loop().run_once(max_wait); }
  void watch(int fd, uint32_t events) override {
    events_[fd] = events;
    watched_.watch(runtime_->loop(), fd, events);
  }
  void unwatch(int fd) override {
    events_.erase(fd);
    watched_.unwatch(runtime_->loop(), fd);
  }

  void renew() override {
    // The new runtime first: if it cannot be made (no route), the old one stays.
    auto fresh = std::make_shared<runtime::StackRuntime>(runtime_options_);
    if (runtime_) {
      for (const auto& [fd, events] : events_) {
        watched_.unwatch(runtime_->loop(), fd);
      }
    }
    runtime_ = std::move(fresh);
    *current_ = runtime_.get();
    ++renewals_;
    for (const auto& [fd, events] : events_) {
      watched_.watch(runtime_->loop(), fd, events);
    }
  }

  std::string summary() const override {
    const auto& s = runtime_->host().stats();
    return fmt::format("connections opened {}, dropped {}, tunnel sockets {}", s.connections_opened,
                       s.drops.total(), renewals_);
  }

 private:
  runtime::RuntimeOptions runtime_options_;
  stack::IpAddress remote_;
  uint16_t port_ = 0;
  std::shared_ptr<runtime::StackRuntime> runtime_;
  std::shared_ptr<runtime::StackRuntime*> current_ =
      std::make_shared<runtime::StackRuntime*>(nullptr);
  LoopWatches watched_;
  std::map<int, uint32_t> events_;
  uint64_t renewals_ = 0;
};

// ---------------------------------------------------------------- kernel

class KernelStreamClient : public StreamClient {
 public:
  KernelStreamClient(const TransportOptions& options, const HostPort& to)
      : options_(options), polled_(std::make_shared<PollSet>()) {
    to_ = resolve(to);
  }

  std::unique_ptr<StreamEnd> connect(std::string& error) override {
    const int fd = ::socket(to_.family(), SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
      error = fmt::format("cannot open a connection: socket: {}", std::strerror(errno));
      return nullptr;
    }
    set_no_delay(fd);
    if (!options_.cc.empty() && ::setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, options_.cc.data(),
                                             static_cast<socklen_t>(options_.cc.size())) != 0) {
      error = fmt::format("kernel congestion control '{}': {}", options_.cc, std::strerror(errno));
      ::close(fd);
      return nullptr;
    }
    if (::connect(fd, to_.get(), to_.length) != 0 && errno != EINPROGRESS) {
      error = fmt::format("cannot open a connection: connect: {}", std::strerror(errno));
      ::close(fd);
      return nullptr;
    }
    auto stream = make_kernel_stream(fd, polled_, to_.ip(), to_.port());
    // Until the handshake completes, POLLOUT says it did (or failed).
    (*polled_)[fd] = POLLIN | POLLOUT;
    return stream;
  }

  void wait(Duration max_wait) override {
    std::vector<pollfd> fds;
    fds.reserve(polled_->size() + watched_.size());
    append_wanted(fds, *polled_);
    append_wanted(fds, watched_);
    const auto ms = std::chrono::ceil<std::chrono::milliseconds>(max_wait).count();
    static_cast<void>(::poll(fds.data(), fds.size(), static_cast<int>(ms)));
  }
  void watch(int fd, uint32_t events) override { watched_[fd] = poll_events(events); }
  void unwatch(int fd) override { watched_.erase(fd); }
  std::string summary() const override { return fmt::format("connections {}", polled_->size()); }

 private:
  TransportOptions options_;
  SocketAddress to_;
  std::shared_ptr<PollSet> polled_;
  PollSet watched_;
};

}  // namespace

std::unique_ptr<StreamClient> connect_streams(const TransportOptions& options, const HostPort& to) {
  std::unique_ptr<StreamClient> carriers;
  if (options.transport == "kernel") {
    carriers = std::make_unique<KernelStreamClient>(options, to);
  } else {
    carriers = std::make_unique<StackStreamClient>(options, to);
  }
  return options.robust
             ? robust_client(std::move(carriers), options.session, options.passivate_after)
             : std::move(carriers);
}

}  // namespace tinytcp::apps
