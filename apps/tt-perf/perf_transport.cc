#include "tt-perf/perf_transport.hh"

#include <arpa/inet.h>
#include <linux/tcp.h>  // tcp_info with tcpi_segs_out/in (glibc's lacks them)
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "common/kernel_tcp.hh"
#include "common/robust_streams.hh"
#include "common/sender_trace.hh"
#include "runtime/stack_runtime.hh"

namespace tinytcp::apps {

namespace {

// ---------------------------------------------------------------- tinytcp

class CountingStackClient : public StreamClient, public PacketCounter {
 public:
  CountingStackClient(const TransportOptions& options, const HostPort& to) {
    runtime::RuntimeOptions runtime = runtime_options(options, false);
    if (options.transport == "udp") {
      runtime.dev = udp_device(to);
      remote_ = tunnel_receiver_address();
    } else {
      const auto address = stack::IpAddress::parse(to.host);
      if (!address) {
        throw std::runtime_error(
            fmt::format("--to {}: the tun transport needs an IP address", to.host));
      }
      remote_ = *address;
    }
    port_ = to.port;
    runtime_ = std::make_shared<runtime::StackRuntime>(runtime);
    if (!options.trace.empty()) {
      trace_ = std::make_shared<SenderTrace>(options.trace);
    }
  }

  std::unique_ptr<StreamEnd> connect(std::string& error) override {
    auto runtime = runtime_;
    const auto id = runtime->host().connect(remote_, port_, runtime->now());
    if (!id) {
      error = fmt::format("cannot open a connection: {}", stack::to_string(id.error()));
      return nullptr;
    }
    if (trace_) {
      // The first connection only: a CSV of one sender's state over time.
      SenderTrace::attach(std::move(trace_), runtime->host(), *id);
    }
    return make_stack_stream([runtime]() -> stack::Host* { return &runtime->host(); },
                             [runtime] { return runtime->now(); }, [runtime] { runtime->flush(); },
                             *id, remote_, port_);
  }

  void wait(Duration max_wait) override { runtime_->loop().run_once(max_wait); }
  void watch(int fd, uint32_t events) override { watched_.watch(runtime_->loop(), fd, events); }
  void unwatch(int fd) override { watched_.unwatch(runtime_->loop(), fd); }
  std::string summary() const override {
    const auto& s = runtime_->host().stats();
    return fmt::format("connections opened {}, dropped {}", s.connections_opened, s.drops.total());
  }

  PacketCounts packets() const override {
    const auto& s = runtime_->host().stats();
    return PacketCounts{s.datagrams_out, s.datagrams_in, 0};
  }
  const char* method() const override {
    return "tinytcp Host counters (IPv4 datagrams the stack sent and received)";
  }

 private:
  stack::IpAddress remote_;
  uint16_t port_ = 0;
  std::shared_ptr<runtime::StackRuntime> runtime_;
  std::shared_ptr<SenderTrace> trace_;  // until the first connection takes it
  LoopWatches watched_;
};

// ---------------------------------------------------------------- kernel

struct KernelTotals {
  PacketCounts closed;  // of connections already closed
  std::set<int> open;   // connections to read at report time
};

PacketCounts read_tcp_info(int fd) {
  tcp_info info{};
  socklen_t len = sizeof info;
  if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0) {
    return {};
  }
  return PacketCounts{info.tcpi_segs_out, info.tcpi_segs_in, info.tcpi_total_retrans};
}

void add(PacketCounts& to, const PacketCounts& more) {
  to.sent += more.sent;
  to.received += more.received;
  to.retransmits += more.retransmits;
}

// A kernel stream that adds its TCP_INFO counters to the totals before it lets
// go of its socket.
class CountedKernelStream : public StreamEnd {
 public:
  CountedKernelStream(std::unique_ptr<StreamEnd> inner, int fd,
                      std::shared_ptr<KernelTotals> totals)
      : inner_(std::move(inner)), fd_(fd), totals_(std::move(totals)) {
    totals_->open.insert(fd_);
  }
  ~CountedKernelStream() override { count(); }

  const std::string& peer() const override { return inner_->peer(); }
  stack::IpAddress peer_address() const override { return inner_->peer_address(); }
  StepOutcome step(const PumpIo& io) override { return inner_->step(io); }
  void shutdown_write() override { inner_->shutdown_write(); }
  bool closed() override { return inner_->closed(); }
  void release() override {
    count();
    inner_->release();
  }
  void abort() override {
    count();
    inner_->abort();
  }
  uint64_t unacknowledged() override { return inner_->unacknowledged(); }

 private:
  void count() {
    if (fd_ >= 0) {
      add(totals_->closed, read_tcp_info(fd_));
      totals_->open.erase(fd_);
      fd_ = -1;
    }
  }

  std::unique_ptr<StreamEnd> inner_;
  int fd_;
  std::shared_ptr<KernelTotals> totals_;
};

class CountingKernelClient : public StreamClient, public PacketCounter {
 public:
  CountingKernelClient(const TransportOptions& options, const HostPort& to)
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
    (*polled_)[fd] = POLLIN | POLLOUT;  // until the handshake completes
    return std::make_unique<CountedKernelStream>(std::move(stream), fd, totals_);
  }

  void wait(Duration max_wait) override {
    std::vector<pollfd> fds;
    fds.reserve(polled_->size() + watched_.size());
    for (const auto& [fd, events] : *polled_) {
      fds.push_back(pollfd{fd, events, 0});
    }
    for (const auto& [fd, events] : watched_) {
      fds.push_back(pollfd{fd, events, 0});
    }
    const auto ms = std::chrono::ceil<std::chrono::milliseconds>(max_wait).count();
    static_cast<void>(::poll(fds.data(), fds.size(), static_cast<int>(ms)));
  }
  void watch(int fd, uint32_t events) override { watched_[fd] = poll_events(events); }
  void unwatch(int fd) override { watched_.erase(fd); }
  std::string summary() const override { return fmt::format("connections {}", polled_->size()); }

  PacketCounts packets() const override {
    PacketCounts total = totals_->closed;
    for (const int fd : totals_->open) {
      add(total, read_tcp_info(fd));
    }
    return total;
  }
  const char* method() const override {
    return "kernel TCP_INFO per connection (tcpi_segs_out/in, read before close)";
  }

 private:
  TransportOptions options_;
  SocketAddress to_;
  std::shared_ptr<PollSet> polled_;
  PollSet watched_;
  std::shared_ptr<KernelTotals> totals_ = std::make_shared<KernelTotals>();
};

}  // namespace

PerfTransport open_perf_transport(const TransportOptions& options, const HostPort& to) {
  PerfTransport t;
  std::unique_ptr<StreamClient> carriers;
  if (options.transport == "kernel") {
    auto client = std::make_unique<CountingKernelClient>(options, to);
    t.counter = client.get();
    carriers = std::move(client);
  } else {
    auto client = std::make_unique<CountingStackClient>(options, to);
    t.counter = client.get();
    carriers = std::move(client);
  }
  t.client = options.robust
                 ? robust_client(std::move(carriers), options.session, options.passivate_after)
                 : std::move(carriers);
  return t;
}

}  // namespace tinytcp::apps
