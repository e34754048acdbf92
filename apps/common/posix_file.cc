#include "common/posix_file.hh"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "proto/transfer_messages.hh"

namespace tinytcp::apps {

namespace {

std::string errno_text(int error) {
  return std::strerror(error);
}

constexpr size_t kHashChunk = 1 << 20;

}  // namespace

PosixFileSink::PosixFileSink(std::string dir, bool force, bool direct_io)
    : dir_(std::move(dir)),
      force_(force),
      want_direct_(direct_io),
      writer_([this](std::string_view chunk) { write_chunk(chunk); }, kWriteChunkBytes,
              kMaxWriteChunks) {
  dir_fd_ = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd_ < 0) {
    const int error = errno;
    throw std::runtime_error(error == ENOTDIR
                                 ? fmt::format("output {} is not a directory", dir_)
                                 : fmt::format("output directory {}: {}", dir_, errno_text(error)));
  }
}

PosixFileSink::~PosixFileSink() {
  close_current();
  ::close(dir_fd_);
}

void PosixFileSink::close_current() {
  writer_.drain();
  if (fd_ >= 0) {
    // A partial file that never received a byte holds nothing to resume
    // from: an OFFER that was declined or cut off leaves no file behind.
    struct stat st {};
    if (::fstat(fd_, &st) == 0 && st.st_size == 0 && leaf_fd_ >= 0) {
      ::unlinkat(leaf_fd_, partial_base_.c_str(), 0);
    }
    ::close(fd_);
    fd_ = -1;
  }
  if (leaf_fd_ >= 0) {
    ::close(leaf_fd_);
    leaf_fd_ = -1;
  }
}

std::string PosixFileSink::partial_name(std::string_view name, const Sha256Digest& sha256) {
  const std::string id = to_hex(sha256).substr(0, 16);
  // "." + name + "." + 16 hex + ".part" must fit NAME_MAX (255 bytes) for
  // every name the protocol allows (up to 255 bytes): a long name keeps its
  // first bytes and adds 8 hex of its own SHA-256, so two long names with the
  // same beginning still get different partial files.
  constexpr size_t kNameMax = 255;
  constexpr size_t kOverhead = 1 + 1 + 16 + 5;  // ".", ".", id, ".part"
  if (name.size() + kOverhead <= kNameMax) {
    return fmt::format(".{}.{}.part", name, id);
  }
  constexpr size_t kTag = 1 + 8;  // "~" + 8 hex
  const std::string_view head = name.substr(0, kNameMax - kOverhead - kTag);
  return fmt::format(".{}~{}.{}.part", head, to_hex(tinytcp::sha256(name)).substr(0, 8), id);
}

bool PosixFileSink::is_partial_name(std::string_view name) {
  // "." NAME "." 16 hex ".part", NAME at least one byte.
  constexpr std::string_view kSuffix = ".part";
  constexpr size_t kId = 16;
  if (name.size() < 1 + 1 + 1 + kId + kSuffix.size() || name.front() != '.' ||
      name.substr(name.size() - kSuffix.size()) != kSuffix) {
    return false;
  }
  const std::string_view id = name.substr(name.size() - kSuffix.size() - kId, kId);
  const char dot = name[name.size() - kSuffix.size() - kId - 1];
  return dot == '.' && id.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

namespace {

bool has_partial_component(std::string_view path) {
  for (const auto part : proto::split_path(path)) {
    if (PosixFileSink::is_partial_name(part)) {
      return true;
    }
  }
  return false;
}

// Removes stale partial files below the directory `fd` (taken over and
// closed); `depth` bounds the walk as the protocol bounds paths.
size_t sweep_partials(int fd, int64_t cutoff, size_t depth) {
  DIR* dir = ::fdopendir(fd);
  if (dir == nullptr) {
    ::close(fd);
    return 0;
  }
  size_t removed = 0;
  std::vector<std::string> subdirectories;
  while (const dirent* e = ::readdir(dir)) {
    const std::string_view name = e->d_name;
    if (name == "." || name == "..") {
      continue;
    }
    struct stat st {};
    if (::fstatat(::dirfd(dir), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
      continue;
    }
    if (S_ISDIR(st.st_mode)) {
      if (depth + 1 < proto::kMaxPathDepth) {
        subdirectories.emplace_back(name);
      }
    } else if (S_ISREG(st.st_mode) && PosixFileSink::is_partial_name(name) &&
               static_cast<int64_t>(st.st_mtime) < cutoff &&
               ::unlinkat(::dirfd(dir), e->d_name, 0) == 0) {
      ++removed;
    }
  }
  for (const auto& sub : subdirectories) {
    const int sub_fd =
        ::openat(::dirfd(dir), sub.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sub_fd >= 0) {
      removed += sweep_partials(sub_fd, cutoff, depth + 1);
    }
  }
  ::closedir(dir);
  return removed;
}

}  // namespace

size_t PosixFileSink::remove_stale_partials(std::chrono::seconds ttl) {
  const int64_t now = static_cast<int64_t>(std::chrono::duration_cast<std::chrono::seconds>(
                                               std::chrono::system_clock::now().time_since_epoch())
                                               .count());
  const int fd = ::dup(dir_fd_);
  return fd < 0 ? 0 : sweep_partials(fd, now - ttl.count(), 0);
}

int PosixFileSink::sync_directory(int fd) {
  return ::fsync(fd);
}

int PosixFileSink::open_directory(std::string_view path, size_t levels, bool create,
                                  std::string& why) {
  const auto parts = proto::split_path(path);
  int cur = ::dup(dir_fd_);
  if (cur < 0) {
    why = fmt::format("{}: {}", dir_, errno_text(errno));
    return -1;
  }
  std::string walked;
  for (size_t i = 0; i < levels && i < parts.size(); ++i) {
    const std::string part(parts[i]);
    walked += (walked.empty() ? "" : "/") + part;
    // Past the cap, only directories that exist are walked (openat below
    // fails with ENOENT for a missing one).
    if (create && directories_created_ < max_new_directories_) {
      if (::mkdirat(cur, part.c_str(), 0755) == 0) {
        ++directories_created_;
        // The new entry survives a crash, like the files below it.
        if (sync_directory(cur) != 0) {
          const int error = errno;
          ::close(cur);
          why = fmt::format("fsync {}/{}: {}", dir_, walked, errno_text(error));
          errno = error;
          return -1;
        }
      } else if (errno != EEXIST) {
        const int error = errno;
        ::close(cur);
        why = fmt::format("cannot create {}/{}: {}", dir_, walked, errno_text(error));
        errno = error;
        return -1;
      }
    }
    // O_NOFOLLOW: a symlink here is refused (ELOOP), never followed out of
    // the output directory; O_DIRECTORY: so is anything not a directory.
    const int next = ::openat(cur, part.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    const int error = errno;
    ::close(cur);
    if (next < 0 && create && error == ENOENT && directories_created_ >= max_new_directories_) {
      why = fmt::format("cannot create {}/{}: at most {} new directories per session", dir_, walked,
                        max_new_directories_);
      errno = error;
      return -1;
    }
    if (next < 0) {
      why = error == ELOOP || error == ENOTDIR
                ? fmt::format("{}/{} is a symlink or not a directory (not followed)", dir_, walked)
                : fmt::format("cannot open {}/{}: {}", dir_, walked, errno_text(error));
      errno = error;
      return -1;
    }
    cur = next;
  }
  return cur;
}

namespace {

// The last component of a checked path.
std::string last_component(std::string_view path) {
  const auto parts = proto::split_path(path);
  return parts.empty() ? std::string() : std::string(parts.back());
}

size_t parent_levels(std::string_view path) {
  const size_t n = proto::split_path(path).size();
  return n > 0 ? n - 1 : 0;
}

}  // namespace

bool PosixFileSink::exists(std::string_view path) {
  if (has_partial_component(path)) {
    return true;  // refused as if taken, whether or not a partial file is there
  }
  std::string why;
  const int parent = open_directory(path, parent_levels(path), false, why);
  if (parent < 0) {
    // A missing directory: nothing there. A symlink or file in the way is
    // refused when the offer tries to create the directory.
    return false;
  }
  struct stat st {};
  const bool found = ::fstatat(parent, last_component(path).c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
  ::close(parent);
  return found;
}

std::optional<uint64_t> PosixFileSink::existing_size(std::string_view path) {
  if (has_partial_component(path)) {
    return std::nullopt;  // never confirmed: its size is nobody's business
  }
  std::string why;
  const int parent = open_directory(path, parent_levels(path), false, why);
  if (parent < 0) {
    return std::nullopt;
  }
  struct stat st {};
  const bool found = ::fstatat(parent, last_component(path).c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
  ::close(parent);
  if (!found || !S_ISREG(st.st_mode)) {
    return std::nullopt;
  }
  return static_cast<uint64_t>(st.st_size);
}

Expected<Sha256Digest, std::string> PosixFileSink::hash_existing(std::string_view path) {
  if (has_partial_component(path)) {
    return make_unexpected(fmt::format("{}: a name reserved for partial files", path));
  }
  std::string why;
  const int parent = open_directory(path, parent_levels(path), false, why);
  if (parent < 0) {
    return make_unexpected(why);
  }
  const int fd = ::openat(parent, last_component(path).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  const int error = errno;
  ::close(parent);
  if (fd < 0) {
    return make_unexpected(fmt::format("cannot open {}/{}: {}", dir_, path, errno_text(error)));
  }
  Sha256 hash;
  std::string buf(kHashChunk, '\0');
  for (;;) {
    const ssize_t got = ::read(fd, buf.data(), buf.size());
    if (got < 0 && errno == EINTR) {
      continue;
    }
    if (got < 0) {
      const int read_error = errno;
      ::close(fd);
      return make_unexpected(
          fmt::format("cannot read {}/{}: {}", dir_, path, errno_text(read_error)));
    }
    if (got == 0) {
      break;
    }
    hash.update(std::string_view(buf).substr(0, static_cast<size_t>(got)));
  }
  ::close(fd);
  return hash.finish();
}

Expected<bool, std::string> PosixFileSink::make_directory(std::string_view path) {
  if (has_partial_component(path)) {
    return make_unexpected(fmt::format("{}: a name reserved for partial files", path));
  }
  std::string why;
  const int fd = open_directory(path, proto::split_path(path).size(), true, why);
  if (fd < 0) {
    return make_unexpected(why);
  }
  ::close(fd);
  return true;
}

uint64_t PosixFileSink::free_space() {
  struct statvfs vfs {};
  if (::fstatvfs(dir_fd_, &vfs) != 0) {
    return 0;
  }
  if (vfs.f_blocks == 0) {
    // No size at all: ramfs, or tmpfs mounted with size=0, which grow
    // until memory runs out. Nothing to check against; a full disk still
    // fails the write (and keeps the partial file).
    return UINT64_MAX;
  }
  return static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
}

Expected<proto::PartialFile, std::string> PosixFileSink::open(std::string_view path,
                                                              const Sha256Digest& sha256) {
  close_current();  // the worker is idle from here on
  write_failed_.store(false, std::memory_order_relaxed);
  write_error_.clear();
  unsynced_ = 0;
  direct_io_ = want_direct_;
  direct_on_ = false;
  buffered_unsynced_ = false;
  if (has_partial_component(path)) {
    return make_unexpected(fmt::format("{}: a name reserved for partial files", path));
  }
  std::string why;
  leaf_fd_ = open_directory(path, parent_levels(path), true, why);
  if (leaf_fd_ < 0) {
    return make_unexpected(why);
  }
  base_name_ = last_component(path);
  partial_base_ = partial_name(base_name_, sha256);
  const auto slash = path.rfind('/');
  final_path_ = fmt::format("{}/{}", dir_, path);
  partial_path_ =
      fmt::format("{}/{}{}", dir_, slash == std::string_view::npos ? "" : path.substr(0, slash + 1),
                  partial_base_);
  fd_ = ::openat(leaf_fd_, partial_base_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd_ < 0) {
    const int error = errno;
    close_current();
    return make_unexpected(fmt::format("cannot open {}: {}", partial_path_, errno_text(error)));
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    close_current();
    return make_unexpected(fmt::format("{} is not a regular file", partial_path_));
  }
  const auto held = static_cast<uint64_t>(st.st_size);
  if (::lseek(fd_, 0, SEEK_END) < 0) {
    const int error = errno;
    close_current();
    return make_unexpected(fmt::format("cannot seek {}: {}", partial_path_, errno_text(error)));
  }
  written_ = held;
  writer_.set_offset(held);
  return proto::PartialFile{held};
}

Expected<bool, std::string> PosixFileSink::hash_prefix(uint64_t n, proto::ContentHash& hash) {
  if (const auto drained = drain_writes(); !drained) {
    return drained;
  }
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
  if (const auto drained = drain_writes(); !drained) {
    return drained;
  }
  if (::ftruncate(fd_, static_cast<off_t>(n)) != 0 ||
      ::lseek(fd_, static_cast<off_t>(n), SEEK_SET) < 0) {
    return make_unexpected(fmt::format("cannot truncate {}: {}", partial_path_, errno_text(errno)));
  }
  written_ = n;
  writer_.set_offset(n);
  return true;
}

Expected<bool, std::string> PosixFileSink::write(std::string_view data) {
  if (write_failed_.load(std::memory_order_acquire)) {
    return make_unexpected(write_error_);
  }
  writer_.append(data);
  return true;
}

Expected<bool, std::string> PosixFileSink::drain_writes() {
  writer_.drain();
  if (write_failed_.load(std::memory_order_acquire)) {
    return make_unexpected(write_error_);
  }
  // pread, ftruncate and the tail need no alignment.
  if (!use_direct(false)) {
    return make_unexpected(
        fmt::format("{}: cannot clear O_DIRECT: {}", partial_path_, errno_text(errno)));
  }
  return true;
}

bool PosixFileSink::use_direct(bool on) {
  if (on == direct_on_ || fd_ < 0) {
    return true;
  }
  const int flags = ::fcntl(fd_, F_GETFL);
  if (flags < 0 || ::fcntl(fd_, F_SETFL, on ? flags | O_DIRECT : flags & ~O_DIRECT) != 0) {
    return false;
  }
  direct_on_ = on;
  return true;
}

void PosixFileSink::write_chunk(std::string_view data) {
  if (write_failed_.load(std::memory_order_relaxed) || fd_ < 0) {
    return;  // after a failure nothing more: the partial file stays a prefix
  }
  const auto failed = [this](const char* what) {
    write_error_ = fmt::format("{}: {}{} (partial file kept for resume)", partial_path_, what,
                               errno_text(errno));
    write_failed_.store(true, std::memory_order_release);
  };
  while (!data.empty()) {
    // Whole blocks at a block-aligned offset, from block-aligned memory, go
    // around the page cache; anything else through it.
    const bool aligned = written_ % kDirectAlignment == 0 &&
                         reinterpret_cast<uintptr_t>(data.data()) % kDirectAlignment == 0;
    const size_t direct =
        direct_io_ && aligned ? data.size() / kDirectAlignment * kDirectAlignment : 0;
    if (direct > 0 && buffered_unsynced_) {
      // Make the buffered bytes below durable before writing past them
      // direct, or a crash could leave a hole that reads back as zeros.
      if (::fdatasync(fd_) != 0) {
        failed("fdatasync: ");
        return;
      }
      buffered_unsynced_ = false;
    }
    if (!use_direct(direct > 0)) {
      if (direct == 0) {
        failed("cannot clear O_DIRECT: ");
        return;
      }
      direct_io_ = false;  // the file system has no O_DIRECT
      continue;
    }
    const ssize_t n = ::write(fd_, data.data(), direct > 0 ? direct : data.size());
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      if (direct > 0 && (errno == EINVAL || errno == EOPNOTSUPP)) {
        direct_io_ = false;  // refused here: the page cache for the rest of this file
        continue;
      }
      failed("");
      return;
    }
    data.remove_prefix(static_cast<size_t>(n));
    written_ += static_cast<uint64_t>(n);
    if (direct > 0) {
      direct_bytes_.fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
    } else {
      buffered_bytes_.fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
      unsynced_ += static_cast<uint64_t>(n);
      buffered_unsynced_ = true;
    }
  }
  // Start writeback of what went through the page cache every few MiB
  // (without waiting for it), so the fsync before the rename has little left
  // to do: a 1 GiB file would otherwise stall the event loop for long enough
  // that the sender's RTO fires.
  if (unsynced_ >= kWritebackEvery) {
    ::sync_file_range(fd_, 0, 0, SYNC_FILE_RANGE_WRITE);
    unsynced_ = 0;
  }
}

Expected<bool, std::string> PosixFileSink::commit() {
  if (const auto drained = drain_writes(); !drained) {
    return drained;
  }
  if (::fsync(fd_) != 0) {
    return make_unexpected(fmt::format("fsync {}: {}", partial_path_, errno_text(errno)));
  }
  ::close(fd_);
  fd_ = -1;
  // Never replace an existing file unless --force said so, even if one
  // appeared during the transfer. Both names are in the directory we hold
  // open, so a symlink planted above it since the offer changes nothing.
  const unsigned flags = force_ ? 0u : RENAME_NOREPLACE;
  if (::renameat2(leaf_fd_, partial_base_.c_str(), leaf_fd_, base_name_.c_str(), flags) != 0) {
    const int error = errno;
    close_current();
    return make_unexpected(fmt::format("cannot rename to {}: {}", final_path_, errno_text(error)));
  }
  // Make the rename itself durable. If that fails, the file is in place but
  // may be gone after a crash: not a stored file.
  if (sync_directory(leaf_fd_) != 0) {
    const int error = errno;
    close_current();
    return make_unexpected(
        fmt::format("fsync of the directory of {}: {} (the file may not "
                    "survive a crash)",
                    final_path_, errno_text(error)));
  }
  close_current();
  return true;
}

void PosixFileSink::discard() {
  if (leaf_fd_ >= 0) {
    ::unlinkat(leaf_fd_, partial_base_.c_str(), 0);
  }
  close_current();
}

}  // namespace tinytcp::apps
