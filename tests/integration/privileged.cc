#include "integration/privileged.hh"

#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace tinytcp::testing {

std::string missing_privileges() {
  if (::geteuid() != 0) {
    return "needs root";
  }
  if (::access("/dev/net/tun", R_OK | W_OK) != 0) {
    return "needs /dev/net/tun";
  }
  if (std::system("command -v ip >/dev/null 2>&1") != 0) {
    return "needs iproute2 (ip)";
  }
  return "";
}

bool running_in_ci() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string(ci) == "true";
}

void enter_fresh_netns() {
  if (::unshare(CLONE_NEWNET) != 0) {
    throw std::runtime_error(std::string("unshare(CLONE_NEWNET): ") + std::strerror(errno));
  }
  if (std::system("ip link set lo up") != 0) {
    throw std::runtime_error("ip link set lo up failed in the new namespace");
  }
}

CommandResult run(const std::string& command) {
  CommandResult result;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) {
    return result;
  }
  char buffer[4096];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) {
    result.output.append(buffer, n);
  }
  const int status = ::pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

}  // namespace tinytcp::testing
