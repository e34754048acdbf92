#include "stream/reassembler.hh"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "util/random.hh"

namespace tinytcp::stream {
namespace {

class ReassemblerTest : public ::testing::Test {
 protected:
  void make(uint64_t capacity) {
    stream_ = std::make_unique<ByteStream>(capacity);
    reassembler_ = std::make_unique<Reassembler>(*stream_);
  }
  void insert(uint64_t index, std::string_view data, bool last = false) {
    reassembler_->insert(index, data, last);
  }
  std::string read() {
    std::string out;
    while (stream_->bytes_buffered() > 0) {
      const auto v = stream_->peek();
      out.append(v);
      stream_->pop(v.size());
    }
    return out;
  }
  uint64_t pending() const { return reassembler_->bytes_pending(); }
  bool closed() const { return stream_->is_closed(); }

  std::unique_ptr<ByteStream> stream_;
  std::unique_ptr<Reassembler> reassembler_;
};

TEST_F(ReassemblerTest, InOrderIsReadableAtOnce) {
  make(65000);
  insert(0, "abcd");
  EXPECT_EQ(read(), "abcd");
  insert(4, "efgh");
  EXPECT_EQ(read(), "efgh");
  EXPECT_EQ(pending(), 0u);
}

TEST_F(ReassemblerTest, OutOfOrderWaitsForTheGap) {
  make(65000);
  insert(4, "efgh");
  EXPECT_EQ(read(), "");
  EXPECT_EQ(pending(), 4u);
  insert(0, "abcd");
  EXPECT_EQ(read(), "abcdefgh");
  EXPECT_EQ(pending(), 0u);
}

TEST_F(ReassemblerTest, ManyHolesFilledInAnyOrder) {
  make(65000);
  insert(8, "ij");
  insert(2, "cd");
  insert(5, "fg");
  EXPECT_EQ(pending(), 6u);
  EXPECT_EQ(reassembler_->pending_ranges(), 3u);
  insert(4, "e");  // joins [2,4) and [5,7)
  EXPECT_EQ(reassembler_->pending_ranges(), 2u);
  EXPECT_EQ(pending(), 7u);
  insert(0, "ab");
  EXPECT_EQ(read(), "abcdefg");
  EXPECT_EQ(pending(), 2u);
  insert(7, "h");
  EXPECT_EQ(read(), "hij");
  EXPECT_EQ(pending(), 0u);
}

TEST_F(ReassemblerTest, DuplicatesAndOverlapsAreIdempotent) {
  make(65000);
  insert(2, "cdef");
  insert(2, "cdef");
  insert(3, "de");
  insert(1, "bcdefg");
  EXPECT_EQ(pending(), 6u);
  insert(0, "abcdefgh");
  EXPECT_EQ(read(), "abcdefgh");
  insert(0, "abcdefgh");
  insert(3, "defg");
  EXPECT_EQ(read(), "");
  EXPECT_EQ(pending(), 0u);
}

TEST_F(ReassemblerTest, FirstCopyWinsOnConflict) {
  make(65000);
  insert(2, "XY");
  insert(0, "abcdef");
  EXPECT_EQ(read(), "abXYef");
}

TEST_F(ReassemblerTest, BytesBeyondWindowAreDropped) {
  make(4);
  insert(0, "abcdef");
  EXPECT_EQ(read(), "abcd");
  insert(4, "efghij");
  EXPECT_EQ(read(), "efgh");
  // Unread bytes shrink the window: first unread + capacity.
  insert(8, "ij");
  insert(12, "mn");  // past the window: dropped, not held
  EXPECT_EQ(pending(), 0u);
  EXPECT_EQ(read(), "ij");
}

TEST_F(ReassemblerTest, WindowStartsAtFirstUnread) {
  make(8);
  insert(0, "abcdef");  // unread
  insert(6, "ghijkl");  // only "gh" fits
  EXPECT_EQ(stream_->bytes_pushed(), 8u);
  EXPECT_EQ(read(), "abcdefgh");
  insert(14, "op");  // window is now [8, 16)
  EXPECT_EQ(pending(), 2u);
}

TEST_F(ReassemblerTest, LastSubstringOutOfOrderClosesWhenComplete) {
  make(65000);
  insert(4, "ef", true);
  EXPECT_FALSE(closed());
  insert(0, "abcd");
  EXPECT_TRUE(closed());
  EXPECT_EQ(read(), "abcdef");
  EXPECT_TRUE(stream_->is_finished());
}

TEST_F(ReassemblerTest, EmptyLastSubstringClosesAtItsIndex) {
  make(65000);
  insert(0, "abc");
  insert(3, "", true);
  EXPECT_TRUE(closed());
  EXPECT_EQ(read(), "abc");
}

TEST_F(ReassemblerTest, EmptyStreamCloses) {
  make(10);
  insert(0, "", true);
  EXPECT_TRUE(closed());
  EXPECT_TRUE(stream_->is_finished());
}

TEST_F(ReassemblerTest, LastSubstringTruncatedByWindowStillCloses) {
  make(4);
  insert(0, "abcdefgh", true);
  EXPECT_FALSE(closed());
  EXPECT_EQ(read(), "abcd");
  insert(4, "efgh");
  EXPECT_TRUE(closed());
  EXPECT_EQ(read(), "efgh");
}

TEST_F(ReassemblerTest, BytesPastKnownEndAreIgnored) {
  make(100);
  insert(0, "ab", true);
  EXPECT_TRUE(closed());
  insert(2, "cd");
  EXPECT_EQ(read(), "ab");
  EXPECT_EQ(pending(), 0u);
}

TEST_F(ReassemblerTest, HeldBytesPastLaterLearnedEndAreNotDelivered) {
  make(100);
  insert(5, "fgh");         // held
  insert(0, "abcd", true);  // end is 4
  EXPECT_TRUE(closed());
  EXPECT_EQ(read(), "abcd");
}

TEST_F(ReassemblerTest, ErroredStreamTakesNothing) {
  make(10);
  stream_->set_error();
  insert(0, "abc");
  EXPECT_EQ(stream_->bytes_pushed(), 0u);
}

TEST_F(ReassemblerTest, AlreadyAssembledBytesAreIgnored) {
  make(10);
  insert(0, "abcdef");
  EXPECT_EQ(read(), "abcdef");
  insert(2, "ZZZZg");
  EXPECT_EQ(read(), "g");
}

// ---- Property test against a plain reference model ---------------------------

// Every byte of the stream as an optional slot; no cleverness.
class ReferenceReassembler {
 public:
  explicit ReferenceReassembler(uint64_t capacity) : capacity_(capacity) {}

  void insert(uint64_t first, const std::string& data, bool last) {
    if (closed_) {
      return;
    }
    if (last && !end_) {
      end_ = first + data.size();
    }
    for (uint64_t i = 0; i < data.size(); ++i) {
      const uint64_t at = first + i;
      if (at < assembled_ || at >= popped_ + capacity_ || (end_ && at >= *end_)) {
        continue;
      }
      if (slots_.size() <= at) {
        slots_.resize(at + 1);
      }
      if (!slots_[at]) {
        slots_[at] = data[i];
      }
    }
    while (assembled_ < slots_.size() && slots_[assembled_]) {
      ++assembled_;
    }
    if (end_ && assembled_ >= *end_) {
      closed_ = true;
    }
  }
  std::string pop(uint64_t n) {
    n = std::min(n, assembled_ - popped_);
    std::string out;
    for (uint64_t i = 0; i < n; ++i) {
      out.push_back(*slots_[popped_ + i]);
    }
    popped_ += n;
    return out;
  }
  uint64_t pending() const {
    uint64_t n = 0;
    for (uint64_t i = assembled_; i < slots_.size(); ++i) {
      n += slots_[i] ? 1 : uint64_t{0};
    }
    return n;
  }
  uint64_t assembled() const { return assembled_; }
  bool closed() const { return closed_; }

 private:
  uint64_t capacity_;
  std::vector<std::optional<char>> slots_;
  uint64_t assembled_ = 0;
  uint64_t popped_ = 0;
  std::optional<uint64_t> end_;
  bool closed_ = false;
};

TEST(ReassemblerPropertyTest, MatchesReferenceModelOverRandomSeeds) {
  const uint64_t base_seed = seed_from_env("TINYTCP_SEED", 1);
  for (uint64_t trial = 0; trial < 3000; ++trial) {
    Rng rng(base_seed + trial);
    const uint64_t capacity = rng.uniform(1, 200);
    const uint64_t length = rng.uniform(0, 600);
    const std::string truth = rng.bytes(length);
    const bool conflicts = rng.chance(0.2);  // some trials send wrong copies

    ByteStream stream(capacity, rng.uniform(1, capacity));  // the ring grows too
    Reassembler reassembler(stream);
    ReferenceReassembler model(capacity);
    std::string got;
    std::string want;

    for (int op = 0; op < 400 && !model.closed(); ++op) {
      if (rng.chance(0.7)) {
        // A substring near the frontier: chunking, overlap, duplicates, reordering.
        const uint64_t lo = model.assembled() > 20 ? model.assembled() - 20 : 0;
        const uint64_t first = rng.uniform(lo, std::max<uint64_t>(lo, length));
        const uint64_t max_len = std::min<uint64_t>(length - std::min(first, length), 3 * capacity);
        const uint64_t len = rng.uniform(0, max_len);
        std::string data = truth.substr(std::min(first, length), len);
        if (conflicts && !data.empty() && rng.chance(0.3)) {
          data[rng.uniform(0, data.size() - 1)] ^= 0x5a;
        }
        const bool last = first + data.size() == length;
        reassembler.insert(first, data, last);
        model.insert(first, data, last);
      } else {
        const uint64_t n = rng.uniform(0, capacity);
        while (n > 0 && stream.bytes_buffered() > 0 && got.size() < want.size() + n) {
          const auto view = stream.peek();
          const auto take = std::min<uint64_t>(view.size(), want.size() + n - got.size());
          got.append(view.substr(0, take));
          stream.pop(take);
        }
        want += model.pop(n);
      }
      ASSERT_EQ(got, want) << "seed " << rng.seed() << " op " << op;
      ASSERT_EQ(reassembler.bytes_pending(), model.pending())
          << "seed " << rng.seed() << " op " << op;
      ASSERT_EQ(stream.bytes_pushed(), model.assembled()) << "seed " << rng.seed() << " op " << op;
      ASSERT_EQ(stream.is_closed(), model.closed()) << "seed " << rng.seed() << " op " << op;
    }
    if (!conflicts) {
      // Whatever was delivered is a prefix of the truth.
      ASSERT_EQ(got, truth.substr(0, got.size())) << "seed " << rng.seed();
    }
  }
}

// The full stream always arrives if every piece is eventually sent.
TEST(ReassemblerPropertyTest, RandomOrderDeliversWholeStream) {
  const uint64_t base_seed = seed_from_env("TINYTCP_SEED", 1);
  for (uint64_t trial = 0; trial < 1000; ++trial) {
    Rng rng(base_seed + trial);
    const uint64_t length = rng.uniform(1, 5000);
    const std::string truth = rng.bytes(length);
    const uint64_t capacity = rng.uniform(length, 2 * length);
    ByteStream stream(capacity, rng.uniform(1, capacity));
    Reassembler reassembler(stream);
    // Pieces of random length with random overlap, shuffled, some duplicated.
    std::vector<std::pair<uint64_t, uint64_t>> pieces;
    for (uint64_t at = 0; at < length;) {
      const uint64_t len = rng.uniform(1, 100);
      const uint64_t back = std::min<uint64_t>(at, rng.uniform(0, 50));
      pieces.emplace_back(at - back, std::min(len + back, length - (at - back)));
      at = std::min(length, at + len);
      if (rng.chance(0.1)) {
        pieces.push_back(pieces.back());
      }
    }
    std::shuffle(pieces.begin(), pieces.end(), rng.engine());
    for (const auto& [first, len] : pieces) {
      reassembler.insert(first, std::string_view(truth).substr(first, len), first + len == length);
    }
    ASSERT_TRUE(stream.is_closed()) << "seed " << rng.seed();
    ASSERT_EQ(reassembler.bytes_pending(), 0u) << "seed " << rng.seed();
    std::string got;
    while (stream.bytes_buffered() > 0) {
      got.append(stream.peek());
      stream.pop(stream.peek().size());
    }
    ASSERT_EQ(got, truth) << "seed " << rng.seed();
  }
}

}  // namespace
}  // namespace tinytcp::stream
