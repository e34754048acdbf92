#include "io/uring_writer.hh"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <sys/uio.h>

#ifdef TINYTCP_HAVE_LIBURING
#include <liburing.h>

#include "io/uring_completions.hh"
#endif

namespace tinytcp::io {

#ifdef TINYTCP_HAVE_LIBURING

struct UringWriter::Ring {
  io_uring ring{};
  bool live = false;  // io_uring_queue_init succeeded
  int results[kEntries] = {};
  ~Ring() {
    if (live) {
      io_uring_queue_exit(&ring);
    }
  }
};

std::unique_ptr<UringWriter> UringWriter::create(int fd, std::string* why) {
  auto ring = std::make_unique<Ring>();
  const int r = io_uring_queue_init(kEntries, &ring->ring, 0);
  if (r < 0) {
    *why = std::string("io_uring_setup: ") + std::strerror(-r);
    return nullptr;
  }
  ring->live = true;
  return std::unique_ptr<UringWriter>(new UringWriter(fd, std::move(ring)));
}

bool UringWriter::write_chunk(const std::string_view* packets, size_t count, size_t first,
                              const Done& done) {
  io_uring* ring = &ring_->ring;
  for (size_t i = 0; i < count; ++i) {
    io_uring_sqe* sqe = io_uring_get_sqe(ring);  // never null: count <= kEntries, ring drained
    io_uring_prep_write(sqe, fd_, packets[i].data(), static_cast<unsigned>(packets[i].size()), 0);
    // A full queue is -EAGAIN at once; without it io_uring would poll and wait.
    sqe->rw_flags = nowait_ ? RWF_NOWAIT : 0;
    io_uring_sqe_set_data64(sqe, i);
    ring_->results[i] = -ECANCELED;
  }
  if (submit_and_reap(ring, count, ring_->results, &broken_) < 0) {
    return false;  // the SQEs stay queued: this ring is not used again
  }
  ++enters_;
  if (nowait_ && !broken_ && ring_->results[0] == -EOPNOTSUPP) {
    // A descriptor without RWF_NOWAIT support: this chunk again without it
    // (nothing of it was written), and no RWF_NOWAIT from now on.
    nowait_ = false;
    return write_chunk(packets, count, first, done);
  }
  // Submitted: every packet is reported (-ECANCELED if its completion was
  // lost with the ring), and none may be written again.
  for (size_t i = 0; i < count; ++i) {
    done(first + i, ring_->results[i]);
  }
  return true;
}

#else  // no liburing

struct UringWriter::Ring {};

std::unique_ptr<UringWriter> UringWriter::create(int /*fd*/, std::string* why) {
  *why = "built without liburing (Debian: liburing-dev)";
  return nullptr;
}

bool UringWriter::write_chunk(const std::string_view* /*packets*/, size_t /*count*/,
                              size_t /*first*/, const Done& /*done*/) {
  static_cast<void>(fd_);  // never reached: create() made no writer
  static_cast<void>(nowait_);
  broken_ = true;
  return false;
}

#endif

UringWriter::UringWriter(int fd, std::unique_ptr<Ring> ring) : fd_(fd), ring_(std::move(ring)) {}

UringWriter::~UringWriter() = default;

size_t UringWriter::write(const std::string_view* packets, size_t count, const Done& done) {
  size_t handled = 0;
  while (handled < count && !broken_) {
    const size_t chunk = std::min<size_t>(count - handled, kEntries);
    if (!write_chunk(packets + handled, chunk, handled, done)) {
      break;
    }
    handled += chunk;
  }
  return handled;
}

}  // namespace tinytcp::io
