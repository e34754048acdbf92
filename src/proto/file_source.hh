#pragma once

// The file-transfer protocol's view of the files it moves. The protocol is
// sans-I/O: it never opens a file itself. Apps implement these interfaces on
// POSIX files (io/), tests on strings in memory.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "proto/content_hash.hh"
#include "util/expected.hh"
#include "util/hash.hh"

namespace tinytcp::proto {

// Where a sender's bytes come from.
class FileSource {
 public:
  virtual ~FileSource() = default;
  virtual uint64_t size() const = 0;
  // Reads up to `n` bytes at `offset` into `out`; returns the count (0 only at
  // or past the end) or an error message.
  virtual Expected<size_t, std::string> read(uint64_t offset, char* out, size_t n) = 0;
};

// What a receiver holds of a file it may be resuming.
struct PartialFile {
  uint64_t held = 0;  // bytes already on disk from an earlier, interrupted run
};

// Where a receiver's bytes go. The final name appears only in commit(), after
// the data is durable (fsync) and verified; until then bytes live in a partial
// file that survives an interruption, so the same transfer can resume.
//
// Paths are relative to the sink's output directory, '/'-separated and
// already checked with is_safe_path(). A sink never follows a symlink on the
// way, so nothing lands outside its output directory.
class FileSink {
 public:
  virtual ~FileSink() = default;
  // True when something (file, directory, symlink) is at this final path.
  virtual bool exists(std::string_view path) = 0;
  // The size of the regular file at this final path, if there is one.
  virtual std::optional<uint64_t> existing_size(std::string_view path) = 0;
  // The SHA-256 of the regular file at this final path.
  virtual Expected<Sha256Digest, std::string> hash_existing(std::string_view path) = 0;
  // Creates the directory at `path` and any missing directory above it; an
  // existing directory is fine, anything else in the way is an error.
  virtual Expected<bool, std::string> make_directory(std::string_view path) = 0;
  // Free bytes where the file will be written (UINT64_MAX: the file system
  // has no fixed size to check against).
  virtual uint64_t free_space() = 0;
  // Opens (creating if needed) the partial file for the file at `path`
  // with id `file_id` (proto::Offer::file_id): a partial file kept for another
  // id is never resumed. The directory above `path` exists (make_directory).
  virtual Expected<PartialFile, std::string> open(std::string_view path,
                                                  const Sha256Digest& file_id) = 0;
  // Feeds the first `n` held bytes to `hash` (to check and continue a resume).
  virtual Expected<bool, std::string> hash_prefix(uint64_t n, ContentHash& hash) = 0;
  // Drops held bytes past `n`.
  virtual Expected<bool, std::string> truncate(uint64_t n) = 0;
  // Appends to the partial file.
  virtual Expected<bool, std::string> write(std::string_view data) = 0;
  // Makes the partial file durable and renames it to the final name
  // (replacing an existing file only when the receiver allowed it).
  virtual Expected<bool, std::string> commit() = 0;
  // Deletes the partial file (its content is known to be wrong).
  virtual void discard() = 0;
};

}  // namespace tinytcp::proto
