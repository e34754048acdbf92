#pragma once

// An owned file descriptor: closed exactly once, movable, not copyable. Every
// fd that io/ opens lives in one of these, so an exception thrown half-way
// through setting up a device or socket leaks nothing.

#include <string>

namespace tinytcp::io {

class FileDescriptor {
 public:
  FileDescriptor() = default;
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() { reset(); }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  FileDescriptor(FileDescriptor&& other) noexcept : fd_(other.release()) {}
  FileDescriptor& operator=(FileDescriptor&& other) noexcept {
    if (this != &other) {
      reset(other.release());
    }
    return *this;
  }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  explicit operator bool() const { return valid(); }
  // Gives up ownership without closing.
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  // Closes the current fd (if any) and owns `fd` instead.
  void reset(int fd = -1);

  // Sets O_NONBLOCK; throws std::system_error on failure.
  void set_nonblocking();

 private:
  int fd_ = -1;
};

// Throws std::system_error(errno) whose what() names the attempted action,
// e.g. throw_errno("open /dev/net/tun") -> "open /dev/net/tun: Permission denied".
[[noreturn]] void throw_errno(const std::string& what);
[[noreturn]] void throw_errno(int error, const std::string& what);

}  // namespace tinytcp::io
