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
// An enter can carry a batch of WRITEs in front of its READs (write_then_read):
// an event loop's pass then costs one io_uring_enter for what it sends and the
// next packets it reads, instead of one for each. The WRITEs run first, in
// order, also with RWF_NOWAIT; on a TUN device the kernel answers a written
// TCP segment (an ACK) in the writer's context, so the READs behind it find
// the answer at once. The written packets are the caller's and must not lie in
// this reader's buffers while READs may land there.
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
  static constexpr unsigned kEntries = 64;  // READs (and WRITEs) per io_uring_enter at most

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
  // As read(count), behind up to kEntries WRITEs of packets[0..writes) in the
  // same io_uring_enter; write_results[i] gets WRITE i's result (bytes or
  // -errno; -ECANCELED when the kernel did not take it or its completion was
  // lost: it was not written). Returns false when nothing was submitted (no
  // WRITE ran, the reader is broken()); reads() then is 0.
  bool write_then_read(const std::string_view* packets, size_t writes, int* write_results,
                       size_t count);
  size_t reads() const { return count_; }  // READs of the last enter that ran
  // After read(): READ i's result, bytes read or -errno (-EAGAIN: the device
  // was empty), and its datagram (valid until the next read()).
  int result(size_t i) const;
  std::string_view datagram(size_t i) const;

  bool broken() const { return broken_; }
  uint64_t enters() const { return enters_; }              // io_uring_enter calls that submitted
  uint64_t write_enters() const { return write_enters_; }  // of them, with WRITEs in front

 private:
  struct Ring;
  UringReader(int fd, size_t buffer_bytes, std::unique_ptr<Ring> ring);

  int fd_;
  size_t buffer_bytes_;
  std::unique_ptr<char[]> buffers_;  // kEntries * buffer_bytes_, uninitialized
  std::unique_ptr<Ring> ring_;
  int results_[2 * kEntries] = {};  // the WRITEs', then the READs'
  size_t first_read_ = 0;           // where the READs' results start
  size_t count_ = 0;                // READs of the last read()
  bool broken_ = false;
  uint64_t enters_ = 0;
  uint64_t write_enters_ = 0;
};

}  // namespace tinytcp::io
