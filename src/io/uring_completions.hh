#pragma once

// One io_uring_enter for a batch that UringReader or UringWriter queued, and
// the reaping of its completions (internal to src/io; only with liburing).

#ifdef TINYTCP_HAVE_LIBURING

#include <cerrno>
#include <cstddef>
#include <cstdint>

#include <liburing.h>

namespace tinytcp::io {

// Submits the `count` queued entries (each tagged with its index by
// io_uring_sqe_set_data64) and waits for their completions, stored in
// results[index]; entries whose completion never came keep what the caller
// put there. Returns what io_uring_submit_and_wait returned (< 0: nothing
// went in; the entries stay queued). Sets *broken when the ring must not be
// used again: a failed wait, or fewer entries taken than queued (the rest
// still sit in the submission queue, aimed at this batch's buffers, and must
// never run with a later enter).
inline int submit_and_reap(io_uring* ring, size_t count, int* results, bool* broken) {
  int submitted = 0;
  do {
    submitted = io_uring_submit_and_wait(ring, static_cast<unsigned>(count));
  } while (submitted == -EINTR);
  if (submitted < 0) {
    *broken = true;
    return submitted;
  }
  size_t reaped = 0;
  while (reaped < static_cast<size_t>(submitted)) {
    io_uring_cqe* cqe = nullptr;
    const int w = io_uring_wait_cqe(ring, &cqe);
    if (w == -EINTR) {
      continue;
    }
    if (w < 0) {
      *broken = true;
      break;
    }
    const uint64_t index = io_uring_cqe_get_data64(cqe);
    if (index < count) {
      results[index] = cqe->res;
    }
    io_uring_cqe_seen(ring, cqe);
    ++reaped;
  }
  if (static_cast<size_t>(submitted) < count) {
    *broken = true;
  }
  return submitted;
}

}  // namespace tinytcp::io

#endif  // TINYTCP_HAVE_LIBURING
