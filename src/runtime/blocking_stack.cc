#include "runtime/blocking_stack.hh"

#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "util/check.hh"

namespace tinytcp::runtime {

namespace {

constexpr size_t kChunk = 256 * 1024;  // bytes moved per read from the app
constexpr int kPairBuffer = 1 << 20;   // SO_SNDBUF of each end of the pair

}  // namespace

struct BlockingStack::Bridge {
  stack::SocketId id = 0;
  io::FileDescriptor end;                         // the stack's end of the pair (non-blocking)
  io::FileDescriptor app;                         // the app's end until it is handed out
  int app_fd = -1;                                // the app's end, also after it was handed out
  std::shared_ptr<std::promise<int>> connecting;  // a connect() waiting
  bool watched = false;
  uint32_t events = 0;
  bool app_eof = false;     // the app shut its write side (or closed)
  bool blocked = false;     // the pair is full towards the app
  bool fin_to_app = false;  // the peer's FIN was passed on
  bool app_closed = false;  // the app closed its fd: only `pending` is left to send
  std::string pending;      // what the app wrote before closing, from pending_pos on
  size_t pending_pos = 0;
};

BlockingStack::BlockingStack(RuntimeOptions options)
    : runtime_(std::make_unique<StackRuntime>(std::move(options))),
      wake_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)),
      buffer_(kChunk) {
  if (!wake_) {
    throw std::system_error(errno, std::generic_category(), "eventfd");
  }
  runtime_->host().set_event_callback(
      [this](stack::SocketId id, stack::SocketEvent event) { on_event(id, event); });
  runtime_->loop().add_fd(wake_.get(), io::EventLoop::kReadable, [this](uint32_t) {
    uint64_t count = 0;
    while (::read(wake_.get(), &count, sizeof count) > 0) {
    }
    on_commands();
  });
  thread_ = std::thread([this] { run(); });
}

BlockingStack::~BlockingStack() {
  post([this] { close_all(); });
  thread_.join();
  runtime_->loop().remove_fd(wake_.get());
}

// As a process's exit closes its kernel sockets: listeners stop, connections
// nobody accepted are reset, and every other connection is closed as if the
// app closed its fd (what it wrote is sent, then our FIN). The stack thread
// runs on until they have all finished or kCloseLinger has passed.
void BlockingStack::close_all() {
  auto& host = runtime_->host();
  const Instant now = runtime_->now();
  for (const auto& [port, listening] : listeners_) {
    host.close(listening.id, now);
  }
  listeners_.clear();
  std::vector<int> unaccepted;
  {
    std::lock_guard lock(mutex_);
    for (auto& [port, queue] : accepted_) {
      unaccepted.insert(unaccepted.end(), queue.begin(), queue.end());
      queue.clear();
    }
  }
  std::vector<stack::SocketId> ids;
  for (const auto& [id, bridge] : bridges_) {
    ids.push_back(id);
  }
  handling_ = true;
  for (const stack::SocketId id : ids) {
    const auto it = bridges_.find(id);
    if (it == bridges_.end()) {
      continue;
    }
    Bridge& b = *it->second;
    const bool queued =
        std::find(unaccepted.begin(), unaccepted.end(), b.app_fd) != unaccepted.end();
    if (queued || b.connecting) {
      host.abort(id, now);
      finish(id, {});
    } else if (!b.app_closed) {
      on_app_closed(b);
    }
  }
  drain();
  for (const int fd : unaccepted) {
    ::close(fd);
    ++stats_.closed_unaccepted;
  }
  spare_.reset();
  closing_ = true;
  runtime_->loop().add_timer_after(kCloseLinger, [this] { linger_over_ = true; });
}

// Past the linger, what is still open is reset.
void BlockingStack::abort_all() {
  std::vector<stack::SocketId> ids;
  for (const auto& [id, bridge] : bridges_) {
    ids.push_back(id);
  }
  handling_ = true;
  for (const stack::SocketId id : ids) {
    runtime_->host().abort(id, runtime_->now());
    finish(id, {});
  }
  drain();
}

void BlockingStack::post(std::function<void()> command) {
  {
    std::lock_guard lock(mutex_);
    commands_.push_back(std::move(command));
  }
  const uint64_t one = 1;
  (void)!::write(wake_.get(), &one, sizeof one);
}

void BlockingStack::run() {
  while (!quit_) {
    runtime_->loop().run_once();
    if (closing_ && (linger_over_ || runtime_->host().undelivered_count() == 0)) {
      abort_all();
      quit_ = true;
    }
  }
}

void BlockingStack::on_commands() {
  std::vector<std::function<void()>> commands;
  {
    std::lock_guard lock(mutex_);
    commands.swap(commands_);
  }
  handling_ = true;
  for (auto& command : commands) {
    command();
  }
  drain();
}

void BlockingStack::on_event(stack::SocketId id, stack::SocketEvent event) {
  events_.emplace_back(id, event);
  if (!handling_) {
    drain();
  }
}

// Host calls made while handling something deliver their events at their end;
// they are queued and handled here, one at a time, so no handler runs inside
// another and a bridge is never erased under a caller.
void BlockingStack::drain() {
  handling_ = true;
  while (!events_.empty()) {
    const auto [id, event] = events_.front();
    events_.pop_front();
    handle(id, event);
  }
  handling_ = false;
}

std::unique_ptr<BlockingStack::Bridge> BlockingStack::make_bridge() {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    return nullptr;
  }
  for (const int fd : pair) {
    ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &kPairBuffer, sizeof kPairBuffer);
  }
  auto bridge = std::make_unique<Bridge>();
  bridge->end.reset(pair[0]);
  bridge->app.reset(pair[1]);
  bridge->app_fd = pair[1];
  ::fcntl(pair[0], F_SETFL, ::fcntl(pair[0], F_GETFL) | O_NONBLOCK);
  return bridge;
}

BlockingStack::Bridge& BlockingStack::add_bridge(stack::SocketId id,
                                                 std::unique_ptr<Bridge> bridge) {
  bridge->id = id;
  {
    std::lock_guard lock(mutex_);
    errors_.erase(bridge->app_fd);
  }
  auto& b = *bridge;
  bridges_[id] = std::move(bridge);
  return b;
}

// Takes connections from the Host's listener while fewer than the backlog
// wait for accept(). The pair is made first, so a connection is only taken
// when it can be bridged; without fds it stays in the Host's backlog.
void BlockingStack::accept_from_host(uint16_t port) {
  const auto l = listeners_.find(port);
  if (l == listeners_.end()) {
    return;
  }
  Listening& listening = l->second;
  for (;;) {
    {
      std::lock_guard lock(mutex_);
      if (accepted_[port].size() >= listening.backlog) {
        return;
      }
    }
    if (!spare_) {
      spare_ = make_bridge();
      if (!spare_) {
        ++stats_.pair_failures;
        spdlog::debug("blocking stack: no socket pair for a connection to port {}: {}; retrying",
                      port, std::strerror(errno));
        if (!listening.retry_armed) {
          listening.retry_armed = true;
          runtime_->loop().add_timer_after(std::chrono::milliseconds(100), [this, port] {
            listeners_[port].retry_armed = false;
            handling_ = true;
            accept_from_host(port);
            drain();
          });
        }
        return;
      }
    }
    const auto accepted = runtime_->host().accept(listening.id);
    if (!accepted) {
      return;
    }
    Bridge& b = add_bridge(*accepted, std::move(spare_));
    {
      std::lock_guard lock(mutex_);
      accepted_[port].push_back(b.app.release());
    }
    accepted_cv_.notify_all();
    watch(b);
    to_app(b);
  }
}

// Readable from the app while the send buffer has room and the app has not
// finished; writable towards the app while it is full.
void BlockingStack::watch(Bridge& b) {
  if (b.app_closed) {
    return;
  }
  const auto info = runtime_->host().info(b.id);
  uint32_t events = 0;
  if (!b.app_eof && info && info->writable_bytes > 0) {
    events |= io::EventLoop::kReadable;
  }
  if (b.blocked) {
    events |= io::EventLoop::kWritable;
  }
  if (!b.watched) {
    const stack::SocketId id = b.id;
    runtime_->loop().add_fd(b.end.get(), events, [this, id](uint32_t ready) {
      on_ready(id, ready);
      drain();
    });
    b.watched = true;
    b.events = events;
  } else if (events != b.events) {
    runtime_->loop().modify_fd(b.end.get(), events);
    b.events = events;
  }
}

void BlockingStack::on_ready(stack::SocketId id, uint32_t ready) {
  handling_ = true;
  const auto it = bridges_.find(id);
  if (it == bridges_.end()) {
    return;
  }
  Bridge& bridge = *it->second;
  if (ready & io::EventLoop::kWritable) {
    bridge.blocked = false;
    to_app(bridge);
  }
  if (bridges_.count(id) != 0 && (ready & io::EventLoop::kReadable)) {
    from_app(bridge);
  }
  if (bridges_.count(id) != 0 && (ready & (io::EventLoop::kHangUp | io::EventLoop::kError))) {
    on_app_closed(bridge);
    return;
  }
  if (bridges_.count(id) != 0) {
    watch(bridge);
  }
}

void BlockingStack::from_app(Bridge& b) {
  auto& host = runtime_->host();
  while (!b.app_eof) {
    const auto info = host.info(b.id);
    if (!info || info->writable_bytes == 0) {
      return;
    }
    const size_t room = static_cast<size_t>(std::min<uint64_t>(info->writable_bytes, kChunk));
    const ssize_t n = ::read(b.end.get(), buffer_.data(), room);
    if (n > 0) {
      // info() and write() see the same writable_bytes: all of it is taken.
      const size_t taken = host.write(
          b.id, std::string_view(buffer_.data(), static_cast<size_t>(n)), runtime_->now());
      TINYTCP_DCHECK(taken == static_cast<size_t>(n));
    } else if (n == 0) {
      b.app_eof = true;
      host.shutdown_write(b.id, runtime_->now());
    } else if (errno == EINTR) {
      continue;
    } else {
      return;  // EAGAIN: nothing more now
    }
  }
}

// The app closed its fd. What it wrote is still in the pair, maybe more than
// the send buffer takes now: take all of it (the pair's buffers bound it) and
// send it before our FIN, or the peer would see a normal end of a truncated
// stream.
void BlockingStack::on_app_closed(Bridge& b) {
  if (b.watched) {
    runtime_->loop().remove_fd(b.end.get());
    b.watched = false;
  }
  b.app_closed = true;
  while (!b.app_eof) {
    const ssize_t n = ::read(b.end.get(), buffer_.data(), buffer_.size());
    if (n > 0) {
      if (b.pending.size() + static_cast<size_t>(n) > kMaxFlushBytes) {
        ++stats_.reset_after_close;
        const stack::SocketId id = b.id;
        runtime_->host().abort(id, runtime_->now());
        finish(id, {});
        return;
      }
      b.pending.append(buffer_.data(), static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      b.app_eof = true;  // EOF, or an error: nothing more will come
    }
  }
  if (!b.pending.empty()) {
    ++stats_.flushed_after_close;
  }
  flush_after_close(b);
}

void BlockingStack::flush_after_close(Bridge& b) {
  auto& host = runtime_->host();
  while (b.pending_pos < b.pending.size()) {
    const size_t n =
        host.write(b.id, std::string_view(b.pending).substr(b.pending_pos), runtime_->now());
    if (n == 0) {
      return;  // continue on Writable
    }
    b.pending_pos += n;
  }
  // Our FIN after every byte; a RST instead if the peer's bytes went unread.
  const stack::SocketId id = b.id;
  host.close(id, runtime_->now());
  finish(id, {});
}

void BlockingStack::to_app(Bridge& b) {
  if (b.app_closed) {
    return;  // nobody reads: left to Host::close
  }
  auto& host = runtime_->host();
  for (std::string_view data = host.peek(b.id); !data.empty(); data = host.peek(b.id)) {
    const ssize_t n = ::send(b.end.get(), data.data(), data.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n > 0) {
      host.consume(b.id, static_cast<size_t>(n), runtime_->now());
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      b.blocked = true;
      return;
    } else {
      on_app_closed(b);  // EPIPE: the app closed its end
      return;
    }
  }
  const auto info = host.info(b.id);
  if (!b.fin_to_app && info && info->peer_finished) {
    ::shutdown(b.end.get(), SHUT_WR);
    b.fin_to_app = true;
  }
}

void BlockingStack::handle(stack::SocketId id, stack::SocketEvent event) {
  if (event == stack::SocketEvent::Acceptable) {
    for (const auto& [port, listening] : listeners_) {
      if (listening.id == id) {
        accept_from_host(port);
        break;
      }
    }
    return;
  }
  const auto it = bridges_.find(id);
  if (it == bridges_.end()) {
    return;
  }
  Bridge& b = *it->second;
  switch (event) {
    case stack::SocketEvent::Connected:
      if (b.connecting) {
        b.connecting->set_value(b.app.release());
        b.connecting.reset();
      }
      watch(b);
      break;
    case stack::SocketEvent::Readable:
      to_app(b);
      break;
    case stack::SocketEvent::Writable:
      if (b.app_closed) {
        flush_after_close(b);
        return;
      }
      from_app(b);
      break;
    case stack::SocketEvent::Closed: {
      to_app(b);
      if (bridges_.count(id) == 0) {
        return;
      }
      const auto info = runtime_->host().info(id);
      const auto reason =
          info && info->close_reason ? *info->close_reason : tcp::CloseReason::Normal;
      runtime_->host().close(id, runtime_->now());  // release the id
      finish(id, reason == tcp::CloseReason::Normal ? std::string{} : tcp::to_string(reason));
      return;
    }
    case stack::SocketEvent::Acceptable:
      break;
  }
  if (bridges_.count(id) != 0) {
    watch(b);
  }
}

void BlockingStack::finish(stack::SocketId id, const std::string& error) {
  const auto it = bridges_.find(id);
  if (it == bridges_.end()) {
    return;
  }
  Bridge& b = *it->second;
  if (b.connecting) {
    b.connecting->set_exception(
        std::make_exception_ptr(std::runtime_error(error.empty() ? "connection closed" : error)));
  }
  if (!error.empty() && !b.connecting) {
    std::lock_guard lock(mutex_);
    errors_[b.app_fd] = error;
  }
  if (b.watched) {
    runtime_->loop().remove_fd(b.end.get());
  }
  bridges_.erase(it);  // closes our end: the app reads what is queued, then EOF
}

int BlockingStack::connect(wire::Ipv4Address remote, uint16_t port, Duration timeout) {
  auto promise = std::make_shared<std::promise<int>>();
  auto result = promise->get_future();
  auto id = std::make_shared<stack::SocketId>(0);
  post([this, promise, id, remote, port] {
    auto bridge = make_bridge();
    if (!bridge) {
      ++stats_.pair_failures;
      promise->set_exception(std::make_exception_ptr(
          std::runtime_error(fmt::format("no socket pair: {}", std::strerror(errno)))));
      return;
    }
    const auto socket = runtime_->host().connect(remote, port, runtime_->now());
    if (!socket) {
      promise->set_exception(
          std::make_exception_ptr(std::runtime_error(stack::to_string(socket.error()))));
      return;
    }
    *id = *socket;
    add_bridge(*socket, std::move(bridge)).connecting = promise;
  });
  const auto what = [&](const std::string& why) {
    return std::runtime_error(fmt::format("cannot reach {}:{}: {}", remote, port, why));
  };
  if (result.wait_for(timeout) != std::future_status::ready) {
    // Give up, unless it connected just now.
    const bool connected = with_host([&](stack::Host& host) {
      const auto it = bridges_.find(*id);
      if (it == bridges_.end() || !it->second->connecting) {
        return true;  // settled meanwhile: the future holds the outcome
      }
      it->second->connecting.reset();
      host.abort(*id, runtime_->now());
      finish(*id, {});
      return false;
    });
    if (!connected) {
      throw what(fmt::format("no answer in {:.1f} s", to_seconds(timeout)));
    }
  }
  try {
    return result.get();
  } catch (const std::exception& e) {
    throw what(e.what());
  }
}

void BlockingStack::listen(uint16_t port, size_t backlog) {
  const auto error = with_host([&](stack::Host& host) -> std::optional<std::string> {
    const auto listener = host.listen(port, backlog);
    if (!listener) {
      return std::string(stack::to_string(listener.error()));
    }
    listeners_[port] =
        Listening{*listener, backlog != 0 ? backlog : host.config().default_backlog, false};
    return std::nullopt;
  });
  if (error) {
    throw std::runtime_error(fmt::format("cannot listen on port {}: {}", port, *error));
  }
}

int BlockingStack::accept(uint16_t port, Duration timeout) {
  int fd = -1;
  {
    std::unique_lock lock(mutex_);
    auto& queue = accepted_[port];
    if (!accepted_cv_.wait_for(lock, timeout, [&] { return !queue.empty(); })) {
      return -1;
    }
    fd = queue.front();
    queue.pop_front();
  }
  post([this, port] { accept_from_host(port); });  // room for one more
  return fd;
}

std::string BlockingStack::last_error(int fd) const {
  std::lock_guard lock(mutex_);
  const auto it = errors_.find(fd);
  return it == errors_.end() ? std::string{} : it->second;
}

}  // namespace tinytcp::runtime
