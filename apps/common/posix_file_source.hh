#pragma once

// PosixFileSource: the file-transfer protocol's FileSource on a POSIX file
// (file-send's side), and the identity a tree scan checks it against.

#include <cstdint>
#include <optional>
#include <string>

#include "proto/file_source.hh"

namespace tinytcp::apps {

// Which file a path named when it was looked at (lstat's st_dev, st_ino).
struct FileIdentity {
  uint64_t device = 0;
  uint64_t inode = 0;
};

class PosixFileSource : public proto::FileSource {
 public:
  // Throws std::runtime_error ("cannot open PATH: reason") on failure. With
  // `expected` (a file a tree scan found), the last component is not
  // followed if it is now a symlink (O_NOFOLLOW), and the file opened must
  // be the one scanned: a file swapped for a symlink or another file after
  // the scan (a directory above it included) is refused, never sent.
  explicit PosixFileSource(const std::string& path,
                           std::optional<FileIdentity> expected = std::nullopt);
  ~PosixFileSource() override;
  PosixFileSource(const PosixFileSource&) = delete;
  PosixFileSource& operator=(const PosixFileSource&) = delete;

  uint64_t size() const override { return size_; }
  Expected<size_t, std::string> read(uint64_t offset, char* out, size_t n) override;
  // The protocol's file id: SHA-256 of the size (decimal) and the first and
  // last kIdEdgeBytes (two reads, whatever the size; they overlap in a file
  // shorter than two edges). It only names the receiver's partial file:
  // resume is proven by the prefix's SHA-256, so the id need not cover every
  // byte, and it is on the critical path (the OFFER waits for it).
  static constexpr uint64_t kIdEdgeBytes = 64 * 1024;
  Sha256Digest file_id();

 private:
  int fd_ = -1;
  uint64_t size_ = 0;
};

}  // namespace tinytcp::apps
