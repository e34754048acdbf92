#include "common/chunk_worker.hh"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace tinytcp::apps {
namespace {

std::string pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) {
    s[i] = static_cast<char>('a' + i * 31 % 26);
  }
  return s;
}

// Whatever the pieces, the worker sees the bytes in order, in chunks of the
// configured size (the last one shorter), and only on its own thread.
TEST(ChunkWorkerTest, ProcessesEveryByteInOrderInWholeChunks) {
  const std::string data = pattern(100'003);
  std::string seen;
  std::vector<size_t> sizes;
  std::thread::id worker_thread;
  const auto caller = std::this_thread::get_id();
  {
    ChunkWorker w(
        [&](std::string_view chunk) {
          seen.append(chunk);
          sizes.push_back(chunk.size());
          worker_thread = std::this_thread::get_id();
        },
        1000, 2);
    std::mt19937 rng(7);
    std::string_view rest(data);
    while (!rest.empty()) {
      const size_t n = std::min<size_t>(rest.size(), rng() % 2500);
      w.append(rest.substr(0, n));
      rest.remove_prefix(n);
    }
    w.drain();
    EXPECT_EQ(seen, data);  // drain(): everything processed, visible here
  }
  ASSERT_EQ(sizes.size(), 101u);
  for (size_t i = 0; i + 1 < sizes.size(); ++i) {
    EXPECT_EQ(sizes[i], 1000u) << i;
  }
  EXPECT_EQ(sizes.back(), 3u);
  EXPECT_NE(worker_thread, caller);
}

// A worker that falls behind holds append() back once max_chunks wait. The
// worker is held at a gate, so the test needs no clock: the fifth chunk's
// append() must stall (counted) and return only after the gate opens.
TEST(ChunkWorkerTest, AppendWaitsWhenTheQueueIsFull) {
  std::mutex gate_mutex;
  std::condition_variable gate_cv;
  bool open = false;
  std::atomic<size_t> processed{0};
  std::atomic<int> taken{0};
  ChunkWorker w(
      [&](std::string_view chunk) {
        ++taken;
        std::unique_lock<std::mutex> lock(gate_mutex);
        gate_cv.wait(lock, [&] { return open; });
        processed += chunk.size();
      },
      100, 3);
  const std::string chunk(100, 'x');
  w.append(chunk);
  while (taken.load() == 0) {  // the first chunk is in the worker's hand, at the gate
    std::this_thread::yield();
  }
  for (int i = 0; i < 3; ++i) {
    w.append(chunk);  // three queued: the limit, not past it
  }
  EXPECT_EQ(w.stalls(), 0u);
  std::atomic<bool> returned{false};
  std::thread fifth([&] {
    w.append(chunk);
    returned = true;
  });
  while (w.stalls() == 0) {
    std::this_thread::yield();
  }
  EXPECT_FALSE(returned.load());
  EXPECT_EQ(processed.load(), 0u);
  {
    std::lock_guard<std::mutex> lock(gate_mutex);
    open = true;
  }
  gate_cv.notify_all();
  fifth.join();
  EXPECT_TRUE(returned.load());
  w.drain();
  EXPECT_EQ(processed.load(), 500u);
  EXPECT_EQ(w.stalls(), 1u);
}

// Chunks are cut at multiples of the chunk size in the stream, counted from
// set_offset(), and every chunk's memory is aligned: after a first, short
// chunk up to the next boundary, each whole chunk starts on an aligned
// offset at an aligned address, as O_DIRECT needs.
TEST(ChunkWorkerTest, ChunksFollowTheStreamOffsetAndAreAligned) {
  const std::string data = pattern(50'000);
  std::string seen;
  std::vector<size_t> sizes;
  bool all_aligned = true;
  ChunkWorker w(
      [&](std::string_view chunk) {
        seen.append(chunk);
        sizes.push_back(chunk.size());
        all_aligned =
            all_aligned && reinterpret_cast<uintptr_t>(chunk.data()) % ChunkWorker::kAlignment == 0;
      },
      8192, 2);
  w.set_offset(3 * 8192 + 100);  // resuming 100 bytes past a boundary
  w.append(data.substr(0, 7));
  w.append(data.substr(7));
  w.drain();
  EXPECT_EQ(seen, data);
  EXPECT_TRUE(all_aligned);
  ASSERT_EQ(sizes.size(), 7u);
  EXPECT_EQ(sizes.front(), 8192u - 100);
  for (size_t i = 1; i + 1 < sizes.size(); ++i) {
    EXPECT_EQ(sizes[i], 8192u) << i;
  }
  EXPECT_EQ(sizes.back(), 50'000u - (8192 - 100) - 5 * 8192);

  // The offset may be moved (a truncate): cutting follows it, and bytes
  // appended before the move are handed over as they are.
  sizes.clear();
  w.append(data.substr(0, 5));
  w.set_offset(8192 - 10);
  w.append(data.substr(0, 30));
  w.drain();
  EXPECT_EQ(sizes, (std::vector<size_t>{5, 10, 20}));
}

// The destructor processes what is left, the partial chunk included.
TEST(ChunkWorkerTest, DestructionProcessesThePartialChunk) {
  std::string seen;
  {
    ChunkWorker w([&](std::string_view chunk) { seen.append(chunk); }, 1000, 4);
    w.append("abc");
  }
  EXPECT_EQ(seen, "abc");
}

TEST(ChunkWorkerTest, DrainWithNothingAppendedReturns) {
  int calls = 0;
  ChunkWorker w([&](std::string_view) { ++calls; }, 10, 1);
  w.drain();
  w.drain();
  EXPECT_EQ(calls, 0);
}

}  // namespace
}  // namespace tinytcp::apps
