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
  const int r = io_uring_queue_init(kEntries, &ring->ring, 0);
  if (r < 0) {
    *why = std::string("io_uring_setup: ") + std::strerror(-r);
    return nullptr;
  }
  ring->live = true;
  return std::unique_ptr<UringReader>(new UringReader(fd, buffer_bytes, std::move(ring)));
}

size_t UringReader::read(size_t count) {
  if (broken_ || count == 0) {
    return 0;
  }
  count = count < kEntries ? count : kEntries;
  io_uring* ring = &ring_->ring;
  for (size_t i = 0; i < count; ++i) {
    io_uring_sqe* sqe = io_uring_get_sqe(ring);  // never null: count <= kEntries, ring drained
    io_uring_prep_read(sqe, fd_, buffers_.get() + i * buffer_bytes_,
                       static_cast<unsigned>(buffer_bytes_), 0);
    // An empty device is -EAGAIN at once; without it io_uring would poll and wait.
    sqe->rw_flags = RWF_NOWAIT;
    io_uring_sqe_set_data64(sqe, i);
    results_[i] = -ECANCELED;
  }
  const int submitted = submit_and_reap(ring, count, results_, &broken_);
  if (submitted <= 0) {
    broken_ = true;  // the SQEs stay queued: this ring is not used again
    count_ = 0;
    return 0;
  }
  ++enters_;
  if (results_[0] == -EOPNOTSUPP) {
    broken_ = true;  // no RWF_NOWAIT on this descriptor: nothing of the batch was read
    count_ = 0;
    return 0;
  }
  count_ = static_cast<size_t>(submitted);
  return count_;
}

#else  // no liburing

struct UringReader::Ring {};

std::unique_ptr<UringReader> UringReader::create(int /*fd*/, size_t /*buffer_bytes*/,
                                                 std::string* why) {
  *why = "built without liburing (Debian: liburing-dev)";
  return nullptr;
}

size_t UringReader::read(size_t /*count*/) {
  static_cast<void>(fd_);  // never reached: create() made no reader
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
  return i < count_ ? results_[i] : -ECANCELED;
}

std::string_view UringReader::datagram(size_t i) const {
  if (i >= count_ || results_[i] < 0) {
    return {};
  }
  return {buffers_.get() + i * buffer_bytes_, static_cast<size_t>(results_[i])};
}

}  // namespace tinytcp::io
