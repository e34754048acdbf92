// FileSender facing a hostile or broken receiver (issue 21): a fake peer
// answers with raw frames.

#include <gtest/gtest.h>

#include <string>

#include "proto/file_receiver.hh"
#include "proto/file_sender.hh"
#include "unit/proto/memory_files.hh"

namespace tinytcp::proto {
namespace {

std::string frame(const Message& m) {
  std::string out;
  encode(m, out);
  return out;
}

// Drains the sender's output; returns it.
std::string take(FileSender& s) {
  std::string all;
  for (auto out = s.output(); !out.empty(); out = s.output()) {
    all += out;
    s.consume_output(out.size());
  }
  return all;
}

// A receiver that says "ok" to a file it did not get right must not make
// the sender report it verified.
TEST(FileSenderHostileTest, ResultOkWithAnotherDigestIsNotVerified) {
  const std::string data = "the bytes we sent";
  MemorySource source(data);
  FileSender sender;
  sender.offer(source, "f", sha256(data));
  take(sender);
  sender.on_input(frame(Accept{}));
  take(sender);  // START, the bytes, TRAILER
  ASSERT_EQ(sender.state(), FileSender::State::AwaitResult);
  Result result;
  result.status = ResultStatus::Ok;
  result.received_sha256 = sha256("something else");
  sender.on_input(frame(result));
  EXPECT_FALSE(sender.outcome().ok);
  EXPECT_NE(sender.outcome().error.find("SHA-256"), std::string::npos) << sender.outcome().error;
  ASSERT_TRUE(sender.outcome().result.has_value());
  EXPECT_EQ(*sender.outcome().result, ResultStatus::Mismatch);
}

TEST(FileSenderHostileTest, ResultOkWithOurDigestIsVerified) {
  const std::string data = "the bytes we sent";
  MemorySource source(data);
  FileSender sender;
  sender.offer(source, "f", sha256(data));
  take(sender);
  sender.on_input(frame(Accept{}));
  take(sender);
  Result result;
  result.received_sha256 = sha256(data);
  sender.on_input(frame(result));
  EXPECT_TRUE(sender.outcome().ok) << sender.outcome().error;
}

// The receiver no longer tells the SHA-256 of a file it has: the sender
// proves it has the same bytes with its TRAILER, the receiver compares.
TEST(FileSenderHostileTest, ConfirmsAnExistingFileWithoutTheReceiversDigest) {
  MemorySink sink;
  const std::string data = "same bytes on both ends";
  sink.files["t/a"] = data;
  MemorySource source(data);
  FileSender sender;
  FileReceiver receiver(sink, ReceiverPolicy{});
  sender.offer(source, "t/a", sha256(data), /*confirm_identical=*/true);
  for (int i = 0; i < 10; ++i) {
    receiver.on_input(take(sender));
    const std::string back(receiver.output());
    receiver.consume_output(back.size());
    sender.on_input(back);
  }
  EXPECT_TRUE(sender.outcome().ok) << sender.outcome().error;
  EXPECT_TRUE(sender.outcome().already_present);
  EXPECT_EQ(sender.outcome().bytes_sent, 0u);
  EXPECT_EQ(sink.hashed_existing, 1);
}

TEST(FileSenderHostileTest, AnotherFileInPlaceIsRefusedNotAMismatch) {
  MemorySink sink;
  sink.files["t/a"] = "theirs, same size";
  MemorySource source("ours!, same size");
  FileSender sender;
  FileReceiver receiver(sink, ReceiverPolicy{});
  sender.offer(source, "t/a", sha256("ours"), /*confirm_identical=*/true);
  for (int i = 0; i < 10; ++i) {
    receiver.on_input(take(sender));
    const std::string back(receiver.output());
    receiver.consume_output(back.size());
    sender.on_input(back);
  }
  EXPECT_EQ(sender.state(), FileSender::State::Idle);
  EXPECT_FALSE(sender.outcome().ok);
  ASSERT_TRUE(sender.outcome().rejected.has_value()) << sender.outcome().error;
  EXPECT_EQ(*sender.outcome().rejected, RejectReason::Exists);
  EXPECT_EQ(sink.files["t/a"], "theirs, same size");
}

}  // namespace
}  // namespace tinytcp::proto
