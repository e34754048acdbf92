#include "session/frame_codec.hh"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "session/session_messages.hh"

namespace tinytcp::session {
namespace {

std::string frame(FrameType type, std::string_view body) {
  std::string out;
  append_frame(out, type, body);
  return out;
}

TEST(FrameCodecTest, GoldenBytes) {
  EXPECT_EQ(frame(FrameType::Data, "abc"), std::string("\x08\x00\x00\x00\x03"
                                                       "abc",
                                                       8));
  EXPECT_EQ(frame(FrameType::Ack, encode(AckMessage{0x0102030405060708, 0x10, 1})),
            std::string("\x09\x00\x00\x00\x11"
                        "\x01\x02\x03\x04\x05\x06\x07\x08"
                        "\x00\x00\x00\x00\x00\x00\x00\x10"
                        "\x01",
                        22));
  EXPECT_EQ(frame(FrameType::Fin, encode(FinMessage{5})),
            std::string("\x0a\x00\x00\x00\x08\x00\x00\x00\x00\x00\x00\x00\x05", 13));
}

TEST(FrameCodecTest, ParsesWholeFrame) {
  const auto bytes = frame(FrameType::Data, "hello");
  const auto parsed = parse_frame(bytes);
  ASSERT_TRUE(parsed);
  ASSERT_TRUE(parsed.value());
  EXPECT_EQ(parsed.value()->type, FrameType::Data);
  EXPECT_EQ(parsed.value()->body, "hello");
  EXPECT_EQ(parsed.value()->size, bytes.size());
}

TEST(FrameCodecTest, EveryTruncationNeedsMore) {
  const auto bytes = frame(FrameType::Data, "hello world");
  for (size_t n = 0; n < bytes.size(); ++n) {
    const auto parsed = parse_frame(std::string_view(bytes).substr(0, n));
    ASSERT_TRUE(parsed) << n;
    EXPECT_FALSE(parsed.value()) << n;
  }
}

TEST(FrameCodecTest, OversizedLengthsRefusedFromTheHeader) {
  std::string data_header("\x08\x00\x00\x40\x01", 5);  // 16 KiB + 1
  EXPECT_EQ(parse_frame(data_header).error(), FrameError::Oversized);
  std::string control_header("\x09\x00\x00\x01\x01", 5);  // 257 bytes
  EXPECT_EQ(parse_frame(control_header).error(), FrameError::Oversized);
  std::string huge("\x01\xff\xff\xff\xff", 5);
  EXPECT_EQ(parse_frame(huge).error(), FrameError::Oversized);
  // The bounds themselves are fine.
  EXPECT_TRUE(parse_frame(std::string("\x08\x00\x00\x40\x00", 5)));
  EXPECT_TRUE(parse_frame(std::string("\x09\x00\x00\x01\x00", 5)));
}

TEST(FrameCodecTest, UnknownTypeRefusedFromTheFirstByte) {
  for (int t : {0, 12, 0x47, 255}) {
    EXPECT_EQ(parse_frame(std::string(1, static_cast<char>(t))).error(), FrameError::UnknownType)
        << t;
  }
}

TEST(FrameCodecTest, DecoderReassemblesAnySplit) {
  std::string stream = frame(FrameType::Data, "first") +
                       frame(FrameType::Fin, encode(FinMessage{5})) +
                       frame(FrameType::Data, std::string(kMaxDataBody, 'x'));
  for (size_t piece : {size_t{1}, size_t{2}, size_t{3}, size_t{7}, size_t{4096}, stream.size()}) {
    FrameDecoder d;
    std::vector<std::pair<FrameType, std::string>> got;
    for (size_t at = 0; at < stream.size(); at += piece) {
      const auto r = d.feed(std::string_view(stream).substr(at, piece), [&](const FrameView& f) {
        got.emplace_back(f.type, std::string(f.body));
        return true;
      });
      ASSERT_FALSE(r.error);
      EXPECT_LE(d.held(), kFrameHeaderBytes + kMaxDataBody);
    }
    ASSERT_EQ(got.size(), 3u) << piece;
    EXPECT_EQ(got[0].second, "first");
    EXPECT_EQ(got[1].first, FrameType::Fin);
    EXPECT_EQ(got[2].second.size(), kMaxDataBody);
    EXPECT_EQ(d.held(), 0u);
  }
}

TEST(FrameCodecTest, DecoderStopsAndReturnsTheRest) {
  const std::string stream = frame(FrameType::Data, "a") + "rest";
  FrameDecoder d;
  const auto r = d.feed(stream, [](const FrameView&) { return false; });
  EXPECT_FALSE(r.error);
  EXPECT_EQ(r.rest, "rest");
}

TEST(FrameCodecTest, DecoderReportsGarbageInAHeldFrame) {
  FrameDecoder d;
  EXPECT_FALSE(d.feed(std::string("\x08\x00", 2), [](const FrameView&) { return true; }).error);
  const auto r = d.feed(std::string("\xff\xff\xff", 3), [](const FrameView&) { return true; });
  EXPECT_EQ(r.error, FrameError::Oversized);
  EXPECT_EQ(d.held(), 0u);
}

TEST(SessionMessagesTest, RoundTripsAndRefusesWrongSizes) {
  HelloMessage hello;
  hello.session_id = std::string(16, 'i');
  hello.secret = std::string(32, 's');
  hello.client_nonce = std::string(16, 'n');
  hello.limit = 77;
  const auto body = encode(hello);
  ASSERT_EQ(body.size(), 74u);
  EXPECT_EQ(body[0], 2);  // version 2: the client names its session
  const auto back = parse_hello(body);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->session_id, hello.session_id);
  EXPECT_EQ(back->secret, hello.secret);
  EXPECT_EQ(back->client_nonce, hello.client_nonce);
  EXPECT_EQ(back->limit, 77u);
  const auto welcome = encode(WelcomeMessage{std::string(16, 'w'), 99});
  ASSERT_EQ(welcome.size(), 24u);
  ASSERT_TRUE(parse_welcome(welcome));
  EXPECT_EQ(parse_welcome(welcome)->limit, 99u);
  EXPECT_FALSE(parse_welcome(welcome + "x"));
  for (size_t n = 0; n < body.size(); ++n) {
    EXPECT_FALSE(parse_hello(body.substr(0, n))) << n;
  }
  EXPECT_FALSE(parse_hello(body + "x"));
  const auto proof = encode(ProofMessage{1, 2, std::string(32, 'p')});
  EXPECT_TRUE(parse_proof(proof));
  EXPECT_FALSE(parse_proof(proof.substr(1)));
  EXPECT_FALSE(parse_ack(encode(AckMessage{}) + "x"));
  EXPECT_FALSE(parse_refuse(""));
}

}  // namespace
}  // namespace tinytcp::session
