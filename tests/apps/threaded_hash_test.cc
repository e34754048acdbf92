#include "common/threaded_hash.hh"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "proto/content_hash.hh"
#include "util/hash.hh"

namespace tinytcp::apps {
namespace {

std::string random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) {
    c = static_cast<char>(rng());
  }
  return s;
}

// Feeds `data` in pieces of random sizes (0 included) up to `max_piece`.
void feed(proto::ContentHash& h, std::string_view data, size_t max_piece, uint32_t seed) {
  std::mt19937 rng(seed);
  while (!data.empty()) {
    const size_t n = std::min<size_t>(data.size(), rng() % (max_piece + 1));
    h.update(data.substr(0, n));
    data.remove_prefix(n);
  }
}

TEST(ThreadedContentHashTest, MatchesOneShotDigestWhateverThePieces) {
  const std::string data = random_bytes(3 * 1024 * 1024 + 17, 1);
  // Small chunks and a short queue, so the worker falls behind and update()
  // must wait for room; pieces both smaller and larger than a chunk.
  for (const size_t max_piece : {size_t{1}, size_t{1000}, size_t{70000}, size_t{1} << 20}) {
    ThreadedContentHash h(4096, 2);
    feed(h, max_piece == 1 ? std::string_view(data).substr(0, 50000) : data, max_piece,
         static_cast<uint32_t>(max_piece));
    const std::string_view fed =
        max_piece == 1 ? std::string_view(data).substr(0, 50000) : std::string_view(data);
    EXPECT_EQ(h.finish(), sha256(fed)) << max_piece;
  }
}

TEST(ThreadedContentHashTest, FinishStartsOverAndPeekLeavesTheHashRunning) {
  ThreadedContentHash h(1000, 3);
  EXPECT_EQ(h.finish(), sha256(""));
  h.update("abc");
  EXPECT_EQ(h.peek(), sha256("abc"));  // a partial chunk counts
  h.update("def");
  EXPECT_EQ(h.peek(), sha256("abcdef"));
  EXPECT_EQ(h.finish(), sha256("abcdef"));
  const std::string big = random_bytes(12345, 2);
  h.update(big);
  EXPECT_EQ(h.finish(), sha256(big));
  EXPECT_EQ(h.finish(), sha256(""));
}

TEST(ThreadedContentHashTest, SameDigestsAsTheInlineHash) {
  const std::string data = random_bytes(600000, 3);
  ThreadedContentHash threaded(65536, 4);
  proto::InlineContentHash inline_hash;
  feed(threaded, data, 100000, 9);
  feed(inline_hash, data, 100000, 9);
  EXPECT_EQ(threaded.peek(), inline_hash.peek());
  feed(threaded, data, 5000, 10);
  feed(inline_hash, data, 5000, 10);
  EXPECT_EQ(threaded.finish(), inline_hash.finish());
}

TEST(ThreadedContentHashTest, DestroyedWithBytesPendingDoesNotHang) {
  ThreadedContentHash h(1024, 1);
  h.update(random_bytes(100000, 4));
}

}  // namespace
}  // namespace tinytcp::apps
