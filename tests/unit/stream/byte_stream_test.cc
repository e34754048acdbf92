#include "stream/byte_stream.hh"

#include <gtest/gtest.h>

#include <string>

#include "util/random.hh"

namespace tinytcp::stream {
namespace {

// Reads everything buffered, across the wrap point.
std::string read_all(ByteStream& s) {
  std::string out;
  while (s.bytes_buffered() > 0) {
    const auto v = s.peek();
    out.append(v);
    s.pop(v.size());
  }
  return out;
}

TEST(ByteStreamTest, StartsEmptyAndOpen) {
  ByteStream s(15);
  EXPECT_EQ(s.available_capacity(), 15u);
  EXPECT_EQ(s.bytes_buffered(), 0u);
  EXPECT_FALSE(s.is_closed());
  EXPECT_FALSE(s.is_finished());
  EXPECT_FALSE(s.has_error());
  EXPECT_TRUE(s.peek().empty());
}

TEST(ByteStreamTest, PushThenPeekAndPop) {
  ByteStream s(15);
  EXPECT_EQ(s.push("cat"), 3u);
  EXPECT_EQ(s.peek(), "cat");
  EXPECT_EQ(s.bytes_pushed(), 3u);
  EXPECT_EQ(s.available_capacity(), 12u);
  s.pop(2);
  EXPECT_EQ(s.peek(), "t");
  EXPECT_EQ(s.bytes_popped(), 2u);
  EXPECT_EQ(s.available_capacity(), 14u);
}

TEST(ByteStreamTest, PushBeyondCapacityDropsTheRest) {
  ByteStream s(4);
  EXPECT_EQ(s.push("abcdef"), 4u);
  EXPECT_EQ(s.bytes_pushed(), 4u);
  EXPECT_EQ(s.available_capacity(), 0u);
  EXPECT_EQ(s.push("g"), 0u);
  EXPECT_EQ(read_all(s), "abcd");
}

TEST(ByteStreamTest, PopMoreThanBufferedPopsWhatIsThere) {
  ByteStream s(8);
  s.push("ab");
  s.pop(100);
  EXPECT_EQ(s.bytes_popped(), 2u);
  EXPECT_EQ(s.bytes_buffered(), 0u);
}

TEST(ByteStreamTest, PeekAtWrapPointGivesFirstPart) {
  ByteStream s(8);
  s.push("abcdef");
  s.pop(5);        // head at 5, "f" buffered
  s.push("ghij");  // occupies 6,7,0,1
  EXPECT_EQ(s.peek(), "fgh");
  s.pop(3);
  EXPECT_EQ(s.peek(), "ij");
}

TEST(ByteStreamTest, PeekAtOffsetStopsAtBufferedEnd) {
  ByteStream s(8);
  s.push("abcde");
  EXPECT_EQ(s.peek_at(0), "abcde");
  EXPECT_EQ(s.peek_at(2), "cde");
  EXPECT_EQ(s.peek_at(4), "e");
  EXPECT_TRUE(s.peek_at(5).empty());
  EXPECT_TRUE(s.peek_at(100).empty());
}

TEST(ByteStreamTest, PeekAtOffsetAcrossTheWrapPoint) {
  ByteStream s(8);
  s.push("abcdef");
  s.pop(5);                        // head at 5, "f" buffered
  s.push("ghij");                  // occupies 6,7,0,1
  EXPECT_EQ(s.peek_at(0), "fgh");  // stops at the wrap point
  EXPECT_EQ(s.peek_at(1), "gh");
  EXPECT_EQ(s.peek_at(3), "ij");  // starts past the wrap point
  EXPECT_EQ(s.peek_at(4), "j");
  EXPECT_TRUE(s.peek_at(5).empty());
}

TEST(ByteStreamTest, CloseFinishesOnceDrained) {
  ByteStream s(8);
  s.push("hi");
  s.close();
  EXPECT_TRUE(s.is_closed());
  EXPECT_FALSE(s.is_finished());
  EXPECT_EQ(s.push("more"), 0u);
  s.pop(2);
  EXPECT_TRUE(s.is_finished());
}

TEST(ByteStreamTest, ErrorIsVisibleToReaderAndStopsWrites) {
  ByteStream s(8);
  s.set_error();
  EXPECT_TRUE(s.has_error());
  EXPECT_EQ(s.push("x"), 0u);
}

TEST(ByteStreamTest, WriteAheadThenCommit) {
  ByteStream s(8);
  s.push("ab");
  s.write_ahead(2, "ef");  // indices 4,5
  EXPECT_EQ(s.bytes_buffered(), 2u);
  s.write_ahead(0, "cd");  // indices 2,3
  s.commit(4);
  EXPECT_EQ(s.bytes_pushed(), 6u);
  EXPECT_EQ(read_all(s), "abcdef");
}

TEST(ByteStreamTest, WriteAheadAcrossWrap) {
  ByteStream s(5);
  s.push("abcd");
  s.pop(3);                 // head at 3, "d" buffered (not empty: no rewind)
  s.write_ahead(1, "xyz");  // ring 0,1,2
  s.write_ahead(0, "w");    // ring 4
  s.commit(4);
  EXPECT_EQ(read_all(s), "dwxyz");
}

// An emptied stream starts again at the front of the ring: the next bytes are
// contiguous from the ring's first byte, not split at the wrap point.
TEST(ByteStreamTest, EmptiedStreamStartsAtTheFront) {
  ByteStream s(8);
  const char* front = s.peek().data();
  s.push("abcdef");
  s.pop(6);
  s.push("ghijk");  // without the rewind: ring 6,7,0,1,2, peek "gh"
  EXPECT_EQ(s.peek(), "ghijk");
  EXPECT_EQ(s.peek().data(), front);
}

// Bytes written ahead of an empty stream stay where they are: the stream must
// not rewind under them.
TEST(ByteStreamTest, EmptiedStreamKeepsBytesWrittenAhead) {
  ByteStream s(8);
  s.push("ab");
  s.write_ahead(1, "yz");  // one byte of gap after "ab"
  s.pop(2);                // empty, but "yz" waits ahead
  s.write_ahead(0, "x");
  s.commit(3);
  EXPECT_EQ(read_all(s), "xyz");
  s.push("q");  // now empty before it and nothing ahead: from the front again
  EXPECT_EQ(read_all(s), "q");
}

// Committing or pushing past bytes written ahead uses them up: a later
// emptying rewinds again.
TEST(ByteStreamTest, RewindsAgainOnceWrittenAheadBytesAreCommitted) {
  ByteStream s(8);
  const char* front = s.peek().data();
  s.push("abc");
  s.write_ahead(2, "e");  // ahead of the write end by 3
  s.push("cd");           // now 1 byte of it ahead
  s.commit(1);            // "e" readable
  EXPECT_EQ(read_all(s), "abccde");
  s.push("z");
  EXPECT_EQ(s.peek().data(), front);
}

TEST(ByteStreamTest, CapacityZeroTakesNothing) {
  ByteStream s(0);
  EXPECT_EQ(s.push("abc"), 0u);
  EXPECT_TRUE(s.peek().empty());
  s.close();
  EXPECT_TRUE(s.is_finished());
}

// Random pushes and pops against a std::string model.
// The model tests' read step: peek() shows a non-empty prefix of the model
// (unless it is empty), then pop(n) moves up to n bytes from the model to `read`.
void peek_then_pop(ByteStream& s, uint64_t n, std::string& model, std::string& read,
                   const Rng& rng) {
  const auto view = s.peek();
  ASSERT_LE(view.size(), model.size()) << "seed " << rng.seed();
  ASSERT_EQ(view, std::string_view(model).substr(0, view.size())) << "seed " << rng.seed();
  ASSERT_TRUE(!view.empty() || model.empty()) << "seed " << rng.seed();
  const uint64_t popped = std::min<uint64_t>(n, model.size());
  read += model.substr(0, popped);
  model.erase(0, popped);
  s.pop(n);
}

TEST(ByteStreamTest, PropertyMatchesStringModel) {
  const uint64_t base_seed = seed_from_env("TINYTCP_SEED", 1);
  for (uint64_t trial = 0; trial < 1000; ++trial) {
    Rng rng(base_seed + trial);
    const uint64_t capacity = rng.uniform(1, 64);
    ByteStream s(capacity);
    std::string model;  // buffered bytes
    std::string written;
    std::string read;
    for (int op = 0; op < 200; ++op) {
      if (rng.chance(0.5)) {
        const std::string data = rng.bytes(rng.uniform(0, 2 * capacity));
        const uint64_t taken = s.push(data);
        const uint64_t want = std::min<uint64_t>(data.size(), capacity - model.size());
        ASSERT_EQ(taken, want) << "seed " << rng.seed();
        model += data.substr(0, want);
        written += data.substr(0, want);
      } else {
        ASSERT_NO_FATAL_FAILURE(peek_then_pop(s, rng.uniform(0, capacity), model, read, rng));
      }
      ASSERT_EQ(s.bytes_buffered(), model.size()) << "seed " << rng.seed();
      ASSERT_EQ(s.available_capacity(), capacity - model.size()) << "seed " << rng.seed();
      ASSERT_EQ(s.bytes_pushed(), written.size()) << "seed " << rng.seed();
      ASSERT_EQ(s.bytes_popped(), read.size()) << "seed " << rng.seed();
    }
    read += read_all(s);
    ASSERT_EQ(read, written) << "seed " << rng.seed();
  }
}

// The ring starts small and grows (doubling, up to the capacity) only when it
// must hold more: contiguous, wrapped, and wrapped with the growth capped by
// the capacity, the bytes come out as they went in.
TEST(ByteStreamTest, RingGrowsOnlyWhenItMustHoldMore) {
  ByteStream s(1000, 100);
  EXPECT_EQ(s.ring_bytes(), 100u);
  const std::string a(80, 'a');
  EXPECT_EQ(s.push(a), 80u);
  s.pop(70);
  EXPECT_EQ(s.push(std::string(60, 'b')), 60u);  // wraps inside the 100-byte ring
  EXPECT_EQ(s.ring_bytes(), 100u);
  EXPECT_EQ(s.push(std::string(50, 'c')), 50u);  // 120 held: grows to 200, moving the wrap
  EXPECT_EQ(s.ring_bytes(), 200u);
  EXPECT_EQ(read_all(s), std::string(10, 'a') + std::string(60, 'b') + std::string(50, 'c'));

  ByteStream capped(130, 100);
  capped.push(std::string(90, 'x'));
  capped.pop(85);
  capped.push(std::string(90, 'y'));  // 95 held: [85, 100) and [0, 80)
  capped.push(std::string(30, 'z'));  // 125 held: capped at 130, part of the wrap moves
  EXPECT_EQ(capped.ring_bytes(), 130u);
  EXPECT_EQ(read_all(capped), std::string(5, 'x') + std::string(90, 'y') + std::string(30, 'z'));
}

// Any sequence of pushes, pops, writes ahead and commits reads back like a
// string, whatever the ring's starting size: growth moves wrapped bytes,
// written-ahead ones included.
TEST(ByteStreamTest, PropertyMatchesStringModelWhileTheRingGrows) {
  const uint64_t base_seed = seed_from_env("TINYTCP_SEED", 1);
  for (uint64_t trial = 0; trial < 1000; ++trial) {
    Rng rng(base_seed + trial);
    const uint64_t capacity = rng.uniform(1, 300);
    ByteStream s(capacity, rng.uniform(1, capacity));
    std::string model;    // readable bytes
    std::string pending;  // written ahead of the write end, contiguous from it
    std::string written;
    std::string read;
    for (int op = 0; op < 300; ++op) {
      const uint64_t room = capacity - model.size();
      const uint64_t kind = rng.uniform(0, 3);
      if (kind == 0) {
        const std::string data = rng.bytes(rng.uniform(0, room + 5));
        const uint64_t taken = s.push(data);
        ASSERT_EQ(taken, std::min<uint64_t>(data.size(), room)) << "seed " << rng.seed();
        model += data.substr(0, taken);
        written += data.substr(0, taken);
        pending.erase(0, std::min<size_t>(taken, pending.size()));
      } else if (kind == 1 && room > 0) {
        const uint64_t offset = rng.uniform(0, std::min<uint64_t>(pending.size(), room));
        const std::string data = rng.bytes(rng.uniform(0, room - offset));
        s.write_ahead(offset, data);
        if (pending.size() < offset + data.size()) {
          pending.resize(offset + data.size());
        }
        pending.replace(offset, data.size(), data);
      } else if (kind == 2 && !pending.empty()) {
        const uint64_t n = rng.uniform(0, std::min<uint64_t>(pending.size(), room));
        s.commit(n);
        model += pending.substr(0, n);
        written += pending.substr(0, n);
        pending.erase(0, n);
      } else {
        ASSERT_NO_FATAL_FAILURE(peek_then_pop(s, rng.uniform(0, capacity), model, read, rng));
      }
      ASSERT_EQ(s.bytes_buffered(), model.size()) << "seed " << rng.seed();
      ASSERT_LE(s.ring_bytes(), capacity) << "seed " << rng.seed();
      for (uint64_t at = 0; at < model.size();) {
        const auto part = s.peek_at(at);
        ASSERT_FALSE(part.empty()) << "seed " << rng.seed();
        ASSERT_EQ(part, std::string_view(model).substr(at, part.size())) << "seed " << rng.seed();
        at += part.size();
      }
    }
    // What was written ahead is still there: commit it and read everything.
    s.commit(pending.size());
    written += pending;
    read += read_all(s);
    ASSERT_EQ(read, written) << "seed " << rng.seed();
  }
}

}  // namespace
}  // namespace tinytcp::stream
