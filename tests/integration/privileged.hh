#pragma once

// Shared by the privileged integration tests (label `privileged`).
//
// A privileged test needs root and /dev/net/tun. Without them it skips, except
// under CI=true, where it fails: CI must really run it. Each test moves the
// whole test process into a fresh, anonymous network namespace
// (unshare(CLONE_NEWNET)) before it makes any device, and commands it runs
// inherit it. The kernel deletes that namespace when the process exits, even
// if it crashes, so nothing is left behind and no packet can leave the
// machine: the namespace has only its own loopback and the test's devices.

#include <gtest/gtest.h>

#include <string>

namespace tinytcp::testing {

// Empty when the test can run; otherwise why not.
std::string missing_privileges();
bool running_in_ci();
// Unshares the network namespace and brings its loopback up; throws on failure.
void enter_fresh_netns();

struct CommandResult {
  int status = -1;  // exit code, or -1 if it did not exit normally
  std::string output;
};
// Runs `command` with /bin/sh, capturing stdout (stderr too with 2>&1).
CommandResult run(const std::string& command);

}  // namespace tinytcp::testing

// In SetUp(): skip (or fail under CI=true) when not privileged, then enter a
// fresh network namespace.
#define TINYTCP_ENTER_PRIVILEGED_NETNS()                                    \
  do {                                                                      \
    const std::string why = ::tinytcp::testing::missing_privileges();       \
    if (!why.empty()) {                                                     \
      if (::tinytcp::testing::running_in_ci()) {                            \
        FAIL() << why << " (CI=true: privileged tests must run, not skip)"; \
      }                                                                     \
      GTEST_SKIP() << why;                                                  \
    }                                                                       \
    ::tinytcp::testing::enter_fresh_netns();                                \
  } while (0)
