// FileReceiver facing a hostile sender (issue 21): a fake peer writes raw
// frames and reads (or refuses to read) the replies. Every bound of
// ReceiverPolicy is driven past and its error or counter checked.

#include <gtest/gtest.h>

#include <string>

#include "proto/file_receiver.hh"
#include "unit/proto/memory_files.hh"

namespace tinytcp::proto {
namespace {

std::string frame(const Message& m) {
  std::string out;
  encode(m, out);
  return out;
}

Offer offer(std::string name, uint64_t size = 1) {
  Offer o;
  o.name = std::move(name);
  o.size = size;
  return o;
}

// The receiver's replies, decoded.
std::vector<Message> replies(FileReceiver& r) {
  FrameDecoder decoder;
  std::vector<Message> out;
  std::string_view bytes = r.output();
  while (!bytes.empty()) {
    bytes.remove_prefix(decoder.feed(bytes));
    if (auto m = decoder.take()) {
      EXPECT_TRUE(*m);
      if (*m) {
        out.push_back(**m);
      }
    }
  }
  r.consume_output(r.output().size());
  return out;
}

class FileReceiverHostileTest : public ::testing::Test {
 protected:
  MemorySink sink;
  ReceiverPolicy policy;
};

// An OFFER's name can be a whole 64 KiB frame; the record keeps only a
// bounded piece of a name that is refused.
TEST_F(FileReceiverHostileTest, RefusedNameIsCutShortInItsRecord) {
  FileReceiver r(sink, policy);
  r.on_input(frame(offer(std::string(60'000, '\\'))));
  ASSERT_EQ(r.files().size(), 1u);
  EXPECT_LE(r.files().back().name.size(), FileReceiver::kMaxRecordedBadName + 3);
  EXPECT_NE(r.files().back().error.find("file name refused"), std::string::npos)
      << r.files().back().error;
}

// Records are capped; the totals still count every offer.
TEST_F(FileReceiverHostileTest, RecordsAreCappedAndTotalsCountTheDroppedOnes) {
  policy.max_records = 16;
  FileReceiver r(sink, policy);
  for (int i = 0; i < 40; ++i) {
    r.on_input(frame(offer("d" + std::to_string(i) + "/", 0)));
    replies(r);
  }
  EXPECT_EQ(r.files().size(), 16u);
  EXPECT_EQ(r.records_dropped(), 24u);
  EXPECT_EQ(r.files().back().name, "d39/");
  const auto t = r.totals();
  EXPECT_EQ(t.entries, 40u);
  EXPECT_EQ(t.directories, 40u);
  EXPECT_EQ(r.state(), FileReceiver::State::AwaitOffer);
}

// A sender that never reads its replies (its window stays at zero) while it
// streams OFFERs: the replies stop at the output bound, the receiver stops
// wanting input, and what it is given anyway is held, not parsed.
TEST_F(FileReceiverHostileTest, StopsWantingInputWhileRepliesCannotLeave) {
  policy.max_refusals_in_a_row = 1'000'000;
  FileReceiver r(sink, policy);
  const std::string bad = frame(offer("a/../b"));
  int fed = 0;
  while (r.wants_input() && fed < 100'000) {
    r.on_input(bad);
    ++fed;
  }
  EXPECT_FALSE(r.wants_input());
  EXPECT_LT(fed, 100'000);
  const size_t queued = r.output().size();
  EXPECT_LE(queued, policy.max_output_bytes + kMaxFrameBody + 5);
  // More input now is held back: no more replies, no more records.
  const size_t records = r.files().size();
  r.on_input(bad);
  r.on_input(bad);
  EXPECT_EQ(r.output().size(), queued);
  EXPECT_EQ(r.files().size(), records);
  // Once the replies leave, the held offers are answered.
  replies(r);
  EXPECT_EQ(r.files().size(), records + 2);
  EXPECT_TRUE(r.wants_input());
}

// One that keeps sending past the second bound loses the session.
TEST_F(FileReceiverHostileTest, FloodWhileRepliesCannotLeaveFailsTheSession) {
  policy.max_refusals_in_a_row = 1'000'000;
  FileReceiver r(sink, policy);
  const std::string bad = frame(offer("a/../b"));
  std::string burst;
  for (int i = 0; i < 1000; ++i) {
    burst += bad;
  }
  for (int i = 0; i < 1000 && r.state() != FileReceiver::State::Failed; ++i) {
    r.on_input(burst);
    ASSERT_LE(r.output().size(), policy.max_output_bytes + kMaxFrameBody + 5);
  }
  EXPECT_EQ(r.state(), FileReceiver::State::Failed);
  EXPECT_NE(r.error().find("keeps sending while our replies cannot leave"), std::string::npos)
      << r.error();
}

TEST_F(FileReceiverHostileTest, GivesUpASessionThatOnlyProducesRefusals) {
  policy.max_refusals_in_a_row = 10;
  FileReceiver r(sink, policy);
  for (int i = 0; i < 9; ++i) {
    r.on_input(frame(offer("bad\\name")));
    replies(r);
  }
  EXPECT_EQ(r.state(), FileReceiver::State::AwaitOffer);
  r.on_input(frame(offer("ok/", 0)));  // taken: the run starts over
  replies(r);
  for (int i = 0; i < 9; ++i) {
    r.on_input(frame(offer("bad\\name")));
    replies(r);
  }
  EXPECT_EQ(r.state(), FileReceiver::State::AwaitOffer);
  r.on_input(frame(offer("bad\\name")));
  EXPECT_EQ(r.state(), FileReceiver::State::Failed);
  EXPECT_NE(r.error().find("10 offers in a row were not taken"), std::string::npos) << r.error();
  // The tenth REJECT still goes out.
  const auto last = replies(r);
  ASSERT_EQ(last.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<Reject>(last[0]));
}

TEST_F(FileReceiverHostileTest, DefaultPolicyGivesUpAfterAHundredRefusals) {
  FileReceiver r(sink, ReceiverPolicy{});
  for (int i = 0; i < 1000 && r.state() != FileReceiver::State::Failed; ++i) {
    r.on_input(frame(offer("bad\\name")));
    replies(r);
  }
  EXPECT_EQ(r.state(), FileReceiver::State::Failed);
  EXPECT_EQ(r.files().size(), 100u);
}

// The ACCEPT for a file already in place does not tell any sender its
// SHA-256, and an OFFER answered by DECLINE costs no hashing at all.
TEST_F(FileReceiverHostileTest, ExistingFileIsNeitherRevealedNorHashedForAnOffer) {
  sink.files["secret"] = "the receiver's own bytes";
  FileReceiver r(sink, policy);
  for (int i = 0; i < 5; ++i) {
    r.on_input(frame(offer("secret", sink.files["secret"].size())));
    const auto got = replies(r);
    ASSERT_EQ(got.size(), 1u);
    const auto* accept = std::get_if<Accept>(&got[0]);
    ASSERT_NE(accept, nullptr);
    EXPECT_TRUE(accept->existing);
    EXPECT_EQ(accept->prefix_sha256, Sha256Digest{});
    r.on_input(frame(Decline{}));
  }
  EXPECT_EQ(sink.hashed_existing, 0);
  // A wrong TRAILER learns nothing either.
  r.on_input(frame(offer("secret", sink.files["secret"].size())));
  replies(r);
  r.on_input(frame(Start{sink.files["secret"].size()}));
  r.on_input(frame(Trailer{}));
  const auto got = replies(r);
  ASSERT_EQ(got.size(), 1u);
  const auto* result = std::get_if<Result>(&got[0]);
  ASSERT_NE(result, nullptr);
  EXPECT_EQ(result->status, ResultStatus::Mismatch);
  EXPECT_EQ(result->received_sha256, Sha256Digest{});
  EXPECT_EQ(sink.files["secret"], "the receiver's own bytes");
}

TEST_F(FileReceiverHostileTest, EntriesPerSessionAreLimited) {
  policy.max_files = 5;
  FileReceiver r(sink, policy);
  for (int i = 0; i < 5; ++i) {
    r.on_input(frame(offer("d" + std::to_string(i) + "/", 0)));
    replies(r);
  }
  EXPECT_EQ(r.state(), FileReceiver::State::AwaitOffer);
  r.on_input(frame(offer("d5/", 0)));
  const auto got = replies(r);
  ASSERT_EQ(got.size(), 1u);
  const auto* reject = std::get_if<Reject>(&got[0]);
  ASSERT_NE(reject, nullptr);
  EXPECT_EQ(reject->reason, RejectReason::TooLarge);
  EXPECT_EQ(r.state(), FileReceiver::State::Failed);
  EXPECT_NE(r.error().find("more than 5 entries"), std::string::npos) << r.error();
  EXPECT_EQ(sink.dirs.count("d5"), 0u);
}

TEST_F(FileReceiverHostileTest, BytesPerSessionAreLimited) {
  policy.max_session_bytes = 1000;
  FileReceiver r(sink, policy);
  r.on_input(frame(offer("a", 600)));
  auto got = replies(r);
  ASSERT_EQ(got.size(), 1u);
  ASSERT_TRUE(std::holds_alternative<Accept>(got[0]));
  r.on_input(frame(Start{0}));
  r.on_input(std::string(600, 'a'));
  r.on_input(frame(Trailer{sha256(std::string(600, 'a'))}));
  replies(r);
  EXPECT_EQ(sink.files["a"], std::string(600, 'a'));
  r.on_input(frame(offer("b", 401)));
  got = replies(r);
  ASSERT_EQ(got.size(), 1u);
  const auto* reject = std::get_if<Reject>(&got[0]);
  ASSERT_NE(reject, nullptr);
  EXPECT_EQ(reject->reason, RejectReason::TooLarge);
  EXPECT_NE(reject->message.find("session limit"), std::string::npos) << reject->message;
  EXPECT_TRUE(sink.partials.empty());  // no empty partial file left behind
  r.on_input(frame(offer("c", 400)));  // what is left still fits
  got = replies(r);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<Accept>(got[0]));
}

TEST_F(FileReceiverHostileTest, FreeSpaceReserveIsKept) {
  policy.free_space_reserve = 1000;
  sink.free = 1500;
  FileReceiver r(sink, policy);
  r.on_input(frame(offer("big", 501)));
  auto got = replies(r);
  ASSERT_EQ(got.size(), 1u);
  const auto* reject = std::get_if<Reject>(&got[0]);
  ASSERT_NE(reject, nullptr);
  EXPECT_EQ(reject->reason, RejectReason::NoSpace);
  EXPECT_NE(reject->message.find("1000 kept in reserve"), std::string::npos) << reject->message;
  r.on_input(frame(offer("fits", 500)));
  got = replies(r);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<Accept>(got[0]));
}

}  // namespace
}  // namespace tinytcp::proto
