#include "io/file_descriptor.hh"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace tinytcp::io {

void FileDescriptor::reset(int fd) {
  if (fd_ >= 0 && fd_ != fd) {
    // close() releases the fd even when it reports EINTR on Linux; never retry.
    static_cast<void>(::close(fd_));
  }
  fd_ = fd;
}

void FileDescriptor::set_nonblocking() {
  const int flags = ::fcntl(fd_, F_GETFL);
  if (flags < 0 || ::fcntl(fd_, F_SETFL, flags | O_NONBLOCK) < 0) {
    throw_errno("fcntl O_NONBLOCK");
  }
}

void throw_errno(const std::string& what) {
  throw_errno(errno, what);
}

void throw_errno(int error, const std::string& what) {
  throw std::system_error(error, std::generic_category(), what);
}

}  // namespace tinytcp::io
