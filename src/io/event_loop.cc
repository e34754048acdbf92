#include "io/event_loop.hh"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <array>
#include <cerrno>

#include <spdlog/spdlog.h>

#include "io/system_clock.hh"

namespace tinytcp::io {
namespace {

static_assert(EventLoop::kReadable == EPOLLIN && EventLoop::kWritable == EPOLLOUT &&
              EventLoop::kError == EPOLLERR && EventLoop::kHangUp == EPOLLHUP);

constexpr int kWakeFd = -1;  // the epoll data of the stop eventfd

uint64_t pack(int fd, uint32_t generation) {
  return (uint64_t{generation} << 32) | static_cast<uint32_t>(fd);
}

}  // namespace

EventLoop::EventLoop()
    : epoll_(::epoll_create1(EPOLL_CLOEXEC)), wake_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
  if (!epoll_) {
    throw_errno("epoll_create1");
  }
  if (!wake_) {
    throw_errno("eventfd for EventLoop::stop");
  }
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = pack(kWakeFd, 0);
  if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, wake_.get(), &ev) < 0) {
    throw_errno("epoll_ctl add eventfd");
  }
}

EventLoop::~EventLoop() = default;

Instant EventLoop::now() const {
  return monotonic_now();
}

void EventLoop::add_fd(int fd, uint32_t events, FdCallback callback) {
  const uint32_t generation = next_generation_++;
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = pack(fd, generation);
  if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &ev) < 0) {
    throw_errno("epoll_ctl add fd " + std::to_string(fd));
  }
  fds_[fd] = FdEntry{generation, std::make_shared<FdCallback>(std::move(callback))};
}

void EventLoop::modify_fd(int fd, uint32_t events) {
  const auto it = fds_.find(fd);
  if (it == fds_.end()) {
    throw_errno(ENOENT, "EventLoop::modify_fd " + std::to_string(fd));
  }
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = pack(fd, it->second.generation);
  if (::epoll_ctl(epoll_.get(), EPOLL_CTL_MOD, fd, &ev) < 0) {
    throw_errno("epoll_ctl mod fd " + std::to_string(fd));
  }
}

void EventLoop::remove_fd(int fd) {
  if (fds_.erase(fd) == 0) {
    return;
  }
  // The generation in pending events no longer matches, so an event already
  // returned by epoll for this fd (or a new fd with the same number) is ignored.
  static_cast<void>(::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, fd, nullptr));
}

EventLoop::TimerId EventLoop::add_timer(Instant at, TimerCallback callback) {
  const TimerId id = next_timer_++;
  timers_.emplace(std::make_pair(at, id), std::move(callback));
  timer_due_.emplace(id, at);
  return id;
}

bool EventLoop::cancel_timer(TimerId id) {
  const auto it = timer_due_.find(id);
  if (it == timer_due_.end()) {
    return false;
  }
  timers_.erase(std::make_pair(it->second, id));
  timer_due_.erase(it);
  return true;
}

EventLoop::SourceId EventLoop::add_deadline_source(NextDeadline next_deadline,
                                                   OnDeadline on_deadline) {
  const SourceId id = next_source_++;
  sources_.emplace(id, std::make_shared<Source>(
                           Source{std::move(next_deadline), std::move(on_deadline), false}));
  return id;
}

void EventLoop::remove_deadline_source(SourceId id) {
  const auto it = sources_.find(id);
  if (it != sources_.end()) {
    it->second->removed = true;  // a pass already under way skips it
    sources_.erase(it);
  }
}

EventLoop::SourceId EventLoop::add_before_wait(std::function<void()> callback) {
  const SourceId id = next_source_++;
  before_wait_.emplace(id, std::move(callback));
  return id;
}

void EventLoop::remove_before_wait(SourceId id) {
  before_wait_.erase(id);
}

EventLoop::SourceId EventLoop::add_adapter(DatagramAdapter& adapter, PacketHandler on_packet) {
  auto handler = std::make_shared<PacketHandler>(std::move(on_packet));
  if (adapter.fd() >= 0) {
    add_fd(adapter.fd(), kReadable,
           [&adapter, handler](uint32_t) { adapter.receive_batch(*handler); });
  }
  return add_deadline_source([&adapter] { return adapter.next_deadline(); },
                             [&adapter, handler](Instant) { adapter.receive_batch(*handler); });
}

void EventLoop::remove_adapter(DatagramAdapter& adapter, SourceId id) {
  if (adapter.fd() >= 0) {
    remove_fd(adapter.fd());
  }
  remove_deadline_source(id);
}

std::optional<Instant> EventLoop::earliest_deadline() {
  std::optional<Instant> earliest;
  if (!timers_.empty()) {
    earliest = timers_.begin()->first.first;
  }
  for (const auto& [id, source] : sources_) {
    const auto due = source->next_deadline();
    if (due && (!earliest || *due < *earliest)) {
      earliest = due;
    }
  }
  return earliest;
}

void EventLoop::run() {
  while (!stopped()) {
    run_once();
  }
  stop_requested_.store(false, std::memory_order_release);
}

void EventLoop::run_once(std::optional<Duration> max_wait) {
  for (const auto& [id, callback] : before_wait_) {
    callback();
  }
  std::optional<Duration> wait = max_wait;
  if (const auto due = earliest_deadline()) {
    const Duration until = std::max(*due - now(), Duration::zero());
    wait = wait ? std::min(*wait, until) : until;
  }
  if (stopped()) {
    wait = Duration::zero();
  }

  std::array<epoll_event, 64> events{};
  timespec timeout{};
  if (wait) {
    timeout = to_timespec(*wait);
  }
  const int n = ::epoll_pwait2(epoll_.get(), events.data(), static_cast<int>(events.size()),
                               wait ? &timeout : nullptr, nullptr);
  if (n < 0 && errno != EINTR) {
    throw_errno("epoll_pwait2");
  }
  ++stats_.wakeups;
  for (int i = 0; i < n; ++i) {
    dispatch_fd(events[static_cast<size_t>(i)].data.u64, events[static_cast<size_t>(i)].events);
  }
  const Instant t = now();
  fire_timers(t);
  fire_sources(t);
}

void EventLoop::dispatch_fd(uint64_t data, uint32_t events) {
  const int fd = static_cast<int>(static_cast<uint32_t>(data));
  const auto generation = static_cast<uint32_t>(data >> 32);
  if (fd == kWakeFd) {
    uint64_t count = 0;
    static_cast<void>(::read(wake_.get(), &count, sizeof(count)));
    return;
  }
  const auto it = fds_.find(fd);
  if (it == fds_.end() || it->second.generation != generation) {
    return;  // removed (or replaced) by an earlier callback of this batch
  }
  // Keep the callback alive even if it removes its own fd.
  const std::shared_ptr<FdCallback> callback = it->second.callback;
  ++stats_.fd_callbacks;
  (*callback)(events);
}

void EventLoop::fire_timers(Instant now) {
  // Only timers due now: a callback that adds a timer at `now` runs it on the
  // next pass, so a timer re-arming itself cannot starve the fds.
  due_timers_.clear();
  for (auto it = timers_.begin(); it != timers_.end() && it->first.first <= now; ++it) {
    due_timers_.push_back(it->first.second);
  }
  for (const TimerId id : due_timers_) {
    const auto at = timer_due_.find(id);
    if (at == timer_due_.end()) {
      continue;  // cancelled by an earlier callback
    }
    const auto node = timers_.find(std::make_pair(at->second, id));
    TimerCallback callback = std::move(node->second);
    timers_.erase(node);
    timer_due_.erase(at);
    ++stats_.timers_fired;
    callback();
  }
}

void EventLoop::fire_sources(Instant now) {
  // Snapshot, and hold each source alive: a callback may remove any source.
  due_sources_.clear();
  for (const auto& [id, source] : sources_) {
    due_sources_.push_back(source);
  }
  for (const auto& source : due_sources_) {
    if (source->removed) {
      continue;
    }
    const auto due = source->next_deadline();
    if (due && *due <= now) {
      ++stats_.deadlines_fired;
      source->on_deadline(now);
    }
  }
  due_sources_.clear();
}

void EventLoop::stop() {
  stop_requested_.store(true, std::memory_order_release);
  const uint64_t one = 1;
  // Async-signal-safe; a full counter (never in practice) still wakes epoll.
  static_cast<void>(::write(wake_.get(), &one, sizeof(one)));
}

}  // namespace tinytcp::io
