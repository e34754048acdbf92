#pragma once

// proto::ContentHash on a worker thread: update() copies the bytes into a
// chunk and hands full chunks to the worker, so SHA-256 (about 1.5 GB/s here,
// a quarter of a file app's CPU time) runs beside the event loop instead of
// inside it. Memory is bounded: at most `max_chunks` chunks wait, and update()
// blocks when the worker is that far behind. finish() and peek() wait until
// every byte added so far is hashed.

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "proto/content_hash.hh"

namespace tinytcp::apps {

class ThreadedContentHash final : public proto::ContentHash {
 public:
  static constexpr size_t kDefaultChunkBytes = 256 * 1024;
  static constexpr size_t kDefaultMaxChunks = 16;  // 4 MiB queued at most

  explicit ThreadedContentHash(size_t chunk_bytes = kDefaultChunkBytes,
                               size_t max_chunks = kDefaultMaxChunks);
  ~ThreadedContentHash() override;
  ThreadedContentHash(const ThreadedContentHash&) = delete;
  ThreadedContentHash& operator=(const ThreadedContentHash&) = delete;

  void update(std::string_view data) override;
  Sha256Digest finish() override;
  Sha256Digest peek() override;

  // Times update() had to wait for the worker (the hash was the bottleneck).
  uint64_t stalls() const { return stalls_; }

 private:
  void hand_over(std::unique_lock<std::mutex>& lock);  // current_ to the queue
  void wait_idle(std::unique_lock<std::mutex>& lock);
  void run();

  const size_t chunk_bytes_;
  const size_t max_chunks_;
  std::string current_;  // being filled by update(); the caller's thread only

  std::mutex mutex_;
  std::condition_variable work_;  // the worker waits for chunks or stop_
  std::condition_variable done_;  // the caller waits for room or idleness
  std::deque<std::string> queue_;
  std::vector<std::string> spare_;  // hashed chunks, reused
  bool busy_ = false;               // the worker holds a chunk outside the lock
  bool stop_ = false;
  uint64_t stalls_ = 0;
  Sha256 sha_;  // the worker's while it runs; the caller's once idle

  std::thread worker_;  // last: started once everything above exists
};

}  // namespace tinytcp::apps
