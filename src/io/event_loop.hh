#pragma once

// The epoll event loop that drives one stack: fd readiness callbacks, one-shot
// timers, and deadline sources (a component that reports its next deadline,
// such as the Host or an ImpairedAdapter). Before each sleep the loop asks
// every source for its deadline and sleeps exactly until the earliest one
// (epoll_pwait2, nanosecond timeout): there is no polling interval, and an
// idle loop sleeps in the kernel without waking.
//
// Single-threaded: every callback runs on the thread that called run(). The
// one exception is stop(), which any thread (or a signal handler) may call; it
// wakes the loop through an eventfd. Callbacks may add and remove fds, timers
// and sources, including their own.

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "io/adapter.hh"
#include "io/file_descriptor.hh"
#include "util/time.hh"

namespace tinytcp::io {

struct EventLoopStats {
  uint64_t wakeups = 0;  // returns from epoll
  uint64_t fd_callbacks = 0;
  uint64_t timers_fired = 0;
  uint64_t deadlines_fired = 0;  // deadline sources called at their deadline
};

class EventLoop {
 public:
  // Readiness bits for add_fd() and the callback (the epoll values).
  static constexpr uint32_t kReadable = 0x001;  // EPOLLIN
  static constexpr uint32_t kWritable = 0x004;  // EPOLLOUT
  static constexpr uint32_t kError = 0x008;     // EPOLLERR (always reported)
  static constexpr uint32_t kHangUp = 0x010;    // EPOLLHUP (always reported)

  using FdCallback = std::function<void(uint32_t events)>;
  using TimerCallback = std::function<void()>;
  using TimerId = uint64_t;
  using SourceId = uint64_t;
  using NextDeadline = std::function<std::optional<Instant>()>;
  using OnDeadline = std::function<void(Instant now)>;

  // Throws std::system_error when epoll or the eventfd cannot be created.
  EventLoop();
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  // Instants are on the CLOCK_MONOTONIC line (SystemClock).
  Instant now() const;

  // Watches `fd` (not owned) for `events`; throws std::system_error if epoll
  // refuses it (already watched, not pollable).
  void add_fd(int fd, uint32_t events, FdCallback callback);
  void modify_fd(int fd, uint32_t events);
  // Stops watching `fd`; no callback for it runs after this returns. Call it
  // before closing the fd.
  void remove_fd(int fd);

  // A one-shot timer at `at` (or `after` from now). Timers due at the same
  // instant fire in the order they were added.
  TimerId add_timer(Instant at, TimerCallback callback);
  TimerId add_timer_after(Duration after, TimerCallback callback) {
    return add_timer(now() + after, std::move(callback));
  }
  // True if the timer was pending (it will not fire).
  bool cancel_timer(TimerId id);

  // A component with its own deadlines: before each sleep the loop asks
  // `next_deadline`; once it has passed, the loop calls `on_deadline(now)`.
  SourceId add_deadline_source(NextDeadline next_deadline, OnDeadline on_deadline);
  void remove_deadline_source(SourceId id);

  // Called at the start of every pass, before the loop computes its deadline
  // and waits: e.g. to hand the adapter the datagrams a stack produced during
  // the callbacks of the last pass as one batch. Must not add or remove
  // before-wait callbacks itself.
  SourceId add_before_wait(std::function<void()> callback);
  void remove_before_wait(SourceId id);

  // Convenience: receive from `adapter` whenever its fd is readable or its own
  // deadline passes, handing packets to `on_packet`. Returns the source id; use
  // remove_adapter() before destroying the adapter.
  SourceId add_adapter(DatagramAdapter& adapter, PacketHandler on_packet);
  void remove_adapter(DatagramAdapter& adapter, SourceId id);

  // Runs until stop(). Each stop() ends one run(): a stop() before run()
  // makes it return at once, and the loop can be run again afterwards.
  void run();
  // One wait and dispatch: sleeps until an fd is ready, the earliest deadline,
  // or `max_wait` (when given), whichever comes first.
  void run_once(std::optional<Duration> max_wait = std::nullopt);
  // Makes run() return after the current callback; safe from any thread and
  // from a signal handler (one atomic store and one write to an eventfd).
  void stop();
  bool stopped() const { return stop_requested_.load(std::memory_order_acquire); }

  const EventLoopStats& stats() const { return stats_; }
  size_t pending_timers() const { return timers_.size(); }

 private:
  struct FdEntry {
    uint32_t generation;
    std::shared_ptr<FdCallback> callback;
  };
  struct Source {
    NextDeadline next_deadline;
    OnDeadline on_deadline;
    bool removed = false;
  };

  std::optional<Instant> earliest_deadline();
  void dispatch_fd(uint64_t data, uint32_t events);
  void fire_timers(Instant now);
  void fire_sources(Instant now);

  FileDescriptor epoll_;
  FileDescriptor wake_;  // eventfd for stop()
  std::atomic<bool> stop_requested_{false};
  std::unordered_map<int, FdEntry> fds_;
  uint32_t next_generation_ = 1;
  std::map<std::pair<Instant, TimerId>, TimerCallback> timers_;
  std::unordered_map<TimerId, Instant> timer_due_;
  TimerId next_timer_ = 1;
  std::map<SourceId, std::shared_ptr<Source>> sources_;
  std::map<SourceId, std::function<void()>> before_wait_;
  SourceId next_source_ = 1;
  std::vector<TimerId> due_timers_;  // scratch, reused every pass
  std::vector<std::shared_ptr<Source>> due_sources_;
  EventLoopStats stats_;
};

}  // namespace tinytcp::io
