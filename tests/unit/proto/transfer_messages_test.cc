#include "proto/transfer_messages.hh"

#include <gtest/gtest.h>

#include <string>

namespace tinytcp::proto {
namespace {

std::string frame_of(const Message& m) {
  std::string out;
  encode(m, out);
  return out;
}

Expected<Message, FrameError> decode_frame(std::string_view bytes) {
  FrameDecoder d;
  while (!bytes.empty()) {
    const size_t used = d.feed(bytes);
    bytes.remove_prefix(used);
    if (auto f = d.take()) {
      return *f;
    }
    if (used == 0) {
      break;
    }
  }
  return make_unexpected(FrameError::Truncated);
}

TEST(TransferMessagesTest, OfferGoldenBytes) {
  Offer o;
  o.name = "a.txt";
  o.size = 0x0102030405060708;
  o.file_id.fill(0xab);
  const std::string bytes = frame_of(o);
  const std::string head{
      "\x01\x00\x00\x00\x35TTFT\x00\x02\x00\x05"
      "a.txt\x01\x02\x03\x04\x05\x06\x07\x08",
      5 + 4 + 2 + 2 + 5 + 8};
  ASSERT_EQ(bytes.size(), head.size() + 32);
  EXPECT_EQ(bytes.substr(0, head.size()), head);
  EXPECT_EQ(bytes.substr(head.size()), std::string(32, '\xab'));
}

TEST(TransferMessagesTest, EveryMessageRoundTrips) {
  Offer offer;
  offer.name = "file";
  offer.size = 42;
  Accept accept{7, {}};
  accept.prefix_sha256[3] = 9;
  Result result;
  result.status = ResultStatus::Mismatch;
  const Message messages[] = {
      offer, accept, Reject{RejectReason::Exists, "keep"}, Start{5}, Trailer{}, result, Bye{}};
  for (const auto& m : messages) {
    const auto got = decode_frame(frame_of(m));
    ASSERT_TRUE(got) << m.index();
    EXPECT_EQ(got->index(), m.index());
  }
  const auto got = decode_frame(frame_of(offer));
  EXPECT_EQ(std::get<Offer>(*got).name, "file");
  EXPECT_EQ(std::get<Offer>(*got).size, 42u);
  const auto r = decode_frame(frame_of(Reject{RejectReason::Exists, "keep"}));
  EXPECT_EQ(std::get<Reject>(*r).reason, RejectReason::Exists);
  EXPECT_EQ(std::get<Reject>(*r).message, "keep");
}

TEST(TransferMessagesTest, EveryTruncationOfABodyIsAnError) {
  Offer o;
  o.name = "abc";
  const std::string bytes = frame_of(o);
  for (size_t len = 0; len < bytes.size() - 5; ++len) {
    const auto got = decode(FrameType::Offer, std::string_view(bytes).substr(5, len));
    ASSERT_FALSE(got) << len;
    EXPECT_EQ(got.error(), FrameError::Truncated) << len;
  }
}

TEST(TransferMessagesTest, TrailingBytesAreAnError) {
  const auto got = decode(FrameType::Start, std::string("\0\0\0\0\0\0\0\1X", 9));
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error(), FrameError::TrailingBytes);
}

TEST(TransferMessagesTest, BadMagicUnknownTypeAndBadEnums) {
  std::string bytes = frame_of(Offer{});
  bytes[5] = 'X';
  auto got = decode_frame(bytes);
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error(), FrameError::BadMagic);

  got = decode_frame(std::string("\x09\0\0\0\0", 5));
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error(), FrameError::UnknownType);

  got = decode_frame(std::string("\x00\0\0\0\0", 5));
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error(), FrameError::UnknownType);

  std::string result = frame_of(Result{});
  result[5] = 0x7f;
  got = decode_frame(result);
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error(), FrameError::BadEnum);
}

TEST(TransferMessagesTest, OversizedFrameIsRefusedWithoutAllocating) {
  const auto got = decode_frame(std::string("\x01\xff\xff\xff\xff", 5));
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error(), FrameError::TooLong);
}

TEST(TransferMessagesTest, SafeNames) {
  EXPECT_TRUE(is_safe_name("report.pdf"));
  EXPECT_TRUE(is_safe_name("..hidden"));
  EXPECT_TRUE(is_safe_name(std::string(kMaxNameBytes, 'a')));
  EXPECT_FALSE(is_safe_name(std::string(kMaxNameBytes + 1, 'a')));
  EXPECT_FALSE(is_safe_name(""));
  EXPECT_FALSE(is_safe_name("."));
  EXPECT_FALSE(is_safe_name(".."));
  EXPECT_FALSE(is_safe_name("dir/file"));
  EXPECT_FALSE(is_safe_name("dir\\file"));
  EXPECT_FALSE(is_safe_name(std::string("nul\0", 4)));
  EXPECT_FALSE(is_safe_name("bell\a"));
  EXPECT_FALSE(is_safe_name("del\x7f"));
}

}  // namespace
}  // namespace tinytcp::proto
