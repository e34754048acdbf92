#include "io/event_loop.hh"

#include <fcntl.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "unit/io/fake_adapter.hh"

using namespace std::chrono_literals;

namespace tinytcp::io {
namespace {

class Pipe {
 public:
  Pipe() {
    int fds[2];
    if (::pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0) {
      throw_errno("pipe2");
    }
    read_end.reset(fds[0]);
    write_end.reset(fds[1]);
  }
  void write(char c) { ASSERT_EQ(::write(write_end.get(), &c, 1), 1); }
  char read() {
    char c = 0;
    EXPECT_EQ(::read(read_end.get(), &c, 1), 1);
    return c;
  }
  FileDescriptor read_end;
  FileDescriptor write_end;
};

TEST(EventLoopTest, TimersFireInDeadlineOrder) {
  EventLoop loop;
  std::vector<int> fired;
  const Instant start = loop.now();
  loop.add_timer(start + 3ms, [&] { fired.push_back(3); });
  loop.add_timer(start + 1ms, [&] { fired.push_back(1); });
  loop.add_timer(start + 2ms, [&] { fired.push_back(2); });
  loop.add_timer(start + 3ms, [&] {
    fired.push_back(4);
    loop.stop();
  });
  loop.run();
  EXPECT_EQ(fired, (std::vector<int>{1, 2, 3, 4}));
  EXPECT_GE(loop.now() - start, 3ms);
  EXPECT_EQ(loop.pending_timers(), 0u);
}

TEST(EventLoopTest, TimerNeverFiresEarly) {
  EventLoop loop;
  const Instant due = loop.now() + 5ms;
  Instant fired_at;
  loop.add_timer(due, [&] {
    fired_at = loop.now();
    loop.stop();
  });
  loop.run();
  EXPECT_GE(fired_at, due);
}

TEST(EventLoopTest, SleepsUntilDeadlineWithoutPolling) {
  EventLoop loop;
  loop.add_timer_after(20ms, [&] { loop.stop(); });
  loop.run();
  // One sleep to the deadline; a polling loop would wake many times. Allow
  // one spurious wakeup from the kernel.
  EXPECT_LE(loop.stats().wakeups, 2u);
  EXPECT_EQ(loop.stats().timers_fired, 1u);
}

TEST(EventLoopTest, CancelledTimerDoesNotFire) {
  EventLoop loop;
  bool fired = false;
  const auto id = loop.add_timer_after(1ms, [&] { fired = true; });
  EXPECT_TRUE(loop.cancel_timer(id));
  EXPECT_FALSE(loop.cancel_timer(id));
  loop.add_timer_after(3ms, [&] { loop.stop(); });
  loop.run();
  EXPECT_FALSE(fired);
}

TEST(EventLoopTest, TimerCallbackMayCancelAnotherDueTimer) {
  EventLoop loop;
  const Instant at = loop.now() + 1ms;
  bool second_fired = false;
  EventLoop::TimerId second = 0;
  loop.add_timer(at, [&] { loop.cancel_timer(second); });
  second = loop.add_timer(at, [&] { second_fired = true; });
  loop.add_timer(at + 1ms, [&] { loop.stop(); });
  loop.run();
  EXPECT_FALSE(second_fired);
}

TEST(EventLoopTest, TimerReArmingAtNowRunsOncePerPass) {
  EventLoop loop;
  int runs = 0;
  std::function<void()> rearm = [&] {
    ++runs;
    if (runs < 5) {
      loop.add_timer(loop.now(), rearm);
    }
  };
  loop.add_timer(loop.now(), rearm);
  loop.run_once(0ms);
  EXPECT_EQ(runs, 1);
  for (int i = 0; i < 4; ++i) {
    loop.run_once(0ms);
  }
  EXPECT_EQ(runs, 5);
}

TEST(EventLoopTest, ReadableFdRunsCallback) {
  EventLoop loop;
  Pipe pipe;
  std::vector<char> got;
  loop.add_fd(pipe.read_end.get(), EventLoop::kReadable, [&](uint32_t events) {
    EXPECT_TRUE(events & EventLoop::kReadable);
    got.push_back(pipe.read());
    loop.stop();
  });
  pipe.write('x');
  loop.run();
  EXPECT_EQ(got, (std::vector<char>{'x'}));
}

TEST(EventLoopTest, RemovedFdGetsNoCallback) {
  EventLoop loop;
  Pipe pipe;
  int calls = 0;
  loop.add_fd(pipe.read_end.get(), EventLoop::kReadable, [&](uint32_t) { ++calls; });
  loop.remove_fd(pipe.read_end.get());
  pipe.write('x');
  loop.run_once(2ms);
  EXPECT_EQ(calls, 0);
}

TEST(EventLoopTest, CallbackMayRemoveAnotherReadyFd) {
  EventLoop loop;
  Pipe a;
  Pipe b;
  int calls = 0;
  const auto remove_both = [&](uint32_t) {
    ++calls;
    loop.remove_fd(a.read_end.get());
    loop.remove_fd(b.read_end.get());
  };
  loop.add_fd(a.read_end.get(), EventLoop::kReadable, remove_both);
  loop.add_fd(b.read_end.get(), EventLoop::kReadable, remove_both);
  a.write('1');
  b.write('2');
  loop.run_once(5ms);
  EXPECT_EQ(calls, 1);  // both were ready; the second was removed before its turn
}

TEST(EventLoopTest, WritableFdReported) {
  EventLoop loop;
  Pipe pipe;
  uint32_t seen = 0;
  loop.add_fd(pipe.write_end.get(), EventLoop::kWritable, [&](uint32_t events) { seen = events; });
  loop.run_once(5ms);
  EXPECT_TRUE(seen & EventLoop::kWritable);
  loop.modify_fd(pipe.write_end.get(), 0);
  seen = 0;
  loop.run_once(1ms);
  EXPECT_EQ(seen, 0u);
}

TEST(EventLoopTest, AddingAnFdTwiceThrows) {
  EventLoop loop;
  Pipe pipe;
  loop.add_fd(pipe.read_end.get(), EventLoop::kReadable, [](uint32_t) {});
  EXPECT_THROW(loop.add_fd(pipe.read_end.get(), EventLoop::kReadable, [](uint32_t) {}),
               std::system_error);
}

TEST(EventLoopTest, StopFromAnotherThreadWakesTheLoop) {
  EventLoop loop;
  std::thread stopper([&] {
    std::this_thread::sleep_for(5ms);
    loop.stop();
  });
  loop.run();  // no timers, no fds: only the eventfd can end this
  stopper.join();
  EXPECT_EQ(loop.stats().timers_fired, 0u);
}

TEST(EventLoopTest, StopBeforeRunReturnsAtOnceAndLoopRunsAgain) {
  EventLoop loop;
  loop.stop();
  loop.run();
  bool fired = false;
  loop.add_timer_after(1ms, [&] {
    fired = true;
    loop.stop();
  });
  loop.run();
  EXPECT_TRUE(fired);
}

TEST(EventLoopTest, DeadlineSourceCalledAtItsDeadline) {
  EventLoop loop;
  std::optional<Instant> deadline = loop.now() + 3ms;
  Instant called_at;
  loop.add_deadline_source([&] { return deadline; },
                           [&](Instant now) {
                             called_at = now;
                             deadline.reset();
                             loop.stop();
                           });
  const Instant due = *deadline;
  loop.run();
  EXPECT_GE(called_at, due);
  EXPECT_EQ(loop.stats().deadlines_fired, 1u);
  EXPECT_LE(loop.stats().wakeups, 2u);
}

TEST(EventLoopTest, RemovedDeadlineSourceIsNotAsked) {
  EventLoop loop;
  int asked = 0;
  const auto id = loop.add_deadline_source(
      [&]() -> std::optional<Instant> {
        ++asked;
        return std::nullopt;
      },
      [](Instant) {});
  loop.run_once(0ms);
  const int before = asked;
  loop.remove_deadline_source(id);
  loop.run_once(0ms);
  EXPECT_EQ(asked, before);
}

TEST(EventLoopTest, BeforeWaitRunsAfterCallbacksBeforeTheNextWait) {
  // A timer queues work; the before-wait callback sees it before the loop
  // sleeps again (how StackRuntime flushes a batch of datagrams).
  EventLoop loop;
  std::vector<std::string> log;
  loop.add_timer(loop.now(), [&] { log.push_back("timer"); });
  const auto id = loop.add_before_wait([&] { log.push_back("before-wait"); });
  loop.run_once(0ms);
  loop.run_once(0ms);
  EXPECT_EQ(log, (std::vector<std::string>{"before-wait", "timer", "before-wait"}));
  loop.remove_before_wait(id);
  loop.run_once(0ms);
  EXPECT_EQ(log.size(), 3u);
}

TEST(EventLoopTest, AdapterWithoutFdServicedAtItsDeadline) {
  // A timed adapter (here a fake with a scripted deadline) is polled when due.
  class TimedFake : public testing::FakeAdapter {
   public:
    std::optional<Instant> next_deadline() const override { return due; }
    std::optional<Instant> due;
  };
  EventLoop loop;
  TimedFake adapter;
  adapter.deliver("packet");
  adapter.due = loop.now() + 2ms;
  std::vector<std::string> got;
  const auto id = loop.add_adapter(adapter, [&](std::string_view p) {
    got.emplace_back(p);
    adapter.due.reset();
    loop.stop();
  });
  loop.run();
  EXPECT_EQ(got, (std::vector<std::string>{"packet"}));
  loop.remove_adapter(adapter, id);
}

TEST(EventLoopTest, EventfdReadinessDispatched) {
  EventLoop loop;
  FileDescriptor efd(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  ASSERT_TRUE(efd.valid());
  uint64_t value = 0;
  loop.add_fd(efd.get(), EventLoop::kReadable, [&](uint32_t) {
    ASSERT_EQ(::read(efd.get(), &value, sizeof(value)), 8);
    loop.stop();
  });
  const uint64_t seven = 7;
  ASSERT_EQ(::write(efd.get(), &seven, sizeof(seven)), 8);
  loop.run();
  EXPECT_EQ(value, 7u);
}

}  // namespace
}  // namespace tinytcp::io
