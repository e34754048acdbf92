#pragma once

// POSIX implementations of the file-transfer protocol's FileSource and
// FileSink. The sink writes into `.<name>.<hash16>.part` in the file's
// directory, fsyncs it, and renames it to the final name only after the
// protocol has verified the whole file's SHA-256; an interrupted transfer
// leaves the partial file for the next run to resume.
//
// The sink's writes go through a ChunkWorker: write() copies the bytes into
// a chunk and returns, and a worker thread writes the chunks, so the event
// loop that called write() does not spend a fifth of its time in the
// kernel's write path. A write that fails is reported by the next write() or
// by commit(); nothing after it is written, so the partial file stays a
// prefix of the data for resume. Every other call waits for the pending
// writes first.
//
// With `direct_io` (the default) whole 4 KiB blocks at block-aligned offsets
// are written with O_DIRECT: straight from the chunk to the device, without a
// copy into the page cache. On a 2-core machine that copy (and the page-cache
// pages it has to allocate and later write back) was the largest single cost
// of receiving a file. Through the page cache go: a resumed file's bytes up to
// the next chunk boundary (256 KiB), the last part-block of a file, and
// everything on a file system that refuses O_DIRECT (EINVAL, EOPNOTSUPP), for
// the rest of that file; writeback of those is started every few MiB so the
// fsync before the rename has little left to do. Before the first direct
// write past buffered bytes, those are synced, so that a crash cannot leave a
// hole below bytes written direct and the partial file stays a prefix.
//
// The sink opens the output directory once and reaches everything below it
// with openat/mkdirat/renameat relative to directory descriptors, one path
// component at a time with O_NOFOLLOW|O_DIRECTORY: a symlink planted in the
// output tree (or a file where a directory should be) makes the offer fail,
// never a write outside the output directory.

#include <atomic>
#include <chrono>
#include <optional>
#include <string>

#include "common/chunk_worker.hh"
#include "common/posix_file_source.hh"
#include "proto/file_source.hh"

namespace tinytcp::apps {

class PosixFileSink : public proto::FileSink {
 public:
  static constexpr size_t kWriteChunkBytes = 256 * 1024;
  static constexpr size_t kMaxWriteChunks = 16;  // 4 MiB waiting at most
  static constexpr size_t kDirectAlignment = ChunkWorker::kAlignment;
  static_assert(kWriteChunkBytes % kDirectAlignment == 0, "chunks must be whole blocks");

  // `dir` must exist and be a directory; throws std::runtime_error otherwise.
  PosixFileSink(std::string dir, bool force, bool direct_io = true);
  ~PosixFileSink() override;
  PosixFileSink(const PosixFileSink&) = delete;
  PosixFileSink& operator=(const PosixFileSink&) = delete;

  bool exists(std::string_view path) override;
  std::optional<uint64_t> existing_size(std::string_view path) override;
  Expected<Sha256Digest, std::string> hash_existing(std::string_view path) override;
  Expected<bool, std::string> make_directory(std::string_view path) override;
  uint64_t free_space() override;
  Expected<proto::PartialFile, std::string> open(std::string_view path,
                                                 const Sha256Digest& sha256) override;
  Expected<bool, std::string> hash_prefix(uint64_t n, proto::ContentHash& hash) override;
  Expected<bool, std::string> truncate(uint64_t n) override;
  Expected<bool, std::string> write(std::string_view data) override;
  Expected<bool, std::string> commit() override;
  void discard() override;

  static std::string partial_name(std::string_view name, const Sha256Digest& sha256);
  // True when `name` (one path component) has the form of partial_name():
  // such names are refused in an OFFER, as files and as directories.
  static bool is_partial_name(std::string_view name);
  // Removes partial files (is_partial_name, regular files) below the output
  // directory last modified more than `ttl` ago; returns how many. Symlinks
  // are never followed. Call it between sessions.
  size_t remove_stale_partials(std::chrono::seconds ttl);

  // At most `n` directories created by this sink (one session): an OFFER
  // of a 64-level path makes up to 63 of them, each an inode and an fsync.
  // Existing directories are always fine.
  void set_max_new_directories(uint64_t n) { max_new_directories_ = n; }
  uint64_t directories_created() const { return directories_created_; }

  // Bytes written with O_DIRECT and through the page cache, over every file.
  uint64_t direct_bytes() const { return direct_bytes_.load(std::memory_order_relaxed); }
  uint64_t buffered_bytes() const { return buffered_bytes_.load(std::memory_order_relaxed); }

 protected:
  // fsync(2) of a directory; a test makes it fail.
  virtual int sync_directory(int fd);

 private:
  // Waits for the pending writes; then the first failure, if any.
  Expected<bool, std::string> drain_writes();
  void write_chunk(std::string_view chunk);  // on the worker thread
  // Sets or clears O_DIRECT on fd_; false if the file system refuses it.
  bool use_direct(bool on);
  void close_current();
  // The directory holding `path`'s last component (`levels` = how many of
  // its components are directories to walk), as an fd the caller closes;
  // creates missing ones when `create`. -1 and errno set on failure, with
  // `why` naming the component.
  int open_directory(std::string_view path, size_t levels, bool create, std::string& why);

  std::string dir_;
  bool force_;
  uint64_t max_new_directories_ = UINT64_MAX;
  uint64_t directories_created_ = 0;
  int dir_fd_ = -1;   // the output directory
  int leaf_fd_ = -1;  // the current file's directory
  int fd_ = -1;       // the current partial file
  std::string base_name_;
  std::string partial_base_;
  static constexpr uint64_t kWritebackEvery = 8 << 20;
  // The worker's (the caller's while it is idle):
  const bool want_direct_;          // the constructor's direct_io
  bool direct_io_ = false;          // O_DIRECT still worth trying for this file
  bool direct_on_ = false;          // fd_ has O_DIRECT set
  bool buffered_unsynced_ = false;  // page-cache bytes not yet made durable
  uint64_t written_ = 0;            // the file offset the next chunk is written at
  uint64_t unsynced_ = 0;           // bytes written to the page cache since writeback started
  std::atomic<uint64_t> direct_bytes_{0};
  std::atomic<uint64_t> buffered_bytes_{0};
  std::string final_path_;
  std::string partial_path_;
  // Set by the worker (after write_error_) when a write fails; cleared by
  // open() once the worker is idle.
  std::atomic<bool> write_failed_{false};
  std::string write_error_;
  ChunkWorker writer_;  // last: joined before the members it writes through
};

}  // namespace tinytcp::apps
