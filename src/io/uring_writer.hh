#pragma once

// Batched writes to one descriptor through io_uring: a batch of packets leaves
// as one WRITE each (the kernel sees the same one-packet writes as write(2)),
// but up to kEntries of them are submitted with one io_uring_enter, so the
// entry cost of a system call (~0.5 us on a VM with TSA mitigation) is paid
// once per batch, not once per packet. KernelDevice uses it for plain TUN and
// TAP devices when KernelDeviceConfig::uring asks for it.
//
// The WRITEs are issued in order with RWF_NOWAIT, so they complete inline: a
// full queue is -EAGAIN, not a wait (io_uring would otherwise poll for room). Built only with
// liburing (TINYTCP_HAVE_LIBURING); without it create() always says why not.
//
//   std::string why;
//   auto writer = UringWriter::create(fd, &why);  // nullptr: use write(2); `why` says why
//   writer->write(packets, count, [](size_t i, int result) { ... });  // bytes or -errno

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace tinytcp::io {

class UringWriter {
 public:
  static constexpr unsigned kEntries = 64;  // WRITEs per io_uring_enter at most

  // Result of one packet's WRITE: bytes written, or -errno.
  using Done = std::function<void(size_t index, int result)>;

  // A writer for `fd` (not owned; must outlive the writer), or nullptr with
  // `*why` set when io_uring cannot be used here: a build without liburing,
  // the kernel.io_uring_disabled sysctl, a seccomp filter, an old kernel.
  static std::unique_ptr<UringWriter> create(int fd, std::string* why);
  ~UringWriter();
  UringWriter(const UringWriter&) = delete;
  UringWriter& operator=(const UringWriter&) = delete;

  // Writes packets[0..count) in order, kEntries per io_uring_enter, and calls
  // `done` once per packet, in order. Returns how many packets it handled:
  // less than `count` only when submission itself failed (the ring is then
  // broken() and the caller writes the rest another way).
  size_t write(const std::string_view* packets, size_t count, const Done& done);

  bool broken() const { return broken_; }
  uint64_t enters() const { return enters_; }  // io_uring_enter calls that submitted

 private:
  struct Ring;
  UringWriter(int fd, std::unique_ptr<Ring> ring);
  // One chunk of at most kEntries; false when it could not be submitted (no
  // packet of it was written or reported).
  bool write_chunk(const std::string_view* packets, size_t count, size_t first, const Done& done);

  int fd_;
  std::unique_ptr<Ring> ring_;
  bool broken_ = false;
  bool nowait_ = true;  // RWF_NOWAIT on each WRITE (cleared if the fd refuses it)
  uint64_t enters_ = 0;
};

}  // namespace tinytcp::io
