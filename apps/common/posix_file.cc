#include "common/posix_file.hh"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
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

constexpr size_t kHashChunk = 1 << 20;

}  // namespace

PosixFileSource::PosixFileSource(const std::string& path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) {
    throw std::runtime_error(fmt::format("cannot open {}: {}", path, errno_text(errno)));
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const int error = errno;
    ::close(fd_);
    throw std::runtime_error(fmt::format("cannot stat {}: {}", path, errno_text(error)));
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
  constexpr uint64_t kEdge = 1 << 20;
  Sha256 hash;
  std::string size_text = std::to_string(size_);
  hash.update(size_text);
  std::string buf(kEdge, '\0');
  for (const uint64_t at : {uint64_t{0}, size_ > kEdge ? size_ - kEdge : uint64_t{0}}) {
    const auto got = read(at, buf.data(), buf.size());
    if (!got) {
      throw std::runtime_error(fmt::format("cannot read the file: {}", got.error()));
    }
    hash.update(std::string_view(buf).substr(0, *got));
  }
  return hash.finish();
}

PosixFileSink::PosixFileSink(std::string dir, bool force) : dir_(std::move(dir)), force_(force) {
  struct stat st {};
  if (::stat(dir_.c_str(), &st) != 0) {
    throw std::runtime_error(fmt::format("output directory {}: {}", dir_, errno_text(errno)));
  }
  if (!S_ISDIR(st.st_mode)) {
    throw std::runtime_error(fmt::format("output {} is not a directory", dir_));
  }
}

PosixFileSink::~PosixFileSink() {
  close_current();
}

void PosixFileSink::close_current() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

std::string PosixFileSink::partial_name(std::string_view name, const Sha256Digest& sha256) {
  return fmt::format(".{}.{}.part", name, to_hex(sha256).substr(0, 16));
}

bool PosixFileSink::exists(std::string_view name) {
  struct stat st {};
  return ::lstat(fmt::format("{}/{}", dir_, name).c_str(), &st) == 0;
}

uint64_t PosixFileSink::free_space() {
  struct statvfs vfs {};
  if (::statvfs(dir_.c_str(), &vfs) != 0) {
    return 0;
  }
  return static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
}

Expected<proto::PartialFile, std::string> PosixFileSink::open(std::string_view name,
                                                              const Sha256Digest& sha256) {
  close_current();
  final_path_ = fmt::format("{}/{}", dir_, name);
  partial_path_ = fmt::format("{}/{}", dir_, partial_name(name, sha256));
  fd_ = ::open(partial_path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd_ < 0) {
    return make_unexpected(fmt::format("cannot open {}: {}", partial_path_, errno_text(errno)));
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    close_current();
    return make_unexpected(fmt::format("{} is not a regular file", partial_path_));
  }
  const auto held = static_cast<uint64_t>(st.st_size);
  if (::lseek(fd_, 0, SEEK_END) < 0) {
    close_current();
    return make_unexpected(fmt::format("cannot seek {}: {}", partial_path_, errno_text(errno)));
  }
  return proto::PartialFile{held};
}

Expected<bool, std::string> PosixFileSink::hash_prefix(uint64_t n, proto::ContentHash& hash) {
  std::string buf(kHashChunk, '\0');
  uint64_t at = 0;
  while (at < n) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(buf.size(), n - at));
    const ssize_t got = ::pread(fd_, buf.data(), want, static_cast<off_t>(at));
    if (got < 0 && errno == EINTR) {
      continue;
    }
    if (got <= 0) {
      return make_unexpected(fmt::format("cannot read {}: {}", partial_path_,
                                         got == 0 ? "unexpected end" : errno_text(errno)));
    }
    hash.update(std::string_view(buf).substr(0, static_cast<size_t>(got)));
    at += static_cast<uint64_t>(got);
  }
  return true;
}

Expected<bool, std::string> PosixFileSink::truncate(uint64_t n) {
  if (::ftruncate(fd_, static_cast<off_t>(n)) != 0 ||
      ::lseek(fd_, static_cast<off_t>(n), SEEK_SET) < 0) {
    return make_unexpected(fmt::format("cannot truncate {}: {}", partial_path_, errno_text(errno)));
  }
  return true;
}

Expected<bool, std::string> PosixFileSink::write(std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd_, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return make_unexpected(
          fmt::format("{}: {} (partial file kept for resume)", partial_path_, errno_text(errno)));
    }
    data.remove_prefix(static_cast<size_t>(n));
    unsynced_ += static_cast<uint64_t>(n);
  }
  // Start writeback every few MiB (without waiting for it), so the fsync
  // before the rename has little left to do: a 1 GiB file would otherwise
  // stall the event loop for long enough that the sender's RTO fires.
  if (unsynced_ >= kWritebackEvery) {
    ::sync_file_range(fd_, 0, 0, SYNC_FILE_RANGE_WRITE);
    unsynced_ = 0;
  }
  return true;
}

Expected<bool, std::string> PosixFileSink::commit() {
  if (::fsync(fd_) != 0) {
    return make_unexpected(fmt::format("fsync {}: {}", partial_path_, errno_text(errno)));
  }
  close_current();
  // Never replace an existing file unless --force said so, even if one
  // appeared during the transfer.
  const unsigned flags = force_ ? 0u : RENAME_NOREPLACE;
  if (::renameat2(AT_FDCWD, partial_path_.c_str(), AT_FDCWD, final_path_.c_str(), flags) != 0) {
    return make_unexpected(fmt::format("cannot rename to {}: {}", final_path_, errno_text(errno)));
  }
  const int dir_fd = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);  // make the rename itself durable
    ::close(dir_fd);
  }
  return true;
}

void PosixFileSink::discard() {
  close_current();
  ::unlink(partial_path_.c_str());
}

}  // namespace tinytcp::apps
