#pragma once

// Batched reads from one descriptor through io_uring: up to kEntries READs,
// each into its own buffer, submitted with one io_uring_enter, so a busy TUN
// or TAP device costs one system call per batch of packets instead of one
// read(2) per packet (~0.5 us each on a VM with TSA mitigation). KernelDevice
// uses it beside UringWriter when KernelDeviceConfig::uring asks for it.
//
// The READs carry RWF_NOWAIT and run in order while the kernel takes the
// submission: each takes the next packet, and one that finds the device
// empty completes with -EAGAIN at once instead of waiting (io_uring would
// otherwise poll). So a batch ends early when the device runs dry, and a
// datagram read after an -EAGAIN (it arrived meanwhile) is still in order.
//
// The buffers belong to the reader and are reused by the next read(): a
// datagram's view is valid until then, which is how long the stack may look
// at a packet handed up by receive_batch(). The buffers are allocated once
// and left uninitialized, so only the pages that packets were read into are
// resident. Built only with liburing (TINYTCP_HAVE_LIBURING); without it
// create() always says why not.
//
//   std::string why;
//   auto reader = UringReader::create(fd, 65536, &why);  // nullptr: use read(2)
//   const size_t ran = reader->read(n);  // then result(i) and datagram(i), i < ran

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace tinytcp::io {

class UringReader {
 public:
  static constexpr unsigned kEntries = 64;  // READs per io_uring_enter at most

  // A reader for `fd` (not owned; must outlive the reader) with kEntries
  // buffers of `buffer_bytes` each, or nullptr with `*why` set when io_uring
  // cannot be used here: a build without liburing, the
  // kernel.io_uring_disabled sysctl, a seccomp filter, an old kernel.
  static std::unique_ptr<UringReader> create(int fd, size_t buffer_bytes, std::string* why);
  ~UringReader();
  UringReader(const UringReader&) = delete;
  UringReader& operator=(const UringReader&) = delete;

  // Submits `count` (1..kEntries) READs in one io_uring_enter and waits for
  // their completions (they complete inline: RWF_NOWAIT). Returns how many
  // READs ran: results 0..n are valid. Fewer than `count` only when the
  // kernel did not take them all, 0 when submission failed or the descriptor
  // refuses RWF_NOWAIT; the reader is then broken() (read(2) from now on).
  size_t read(size_t count);
  // After read(): READ i's result, bytes read or -errno (-EAGAIN: the device
  // was empty), and its datagram (valid until the next read()).
  int result(size_t i) const;
  std::string_view datagram(size_t i) const;

  bool broken() const { return broken_; }
  uint64_t enters() const { return enters_; }  // io_uring_enter calls that submitted

 private:
  struct Ring;
  UringReader(int fd, size_t buffer_bytes, std::unique_ptr<Ring> ring);

  int fd_;
  size_t buffer_bytes_;
  std::unique_ptr<char[]> buffers_;  // kEntries * buffer_bytes_, uninitialized
  std::unique_ptr<Ring> ring_;
  int results_[kEntries] = {};
  size_t count_ = 0;  // READs of the last read()
  bool broken_ = false;
  uint64_t enters_ = 0;
};

}  // namespace tinytcp::io
