#include "common/posix_file_source.hh"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

namespace tinytcp::apps {

namespace {

std::string errno_text(int error) {
  return std::strerror(error);
}

}  // namespace

PosixFileSource::PosixFileSource(const std::string& path, std::optional<FileIdentity> expected) {
  // O_NONBLOCK: a FIFO swapped in after the scan must not block the open
  // (it is refused below); regular files ignore the flag.
  const int flags =
      expected ? O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK : O_RDONLY | O_CLOEXEC;
  fd_ = ::open(path.c_str(), flags);
  if (fd_ < 0) {
    const int error = errno;
    if (expected && error == ELOOP) {
      throw std::runtime_error(
          fmt::format("{} became a symlink after the tree was scanned: not followed", path));
    }
    throw std::runtime_error(fmt::format("cannot open {}: {}", path, errno_text(error)));
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const int error = errno;
    ::close(fd_);
    throw std::runtime_error(fmt::format("cannot stat {}: {}", path, errno_text(error)));
  }
  if (expected && (static_cast<uint64_t>(st.st_dev) != expected->device ||
                   static_cast<uint64_t>(st.st_ino) != expected->inode)) {
    ::close(fd_);
    throw std::runtime_error(fmt::format(
        "{} is not the file the tree scan found (replaced since, or a directory above it was): "
        "not sent",
        path));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd_);
    throw std::runtime_error(fmt::format("{} is not a regular file", path));
  }
  size_ = static_cast<uint64_t>(st.st_size);
  ::posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
}

PosixFileSource::~PosixFileSource() {
  if (fd_ >= 0) {
    ::close(fd_);
  }
}

Expected<size_t, std::string> PosixFileSource::read(uint64_t offset, char* out, size_t n) {
  for (;;) {
    const ssize_t got = ::pread(fd_, out, n, static_cast<off_t>(offset));
    if (got >= 0) {
      return static_cast<size_t>(got);
    }
    if (errno != EINTR) {
      return make_unexpected(errno_text(errno));
    }
  }
}

Sha256Digest PosixFileSource::file_id() {
  Sha256 hash;
  std::string size_text = std::to_string(size_);
  hash.update(size_text);
  std::string buf(kIdEdgeBytes, '\0');
  for (const uint64_t at :
       {uint64_t{0}, size_ > kIdEdgeBytes ? size_ - kIdEdgeBytes : uint64_t{0}}) {
    const auto got = read(at, buf.data(), buf.size());
    if (!got) {
      throw std::runtime_error(fmt::format("cannot read the file: {}", got.error()));
    }
    hash.update(std::string_view(buf).substr(0, *got));
  }
  return hash.finish();
}

}  // namespace tinytcp::apps
