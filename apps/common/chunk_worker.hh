#pragma once

// ChunkWorker: moves per-byte work of the file apps (SHA-256, the receiver's
// page-cache writes) off the event loop onto one worker thread. append()
// copies bytes into a chunk on the caller's thread; each full chunk goes to
// the worker, which calls `process` on the chunks one at a time, in order.
// Memory is bounded: at most `max_chunks` chunks wait, and append() blocks
// when the worker is that far behind. drain() hands over the partial chunk
// and waits until every byte appended so far is processed; after it the
// caller may touch whatever `process` uses (the mutex hand-off orders it).
//
// `process` runs on the worker thread only and must not throw.

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace tinytcp::apps {

class ChunkWorker {
 public:
  using Process = std::function<void(std::string_view chunk)>;

  ChunkWorker(Process process, size_t chunk_bytes, size_t max_chunks);
  // Processes what was appended, then stops the worker.
  ~ChunkWorker();
  ChunkWorker(const ChunkWorker&) = delete;
  ChunkWorker& operator=(const ChunkWorker&) = delete;

  void append(std::string_view data);
  void drain();

  // Times append() had to wait for the worker (the worker was the bottleneck).
  uint64_t stalls() const { return stalls_.load(std::memory_order_relaxed); }

 private:
  void hand_over(std::unique_lock<std::mutex>& lock);  // current_ to the queue
  void run();

  const Process process_;
  const size_t chunk_bytes_;
  const size_t max_chunks_;
  std::string current_;  // being filled by append(); the caller's thread only

  std::mutex mutex_;
  std::condition_variable work_;  // the worker waits for chunks or stop_
  std::condition_variable done_;  // the caller waits for room or idleness
  std::deque<std::string> queue_;
  std::vector<std::string> spare_;  // processed chunks, reused
  bool busy_ = false;               // the worker holds a chunk outside the lock
  bool stop_ = false;
  std::atomic<uint64_t> stalls_{0};  // read from any thread

  std::thread worker_;  // last: started once everything above exists
};

}  // namespace tinytcp::apps
