#include "util/check.hh"

#include <cstdio>
#include <cstdlib>

#include <spdlog/spdlog.h>

namespace tinytcp::detail {

void check_failed(const char* expr, const char* file, int line) {
  std::fprintf(stderr, "tinytcp: check failed: %s at %s:%d\n", expr, file, line);
  std::fflush(stderr);
  std::abort();
}

void dcheck_failed_log(const char* expr, const char* file, int line) {
  spdlog::error("invariant broken: {} at {}:{}", expr, file, line);
}

}  // namespace tinytcp::detail
