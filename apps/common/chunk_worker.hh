#pragma once

// ChunkWorker: moves per-byte work of the file apps (SHA-256, the receiver's
// file writes) off the event loop onto one worker thread. append()
// copies bytes into a chunk on the caller's thread; each full chunk goes to
// the worker, which calls `process` on the chunks one at a time, in order.
// Memory is bounded: at most `max_chunks` chunks wait, and append() blocks
// when the worker is that far behind. drain() hands over the partial chunk
// and waits until every byte appended so far is processed; after it the
// caller may touch whatever `process` uses (the mutex hand-off orders it).
//
// Chunks are cut at multiples of `chunk_bytes` of the stream offset (0 at
// construction, or what set_offset() said), and their memory is aligned to
// kAlignment: with a `chunk_bytes` that is a multiple of kAlignment, every
// chunk starts at an aligned address, and every chunk but the first after a
// set_offset() and the partial ones drain() hands over also starts on an
// aligned offset and is whole, so a file sink can write it with O_DIRECT.
//
// `process` runs on the worker thread only and must not throw.

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

namespace tinytcp::apps {

class ChunkWorker {
 public:
  using Process = std::function<void(std::string_view chunk)>;
  static constexpr size_t kAlignment = 4096;

  ChunkWorker(Process process, size_t chunk_bytes, size_t max_chunks);
  // Processes what was appended, then stops the worker.
  ~ChunkWorker();
  ChunkWorker(const ChunkWorker&) = delete;
  ChunkWorker& operator=(const ChunkWorker&) = delete;

  void append(std::string_view data);
  void drain();
  // The stream offset of the next byte appended. A partial chunk appended
  // before it is handed over first (cut where it is).
  void set_offset(uint64_t offset);

  // Times append() had to wait for the worker (the worker was the bottleneck).
  uint64_t stalls() const { return stalls_.load(std::memory_order_relaxed); }

 private:
  struct FreeBytes {
    void operator()(char* p) const { std::free(p); }
  };
  // chunk_bytes_ of kAlignment-aligned memory and how much of it is used.
  struct Chunk {
    std::unique_ptr<char[], FreeBytes> bytes;
    size_t size = 0;
  };

  Chunk new_chunk() const;
  void hand_over(std::unique_lock<std::mutex>& lock);  // current_ to the queue
  void run();

  const Process process_;
  const size_t chunk_bytes_;
  const size_t max_chunks_;
  // The caller's thread only: the chunk being filled by append(), and the
  // stream offset of its end.
  Chunk current_;
  uint64_t offset_ = 0;

  std::mutex mutex_;
  std::condition_variable work_;  // the worker waits for chunks or stop_
  std::condition_variable done_;  // the caller waits for room or idleness
  std::deque<Chunk> queue_;
  std::vector<Chunk> spare_;  // processed chunks, reused
  bool busy_ = false;         // the worker holds a chunk outside the lock
  bool stop_ = false;
  std::atomic<uint64_t> stalls_{0};  // read from any thread

  std::thread worker_;  // last: started once everything above exists
};

}  // namespace tinytcp::apps
