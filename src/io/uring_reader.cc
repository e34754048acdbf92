#include "io/uring_reader.hh"

#include <cerrno>
#include <cstring>

#include <sys/uio.h>

#ifdef TINYTCP_HAVE_LIBURING
#include <liburing.h>

#include "io/uring_completions.hh"
#endif

namespace tinytcp::io {

#ifdef TINYTCP_HAVE_LIBURING

struct UringReader::Ring {
  io_uring ring{};
  bool live = false;  // io_uring_queue_init succeeded
  ~Ring() {
    if (live) {
      io_uring_queue_exit(&ring);
    }
  }
};

std::unique_ptr<UringReader> UringReader::create(int fd, size_t buffer_bytes, std::string* why) {
  auto ring = std::make_unique<Ring>();
  const int r = io_uring_queue_init(2 * kEntries, &ring->ring, 0);  // WRITEs, then READs
  if (r < 0) {
    *why = std::string("io_uring_setup: ") + std::strerror(-r);
    return nullptr;
  }
  ring->live = true;
  return std::unique_ptr<UringReader>(new UringReader(fd, buffer_bytes, std::move(ring)));
}

bool UringReader::write_then_read(const std::string_view* packets, size_t writes,
                                  int* write_results, size_t count) {
  count_ = 0;
  first_read_ = 0;
  if (broken_ || (count == 0 && writes == 0)) {
    return false;
  }
  writes = writes < kEntries ? writes : kEntries;
  count = count < kEntries ? count : kEntries;
  io_uring* ring = &ring_->ring;
  // Never null: at most 2 * kEntries, and every enter drains the ring.
  for (size_t i = 0; i < writes; ++i) {
    io_uring_sqe* sqe = io_uring_get_sqe(ring);
    io_uring_prep_write(sqe, fd_, packets[i].data(), static_cast<unsigned>(packets[i].size()), 0);
    sqe->rw_flags = RWF_NOWAIT;  // a full queue is -EAGAIN at once
    io_uring_sqe_set_data64(sqe, i);
    results_[i] = -ECANCELED;
  }
  for (size_t i = writes; i < writes + count; ++i) {
    io_uring_sqe* sqe = io_uring_get_sqe(ring);
    io_uring_prep_read(sqe, fd_, buffers_.get() + (i - writes) * buffer_bytes_,
                       static_cast<unsigned>(buffer_bytes_), 0);
    // An empty device is -EAGAIN at once; without it io_uring would poll and wait.
    sqe->rw_flags = RWF_NOWAIT;
    io_uring_sqe_set_data64(sqe, i);
    results_[i] = -ECANCELED;
  }
  const int submitted = submit_and_reap(ring, writes + count, results_, &broken_);
  for (size_t i = 0; i < writes; ++i) {
    write_results[i] = results_[i];
  }
  if (submitted <= 0) {
    broken_ = true;  // the SQEs stay queued: this ring is not used again
    return false;
  }
  ++enters_;
  write_enters_ += writes > 0 ? 1 : 0;
  first_read_ = writes;
  // The kernel takes entries in order: the READs that ran are those past the WRITEs.
  const size_t ran =
      static_cast<size_t>(submitted) > writes ? static_cast<size_t>(submitted) - writes : 0;
  if (ran > 0 && results_[first_read_] == -EOPNOTSUPP) {
    broken_ = true;  // no RWF_NOWAIT on this descriptor: nothing of the batch was read
    return true;
  }
  count_ = ran;
  return true;
}

size_t UringReader::read(size_t count) {
  if (count == 0) {
    return 0;
  }
  write_then_read(nullptr, 0, nullptr, count);
  return count_;
}

#else  // no liburing

struct UringReader::Ring {};

std::unique_ptr<UringReader> UringReader::create(int /*fd*/, size_t /*buffer_bytes*/,
                                                 std::string* why) {
  *why = "built without liburing (Debian: liburing-dev)";
  return nullptr;
}

bool UringReader::write_then_read(const std::string_view* /*packets*/, size_t /*writes*/,
                                  int* /*write_results*/, size_t /*count*/) {
  static_cast<void>(fd_);  // never reached: create() made no reader
  broken_ = true;
  return false;
}

size_t UringReader::read(size_t /*count*/) {
  broken_ = true;
  return 0;
}

#endif

UringReader::UringReader(int fd, size_t buffer_bytes, std::unique_ptr<Ring> ring)
    : fd_(fd),
      buffer_bytes_(buffer_bytes),
      buffers_(new char[kEntries * buffer_bytes]),  // not zeroed: untouched pages stay free
      ring_(std::move(ring)) {}

UringReader::~UringReader() = default;

int UringReader::result(size_t i) const {
  return i < count_ ? results_[first_read_ + i] : -ECANCELED;
}

std::string_view UringReader::datagram(size_t i) const {
  if (i >= count_ || results_[first_read_ + i] < 0) {
    return {};
  }
  return {buffers_.get() + i * buffer_bytes_, static_cast<size_t>(results_[first_read_ + i])};
}

}  // namespace tinytcp::io
