#include "common/http_upload.hh"

#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include <fmt/format.h>

namespace tinytcp::apps {

namespace {

constexpr int kAttempts = 16;  // fresh random names tried on EEXIST

uint64_t random_suffix() {
  uint64_t v = 0;
  if (::getrandom(&v, sizeof v, 0) != static_cast<ssize_t>(sizeof v)) {
    // No entropy source: O_EXCL still keeps names apart, only less unpredictable.
    static uint64_t counter = 0;
    v = (static_cast<uint64_t>(::getpid()) << 32) ^ ++counter;
  }
  return v;
}

}  // namespace

HttpUpload::HttpUpload(int dir, std::string name) : dir_(dir), name_(std::move(name)) {}

HttpUpload::~HttpUpload() {
  discard();
}

bool HttpUpload::open() {
  for (int i = 0; i < kAttempts; ++i) {
    temp_ = fmt::format(".{}.upload.{:016x}", name_, random_suffix());
    const int fd =
        ::openat(dir_, temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd >= 0) {
      file_.reset(fd);
      return true;
    }
    if (errno != EEXIST) {
      break;
    }
  }
  temp_.clear();
  return false;
}

bool HttpUpload::write(std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(file_.get(), data.data(), data.size());
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return false;
    }
    data.remove_prefix(static_cast<size_t>(n));
    bytes_ += static_cast<uint64_t>(n);
  }
  return true;
}

bool HttpUpload::commit() {
  if (!file_ || ::fsync(file_.get()) != 0) {
    discard();
    return false;
  }
  const int fd = file_.release();
  if (::close(fd) != 0 || ::renameat(dir_, temp_.c_str(), dir_, name_.c_str()) != 0) {
    const int saved = errno;
    discard();
    errno = saved;
    return false;
  }
  temp_.clear();  // it is the target now
  ::fsync(dir_);  // make the rename itself durable; best effort
  return true;
}

void HttpUpload::discard() {
  file_.reset();
  if (!temp_.empty()) {
    ::unlinkat(dir_, temp_.c_str(), 0);
    temp_.clear();
  }
}

}  // namespace tinytcp::apps
