#include "proto/transfer_messages.hh"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "util/random.hh"

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
      "\x01\x00\x00\x00\x35TTFT\x00\x03\x00\x05"
      "a.txt\x01\x02\x03\x04\x05\x06\x07\x08",
      5 + 4 + 2 + 2 + 5 + 8};
  ASSERT_EQ(bytes.size(), head.size() + 32);
  EXPECT_EQ(bytes.substr(0, head.size()), head);
  EXPECT_EQ(bytes.substr(head.size()), std::string(32, '\xab'));
}

// Field-by-field equality, written out here so that a field the codec drops
// or garbles is caught (the types have no operator==).
bool same(const Offer& a, const Offer& b) {
  return a.magic == b.magic && a.version == b.version && a.name == b.name && a.size == b.size &&
         a.file_id == b.file_id;
}
bool same(const Accept& a, const Accept& b) {
  return a.resume_offset == b.resume_offset && a.prefix_sha256 == b.prefix_sha256 &&
         a.existing == b.existing;
}
bool same(const Reject& a, const Reject& b) {
  return a.reason == b.reason && a.message == b.message;
}
bool same(const Start& a, const Start& b) {
  return a.offset == b.offset;
}
bool same(const Trailer& a, const Trailer& b) {
  return a.sha256 == b.sha256;
}
bool same(const Result& a, const Result& b) {
  return a.status == b.status && a.received_sha256 == b.received_sha256;
}
bool same(const Bye&, const Bye&) {
  return true;
}
bool same(const Decline&, const Decline&) {
  return true;
}
bool same(const Message& a, const Message& b) {
  return a.index() == b.index() &&
         std::visit([&](const auto& x) { return same(x, std::get<std::decay_t<decltype(x)>>(b)); },
                    a);
}

Sha256Digest random_digest(Rng& rng) {
  Sha256Digest d;
  for (auto& byte : d) {
    byte = static_cast<uint8_t>(rng.uniform(0, 255));
  }
  return d;
}

// Every message type with every field set to something other than its
// default (random, seeded), and every value of every enum.
std::vector<Message> sample_messages(Rng& rng) {
  std::vector<Message> out;
  for (const char* name : {"file", "a/b/c.txt", "dir/", "x"}) {
    Offer o;
    o.version = static_cast<uint16_t>(rng.uniform(1, 65535));
    o.name = name;
    o.size = rng.next();
    o.file_id = random_digest(rng);
    out.emplace_back(o);
  }
  for (const bool existing : {false, true}) {
    out.emplace_back(Accept{rng.next(), random_digest(rng), existing});
  }
  for (size_t r = 1; r < static_cast<size_t>(RejectReason::kCount); ++r) {
    out.emplace_back(Reject{static_cast<RejectReason>(r), rng.bytes(rng.uniform(0, 40))});
  }
  out.emplace_back(Start{rng.next()});
  out.emplace_back(Trailer{random_digest(rng)});
  for (size_t st = 1; st < static_cast<size_t>(ResultStatus::kCount); ++st) {
    out.emplace_back(Result{static_cast<ResultStatus>(st), random_digest(rng)});
  }
  out.emplace_back(Bye{});
  out.emplace_back(Decline{});
  return out;
}

TEST(TransferMessagesTest, EveryMessageRoundTrips) {
  const uint64_t seed = seed_from_env("TINYTCP_SEED", 46);
  SCOPED_TRACE(::testing::Message() << "TINYTCP_SEED=" << seed);
  Rng rng(seed);
  std::vector<bool> types_seen(std::variant_size_v<Message>);
  for (int round = 0; round < 20; ++round) {
    for (const Message& m : sample_messages(rng)) {
      const auto got = decode_frame(frame_of(m));
      ASSERT_TRUE(got) << "type " << m.index() << ": " << to_string(got.error());
      EXPECT_TRUE(same(*got, m)) << "type " << m.index() << " changed on the way";
      // The same body decoded on its own, and encoded again: the same bytes.
      EXPECT_EQ(frame_of(*got), frame_of(m)) << "type " << m.index();
      types_seen[m.index()] = true;
    }
  }
  EXPECT_EQ(std::count(types_seen.begin(), types_seen.end(), true),
            static_cast<long>(types_seen.size()));
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

TEST(TransferMessagesTest, AcceptGoldenBytesAndFlags) {
  Accept a;
  a.resume_offset = 0x10;
  a.prefix_sha256.fill(0xcd);
  a.existing = true;
  const std::string bytes = frame_of(a);
  ASSERT_EQ(bytes.size(), 5u + 8 + 32 + 1);
  EXPECT_EQ(bytes.substr(0, 13), std::string("\x02\x00\x00\x00\x29\0\0\0\0\0\0\0\x10", 13));
  EXPECT_EQ(bytes.back(), '\x01');
  auto got = decode_frame(bytes);
  ASSERT_TRUE(got);
  EXPECT_TRUE(std::get<Accept>(*got).existing);
  EXPECT_EQ(std::get<Accept>(*got).resume_offset, 0x10u);

  std::string bad = bytes;
  bad.back() = '\x02';
  got = decode_frame(bad);
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error(), FrameError::BadEnum);
  // A version 2 ACCEPT (no flags byte) is truncated.
  got = decode(FrameType::Accept, std::string_view(bytes).substr(5, 40));
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error(), FrameError::Truncated);
}

TEST(TransferMessagesTest, DeclineGoldenBytes) {
  EXPECT_EQ(frame_of(Decline{}), std::string("\x08\0\0\0\0", 5));
  const auto got = decode(FrameType::Decline, "x");
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error(), FrameError::TrailingBytes);
}

TEST(TransferMessagesTest, OfferLayoutIsVersion2s) {
  // A version 2 receiver must decode a version 3 OFFER to refuse it with
  // REJECT BadVersion: same fields, same order, only the number differs.
  Offer o;
  o.name = "dir/a.txt";
  o.size = 3;
  const std::string bytes = frame_of(o);
  EXPECT_EQ(bytes.size(), 5u + 4 + 2 + 2 + 9 + 8 + 32);
  EXPECT_EQ(bytes.substr(9, 2), std::string("\x00\x03", 2));
}

TEST(TransferMessagesTest, SafePaths) {
  EXPECT_TRUE(is_safe_path("a.txt"));
  EXPECT_TRUE(is_safe_path("a/b/c.txt"));
  EXPECT_TRUE(is_safe_path("dir/"));
  EXPECT_TRUE(is_safe_path("a/b/"));
  EXPECT_TRUE(is_safe_path("with space/x y.txt"));
  EXPECT_TRUE(is_safe_path("..hidden/.dot/x.."));
  EXPECT_TRUE(
      is_safe_path("donn\xc3\xa9"
                   "es/r\xc3\xa9sum\xc3\xa9 \xe2\x98\x83.txt"));  // UTF-8
  std::string deep;
  for (size_t i = 0; i < kMaxPathDepth; ++i) {
    deep += (i ? "/" : "") + std::string("d");
  }
  EXPECT_TRUE(is_safe_path(deep));
  EXPECT_TRUE(is_safe_path(deep + "/"));
  EXPECT_FALSE(is_safe_path(deep + "/d"));  // one too deep
  EXPECT_TRUE(is_safe_path("a/" + std::string(kMaxNameBytes, 'n')));
  EXPECT_FALSE(is_safe_path("a/" + std::string(kMaxNameBytes + 1, 'n')));
  std::string long_path;
  while (long_path.size() + 200 <= kMaxPathBytes) {
    long_path += std::string(199, 'l') + "/";
  }
  long_path += std::string(kMaxPathBytes - long_path.size(), 'z');
  ASSERT_EQ(long_path.size(), kMaxPathBytes);
  EXPECT_TRUE(is_safe_path(long_path));
  EXPECT_FALSE(is_safe_path(long_path + "z"));

  for (const std::string bad :
       {"",      "/",      "//",     "/abs",        "/abs/",    "a//b",      "./a",
        "a/./b", "a/../b", "..",     "../a",        "a/..",     ".",         "a/.",
        "a//",   "a\\b",   "a/b\\c", "tab\there/x", "a/bell\a", "a/del\x7f", "a/\x1b[31m"}) {
    EXPECT_FALSE(is_safe_path(bad)) << bad;
  }
  EXPECT_FALSE(is_safe_path(std::string("a/n\0ul", 6)));
  EXPECT_FALSE(is_safe_path(std::string("a\0/b", 4)));
}

TEST(TransferMessagesTest, SplitPath) {
  using V = std::vector<std::string_view>;
  EXPECT_EQ(split_path("a/b/c.txt"), (V{"a", "b", "c.txt"}));
  EXPECT_EQ(split_path("a/b/"), (V{"a", "b"}));
  EXPECT_EQ(split_path("a"), (V{"a"}));
  EXPECT_TRUE(split_path("").empty());
}

}  // namespace
}  // namespace tinytcp::proto
