#include "common/stream_end.hh"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sys/uio.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "common/kernel_tcp.hh"
#include "stack/peer_hosts.hh"

namespace tinytcp::apps {

namespace {

// Bytes of the endpoint's output moved per pass, and input read per pass
// from a kernel socket: enough for throughput, small enough that one busy
// stream does not keep the loop from the others.
constexpr size_t kOutputSlice = 256 * 1024;
constexpr size_t kKernelReadPerPass = 1 << 20;
constexpr size_t kKernelReadBuffer = 256 * 1024;
// Pieces of output (PumpIo::output_pieces) per sendmsg: 32 DATA frames of a
// robust session, header and body each.
constexpr size_t kMaxSendPieces = 64;

// Where every kernel stream of this thread reads into: the bytes go to the
// endpoint's input at once. One per stream cost a 256 KiB allocation, zeroed
// and page-faulted in, per connection (tt-tunnel CRR: page faults and memset
// were a fifth of each tunnel process's samples, docs/session.md "Per-connection cost").
std::string& kernel_read_buffer() {
  thread_local std::string buffer(kKernelReadBuffer, '\0');
  return buffer;
}

// A socket on a Host that may go away (a udp peer that was forgotten).
class StackStream : public StreamEnd {
 public:
  StackStream(std::function<stack::Host*()> host, std::function<Instant()> now,
              std::function<void()> flush, stack::SocketId id, const stack::IpAddress& address,
              uint16_t port)
      : host_(std::move(host)),
        now_(std::move(now)),
        flush_(std::move(flush)),
        id_(id),
        address_(address),
        peer_(endpoint_text(address, port)) {}
  ~StackStream() override {
    if (open_) {
      abort();
    }
  }

  const std::string& peer() const override { return peer_; }
  stack::IpAddress peer_address() const override { return address_; }

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

  uint64_t unacknowledged() override {
    stack::Host* host = host_();
    const auto* c = host != nullptr ? host->connection(id_) : nullptr;
    return c != nullptr ? c->sender().outbound().bytes_buffered() : 0;
  }

 private:
  std::function<stack::Host*()> host_;
  std::function<Instant()> now_;
  std::function<void()> flush_;
  stack::SocketId id_;
  stack::IpAddress address_;
  std::string peer_;
  bool open_ = true;
  uint64_t last_unacknowledged_ = 0;
};

class KernelStream : public StreamEnd {
 public:
  KernelStream(int fd, std::shared_ptr<PollSet> polled, const stack::IpAddress& address,
               uint16_t port)
      : fd_(fd),
        polled_(std::move(polled)),
        address_(address),
        peer_(endpoint_text(address, port)) {
    (*polled_)[fd_] = POLLIN;
    unacknowledged_ = kernel_unacknowledged(fd_);
  }
  ~KernelStream() override { release(); }

  const std::string& peer() const override { return peer_; }
  stack::IpAddress peer_address() const override { return address_; }

  StepOutcome step(const PumpIo& io) override {
    StepOutcome out;
    if (fd_ < 0) {
      out.end = PumpOutcome{PumpResult::Error, "connection closed"};
      return out;
    }
    bool sent = false;
    for (;;) {
      const ssize_t n = send_some(io);
      if (n == 0) {
        break;
      }
      if (n > 0) {
        io.consume(static_cast<size_t>(n));
        out.progress = true;
        sent = true;
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
    std::string& buffer = kernel_read_buffer();
    for (size_t read = 0; read < kKernelReadPerPass && (!io.wants_input || io.wants_input());) {
      const ssize_t n = ::recv(fd_, buffer.data(), buffer.size(), MSG_DONTWAIT);
      if (n > 0) {
        io.input(std::string_view(buffer).substr(0, static_cast<size_t>(n)));
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
    // The kernel's send queue only grows by what we send: while it is empty
    // and nothing went out, there is no need to ask (an ioctl per stream per
    // pass was a quarter of the robust tt-tunnel client's system calls).
    if (sent || unacknowledged_ != 0) {
      if (const uint64_t queued = kernel_unacknowledged(fd_); queued != unacknowledged_) {
        unacknowledged_ = queued;
        out.progress = true;
      }
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

  uint64_t unacknowledged() override { return fd_ >= 0 ? kernel_unacknowledged(fd_) : 0; }

 private:
  // One send() of the output, or one sendmsg() of its pieces; 0 when there
  // is nothing to send (or the kernel took nothing).
  ssize_t send_some(const PumpIo& io) {
    std::array<std::string_view, kMaxSendPieces> pieces;
    size_t count = 0;
    if (io.output_pieces) {
      count = io.output_pieces(pieces.data(), pieces.size());
    } else if (pieces[0] = io.output(); !pieces[0].empty()) {
      count = 1;
    }
    if (count == 0) {
      return 0;
    }
    if (count == 1) {
      return ::send(fd_, pieces[0].data(), pieces[0].size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    std::array<iovec, kMaxSendPieces> iov{};
    for (size_t i = 0; i < count; ++i) {
      iov[i].iov_base = const_cast<char*>(pieces[i].data());  // sendmsg does not write
      iov[i].iov_len = pieces[i].size();
    }
    msghdr message{};
    message.msg_iov = iov.data();
    message.msg_iovlen = count;
    return ::sendmsg(fd_, &message, MSG_NOSIGNAL | MSG_DONTWAIT);
  }

  int fd_;
  std::shared_ptr<PollSet> polled_;
  stack::IpAddress address_;
  std::string peer_;
  uint64_t unacknowledged_ = 0;
};

}  // namespace

void LoopWatches::watch(io::EventLoop& loop, int fd, uint32_t events) {
  if (events == 0) {
    // epoll reports a hang-up whatever was asked (see append_wanted).
    unwatch(loop, fd);
    return;
  }
  if (fds_.insert(fd).second) {
    loop.add_fd(fd, events, [](uint32_t) {});
  } else {
    loop.modify_fd(fd, events);
  }
}

void append_wanted(std::vector<pollfd>& fds, const std::map<int, short>& polled) {
  for (const auto& [fd, events] : polled) {
    if (events != 0) {
      fds.push_back(pollfd{fd, events, 0});
    }
  }
}

void LoopWatches::unwatch(io::EventLoop& loop, int fd) {
  if (fds_.erase(fd) != 0) {
    loop.remove_fd(fd);
  }
}

short poll_events(uint32_t events) {
  return static_cast<short>(((events & io::EventLoop::kReadable) != 0 ? POLLIN : 0) |
                            ((events & io::EventLoop::kWritable) != 0 ? POLLOUT : 0));
}

std::string endpoint_text(const stack::IpAddress& address, uint16_t port) {
  return stack::PeerKey{address, port}.to_string();
}

namespace {

// The endpoint's output for a Host write. Its pieces (a robust session's
// 5-byte DATA header, then the body in the replay buffer) go in one write:
// each write pushes segments at once, and a header on its own would leave
// as a segment of its own.
std::string_view gathered_output(const PumpIo& io, size_t max) {
  if (!io.output_pieces) {
    return io.output();
  }
  std::array<std::string_view, kMaxSendPieces> pieces;
  const size_t count = io.output_pieces(pieces.data(), pieces.size());
  if (count <= 1) {
    return count == 1 ? pieces[0] : std::string_view();
  }
  thread_local std::string gathered;
  gathered.clear();
  for (size_t i = 0; i < count && gathered.size() < max; ++i) {
    gathered.append(pieces[i].substr(0, max - gathered.size()));
  }
  return gathered;
}

}  // namespace

StepOutcome step_stack_stream(stack::Host& host, stack::SocketId id, const PumpIo& io, Instant now,
                              size_t output_slice) {
  StepOutcome out;
  size_t written = 0;
  for (bool moved = true; moved;) {
    moved = false;
    for (std::string_view data = gathered_output(io, output_slice - written);
         !data.empty() && written < output_slice;
         data = gathered_output(io, output_slice - written)) {
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

std::unique_ptr<StreamEnd> make_stack_stream(std::function<stack::Host*()> host,
                                             std::function<Instant()> now,
                                             std::function<void()> flush, stack::SocketId id,
                                             const stack::IpAddress& address, uint16_t port) {
  return std::make_unique<StackStream>(std::move(host), std::move(now), std::move(flush), id,
                                       address, port);
}

std::unique_ptr<StreamEnd> make_kernel_stream(int fd, std::shared_ptr<PollSet> polled,
                                              const stack::IpAddress& address, uint16_t port) {
  return std::make_unique<KernelStream>(fd, std::move(polled), address, port);
}

}  // namespace tinytcp::apps
