#pragma once

// proto::ContentHash on a worker thread (a ChunkWorker): update() copies the
// bytes into a chunk and hands full chunks to the worker, so SHA-256 (about
// 2 GB/s here, a quarter of a file app's CPU time) runs beside the event loop
// instead of inside it. Memory is bounded: at most `max_chunks` chunks wait,
// and update() blocks when the worker is that far behind. finish() and peek()
// wait until every byte added so far is hashed.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/chunk_worker.hh"
#include "proto/content_hash.hh"

namespace tinytcp::apps {

class ThreadedContentHash final : public proto::ContentHash {
 public:
  static constexpr size_t kDefaultChunkBytes = 256 * 1024;
  static constexpr size_t kDefaultMaxChunks = 16;  // 4 MiB queued at most

  explicit ThreadedContentHash(size_t chunk_bytes = kDefaultChunkBytes,
                               size_t max_chunks = kDefaultMaxChunks);

  void update(std::string_view data) override { worker_.append(data); }
  Sha256Digest finish() override;
  Sha256Digest peek() override;

  // Times update() had to wait for the worker (the hash was the bottleneck).
  uint64_t stalls() const { return worker_.stalls(); }

 private:
  Sha256 sha_;          // the worker's while it runs; the caller's once drained
  ChunkWorker worker_;  // last: destroyed (and joined) before sha_
};

}  // namespace tinytcp::apps
