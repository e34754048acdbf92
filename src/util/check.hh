#pragma once

// Invariant checks for our own code, never for packet contents (STYLE.md).
//   TINYTCP_CHECK(cond)   always checked; aborts with file:line on failure.
//   TINYTCP_DCHECK(cond)  aborts in debug and sanitizer builds
//                         (TINYTCP_DCHECKS_ABORT), logs an error in release.

namespace tinytcp::detail {
[[noreturn]] void check_failed(const char* expr, const char* file, int line);
void dcheck_failed_log(const char* expr, const char* file, int line);
}  // namespace tinytcp::detail

#define TINYTCP_CHECK(cond)                                       \
  do {                                                            \
    if (__builtin_expect(!(cond), 0)) {                           \
      ::tinytcp::detail::check_failed(#cond, __FILE__, __LINE__); \
    }                                                             \
  } while (0)

#if defined(TINYTCP_DCHECKS_ABORT)
#define TINYTCP_DCHECK(cond) TINYTCP_CHECK(cond)
#else
#define TINYTCP_DCHECK(cond)                                           \
  do {                                                                 \
    if (__builtin_expect(!(cond), 0)) {                                \
      ::tinytcp::detail::dcheck_failed_log(#cond, __FILE__, __LINE__); \
    }                                                                  \
  } while (0)
#endif
