#pragma once

// The SHA-256 the file-transfer protocol keeps of a file's bytes as they pass
// (the sender's TRAILER, the receiver's check). Behind an interface so that an
// app can run it beside its event loop: SHA-256 is about a quarter of either
// side's CPU time in a bulk transfer (docs/benchmarks.md), and proto/ itself
// never starts a thread. InlineContentHash, the default, hashes in the
// caller's thread.

#include <string_view>

#include "util/hash.hh"

namespace tinytcp::proto {

class ContentHash {
 public:
  virtual ~ContentHash() = default;
  // Adds bytes; they may be hashed later, but `data` need not outlive the call.
  virtual void update(std::string_view data) = 0;
  // The digest of everything added since the last finish(); then starts over.
  virtual Sha256Digest finish() = 0;
  // The digest so far, leaving the running hash untouched.
  virtual Sha256Digest peek() = 0;
};

class InlineContentHash final : public ContentHash {
 public:
  void update(std::string_view data) override { sha_.update(data); }
  Sha256Digest finish() override { return sha_.finish(); }
  Sha256Digest peek() override { return sha_.peek(); }

 private:
  Sha256 sha_;
};

}  // namespace tinytcp::proto
