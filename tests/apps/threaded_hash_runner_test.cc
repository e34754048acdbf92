#include "common/threaded_hash_runner.hh"

#include <poll.h>

#include <future>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "util/hash.hh"

namespace tinytcp::apps {
namespace {

// The receiver's whole-file hashes run on the runner's thread; the loop
// learns of the result through the eventfd, not by waiting.
TEST(ThreadedHashRunnerTest, RunsTheJobOnItsOwnThreadAndWakesTheLoop) {
  ThreadedHashRunner runner;
  std::promise<void> gate;
  auto opened = gate.get_future().share();
  std::thread::id ran_on;
  runner.start([&]() -> proto::HashRunner::Digest {
    opened.wait();  // not done until the test lets it finish
    ran_on = std::this_thread::get_id();
    return sha256("abc");
  });
  EXPECT_FALSE(runner.result().has_value());  // still running: nothing yet
  gate.set_value();
  pollfd p{runner.wakeup_fd(), POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, -1), 1);
  const auto result = runner.result();
  ASSERT_TRUE(result.has_value());
  ASSERT_TRUE(*result);
  EXPECT_EQ(**result, sha256("abc"));
  EXPECT_NE(ran_on, std::this_thread::get_id());
  EXPECT_FALSE(runner.result().has_value());  // taken once
  p.revents = 0;
  EXPECT_EQ(::poll(&p, 1, 0), 0);  // the wakeup was cleared
  EXPECT_EQ(runner.jobs(), 1u);
}

TEST(ThreadedHashRunnerTest, AbandonWaitsForTheJobAndForgetsIt) {
  ThreadedHashRunner runner;
  bool done = false;
  runner.start([&]() -> proto::HashRunner::Digest {
    done = true;
    return make_unexpected(std::string("unreadable"));
  });
  runner.abandon();
  EXPECT_TRUE(done);
  EXPECT_FALSE(runner.result().has_value());
  runner.start([]() -> proto::HashRunner::Digest { return sha256("x"); });
  runner.abandon();
  runner.start([]() -> proto::HashRunner::Digest { return sha256("y"); });
  pollfd p{runner.wakeup_fd(), POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, -1), 1);
  const auto result = runner.result();
  ASSERT_TRUE(result.has_value() && *result);
  EXPECT_EQ(**result, sha256("y"));
}

}  // namespace
}  // namespace tinytcp::apps
