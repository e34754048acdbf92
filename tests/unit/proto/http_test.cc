#include "proto/http.hh"

#include <gtest/gtest.h>

#include <string>

#include "util/random.hh"

namespace tinytcp::proto {
namespace {

struct Parsed {
  HttpParser parser;
  std::string body;
  size_t used = 0;
};

// Feeds `text` in pieces of `step` bytes (0: all at once).
Parsed parse(HttpParser::Kind kind, std::string_view text, size_t step = 0, bool close = false,
             bool head = false) {
  Parsed p{HttpParser(kind, head), {}, 0};
  const auto sink = [&](std::string_view b) { p.body.append(b); };
  if (step == 0) {
    p.used = p.parser.feed(text, sink);
  } else {
    for (size_t at = 0; at < text.size() && !p.parser.done() && !p.parser.failed(); at += step) {
      p.used += p.parser.feed(text.substr(at, step), sink);
    }
  }
  if (close) {
    p.parser.finish();
  }
  return p;
}

Parsed response(std::string_view text, bool close = false) {
  return parse(HttpParser::Kind::Response, text, 0, close);
}

TEST(UrlTest, ParsesHostPortAndPath) {
  auto u = parse_url("http://169.254.144.1:8000/files/a.bin?x=1#frag");
  ASSERT_TRUE(u) << u.error();
  EXPECT_EQ(u->host, "169.254.144.1");
  EXPECT_EQ(u->port, 8000);
  EXPECT_EQ(u->path, "/files/a.bin?x=1");
  u = parse_url("HTTP://example.test");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->port, 80);
  EXPECT_EQ(u->path, "/");
  u = parse_url("http://h?q");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->path, "/?q");
}

TEST(UrlTest, RejectsWhatItCannotFetch) {
  for (const char* bad :
       {"https://x/", "ftp://x", "x/y", "http://", "http://:80/", "http://h:0/", "http://h:65536/",
        "http://h:8a/", "http://u@h/", "http://h h/", "http://h/a b"}) {
    EXPECT_FALSE(parse_url(bad)) << bad;
  }
}

TEST(HttpRequestTest, GetRequestGoldenBytes) {
  Url url{"h.test", 8080, "/p?q"};
  EXPECT_EQ(make_get_request(url, "ua"),
            "GET /p?q HTTP/1.1\r\nHost: h.test:8080\r\nUser-Agent: ua\r\nAccept: */*\r\n"
            "Connection: close\r\n\r\n");
  url.port = 80;
  EXPECT_NE(make_get_request(url).find("Host: h.test\r\n"), std::string::npos);
}

TEST(HttpParserTest, ContentLengthBody) {
  const auto p = response("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX: y\r\n\r\nhelloEXTRA");
  ASSERT_TRUE(p.parser.done());
  EXPECT_EQ(p.parser.status(), 200);
  EXPECT_EQ(p.parser.reason(), "OK");
  EXPECT_EQ(p.body, "hello");
  EXPECT_EQ(*p.parser.header("x"), "y");
  EXPECT_EQ(*p.parser.content_length(), 5u);
}

TEST(HttpParserTest, LeavesBytesAfterTheMessage) {
  const std::string msg = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
  const auto p = response(msg + "NEXT");
  EXPECT_EQ(p.used, msg.size());
}

TEST(HttpParserTest, ChunkedBodyWithExtensionsAndTrailers) {
  const auto p = response(
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
      "5;ext=1\r\nhello\r\nA\r\n, world!!!\r\n0\r\nTrailer: t\r\n\r\n");
  ASSERT_TRUE(p.parser.done()) << to_string(p.parser.error());
  EXPECT_EQ(p.body, "hello, world!!!");
  EXPECT_TRUE(p.parser.chunked());
}

TEST(HttpParserTest, CloseDelimitedBody) {
  auto p = response("HTTP/1.0 200 OK\r\n\r\nall of it");
  EXPECT_FALSE(p.parser.done());
  p.parser.finish();
  EXPECT_TRUE(p.parser.done());
  EXPECT_EQ(p.body, "all of it");
}

TEST(HttpParserTest, NoBodyForHead204And304) {
  EXPECT_TRUE(parse(HttpParser::Kind::Response, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n", 0,
                    false, true)
                  .parser.done());
  EXPECT_TRUE(response("HTTP/1.1 204 No Content\r\n\r\n").parser.done());
  EXPECT_TRUE(response("HTTP/1.1 304 Not Modified\r\nContent-Length: 9\r\n\r\n").parser.done());
}

TEST(HttpParserTest, EverySplitGivesTheSameResult) {
  const std::string msg =
      "HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\nA: b\r\n\r\n"
      "3\r\nabc\r\n10\r\n0123456789abcdef\r\n0\r\n\r\n";
  for (size_t step = 1; step <= msg.size(); ++step) {
    const auto p = parse(HttpParser::Kind::Response, msg, step);
    ASSERT_TRUE(p.parser.done()) << step;
    EXPECT_EQ(p.parser.status(), 404);
    EXPECT_EQ(p.body, "abc0123456789abcdef") << step;
  }
}

TEST(HttpParserTest, TruncatedMessagesAreErrors) {
  const std::string msg = "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nbody";
  for (size_t len = 0; len < msg.size(); ++len) {
    auto p = response(msg.substr(0, len), true);
    EXPECT_TRUE(p.parser.failed()) << len;
    EXPECT_EQ(p.parser.error(), HttpError::Truncated) << len;
  }
}

TEST(HttpParserTest, MalformedResponses) {
  const std::pair<const char*, HttpError> cases[] = {
      {"HTTX/1.1 200 OK\r\n\r\n", HttpError::BadStartLine},
      {"HTTP/2.0 200 OK\r\n\r\n", HttpError::BadVersion},
      {"HTTP/1.2 200 OK\r\n\r\n", HttpError::BadVersion},
      {"HTTP/1.1 2x0 OK\r\n\r\n", HttpError::BadStatus},
      {"HTTP/1.1 999 OK\r\n\r\n", HttpError::BadStatus},
      {"HTTP/1.1 2000 OK\r\n\r\n", HttpError::BadStatus},
      {"HTTP/1.1 200 OK\r\nNoColon\r\n\r\n", HttpError::BadHeader},
      {"HTTP/1.1 200 OK\r\n: empty\r\n\r\n", HttpError::BadHeader},
      {"HTTP/1.1 200 OK\r\nName : v\r\n\r\n", HttpError::BadHeader},
      {"HTTP/1.1 200 OK\r\nA: b\r\n folded\r\n\r\n", HttpError::BadHeader},
      {"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", HttpError::BadContentLength},
      {"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n",
       HttpError::BadContentLength},
      {"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
       HttpError::ConflictingLength},
      {"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
       HttpError::ConflictingLength},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", HttpError::UnsupportedCoding},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", HttpError::BadChunk},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\r\n", HttpError::BadChunk},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nabc\r\n", HttpError::BadChunk},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffff\r\n",
       HttpError::BadChunk},
  };
  for (const auto& [text, error] : cases) {
    const auto p = response(text);
    EXPECT_TRUE(p.parser.failed()) << text;
    EXPECT_EQ(p.parser.error(), error) << text << ": " << to_string(p.parser.error());
  }
}

TEST(HttpParserTest, HeaderSectionIsBounded) {
  std::string big = "HTTP/1.1 200 OK\r\nX: " + std::string(HttpParser::kMaxHeaderBytes, 'a');
  auto p = response(big);
  EXPECT_TRUE(p.parser.failed());
  EXPECT_EQ(p.parser.error(), HttpError::HeaderTooLarge);
  std::string many = "HTTP/1.1 200 OK\r\n";
  for (size_t i = 0; i <= HttpParser::kMaxHeaders; ++i) {
    many += "H" + std::to_string(i) + ": v\r\n";
  }
  p = response(many + "\r\n");
  EXPECT_TRUE(p.parser.failed());
  EXPECT_EQ(p.parser.error(), HttpError::TooManyHeaders);
}

TEST(HttpParserTest, ChunkSizeLineIsBounded) {
  const auto p =
      response("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1;" + std::string(5000, 'e'));
  EXPECT_TRUE(p.parser.failed());
  EXPECT_EQ(p.parser.error(), HttpError::BadChunk);
}

TEST(HttpParserTest, Requests) {
  auto p = parse(HttpParser::Kind::Request,
                 "\r\nPUT /up/file.bin HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc");
  ASSERT_TRUE(p.parser.done()) << to_string(p.parser.error());
  EXPECT_EQ(p.parser.method(), "PUT");
  EXPECT_EQ(p.parser.target(), "/up/file.bin");
  EXPECT_EQ(p.body, "abc");
  p = parse(HttpParser::Kind::Request, "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_TRUE(p.parser.done());
  EXPECT_EQ(p.body, "");
  for (const char* bad : {"GET /\r\n\r\n", "GET  / HTTP/1.1\r\n\r\n", "GET / HTTP/1.1 x\r\n\r\n",
                          "G(T / HTTP/1.1\r\n\r\n", "GET / HTTP/3\r\n\r\n"}) {
    EXPECT_TRUE(parse(HttpParser::Kind::Request, bad).parser.failed()) << bad;
  }
}

// Issue 21 item 7: a server must see the head (to open the file a PUT body
// goes to) before the first body byte, also when head and body come in one
// piece, and at every split.
TEST(HttpParserTest, HeadCallbackRunsBeforeTheFirstBodyByte) {
  const std::string text = "PUT /x HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello";
  for (size_t step = 1; step <= text.size(); ++step) {
    HttpParser parser(HttpParser::Kind::Request);
    std::string events;
    for (size_t at = 0; at < text.size(); at += step) {
      parser.feed(
          text.substr(at, step), [&] { events += "[head:" + parser.method() + "]"; },
          [&](std::string_view b) { events.append(b); });
    }
    EXPECT_TRUE(parser.done());
    EXPECT_EQ(events, "[head:PUT]hello") << "step " << step;
  }
  // Not for a head that fails.
  HttpParser bad(HttpParser::Kind::Request);
  bool called = false;
  bad.feed(
      "PUT /x HTTP/1.1\r\nContent-Length: x\r\n\r\n", [&] { called = true; },
      [](std::string_view) {});
  EXPECT_TRUE(bad.failed());
  EXPECT_FALSE(called);
}

// --- Request smuggling (RFC 9112 §6.1, §6.3; RFC 9110 §8.6) -----------------
//
// A server must find the same end of a request body as any proxy in front of
// it, or the bytes after it are parsed as a request the proxy never saw. Where
// the framing is ambiguous the request is refused (the server answers 400 and
// closes), never guessed at.

Parsed request(std::string_view text) {
  return parse(HttpParser::Kind::Request, text);
}

TEST(HttpSmugglingTest, AmbiguousLengthsAreRefused) {
  const std::pair<const char*, HttpError> cases[] = {
      // RFC 9110 §8.6: differing Content-Length values.
      {"POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
       HttpError::ConflictingLength},
      {"POST / HTTP/1.1\r\nContent-Length: 6\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello!",
       HttpError::ConflictingLength},
      // RFC 9112 §6.3 item 3: Content-Length with Transfer-Encoding, either order.
      {"POST / HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
       HttpError::ConflictingLength},
      {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n",
       HttpError::ConflictingLength},
      {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 0\r\n\r\n0\r\n\r\n",
       HttpError::ConflictingLength},
      // Content-Length values that are not 1*DIGIT (RFC 9110 §8.6).
      {"POST / HTTP/1.1\r\nContent-Length: +5\r\n\r\nhello", HttpError::BadContentLength},
      {"POST / HTTP/1.1\r\nContent-Length: 5,5\r\n\r\nhello", HttpError::BadContentLength},
      {"POST / HTTP/1.1\r\nContent-Length: 5, 5\r\n\r\nhello", HttpError::BadContentLength},
      {"POST / HTTP/1.1\r\nContent-Length: 5 5\r\n\r\nhello", HttpError::BadContentLength},
      {"POST / HTTP/1.1\r\nContent-Length: -5\r\n\r\nhello", HttpError::BadContentLength},
      {"POST / HTTP/1.1\r\nContent-Length: 0x5\r\n\r\nhello", HttpError::BadContentLength},
      {"POST / HTTP/1.1\r\nContent-Length: 5.0\r\n\r\nhello", HttpError::BadContentLength},
      {"POST / HTTP/1.1\r\nContent-Length: \r\n\r\nhello", HttpError::BadContentLength},
      {"POST / HTTP/1.1\r\nContent-Length: 18446744073709551621\r\n\r\nhello",  // 2^64 + 5
       HttpError::BadContentLength},
      {"POST / HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\nhello",
       HttpError::BadContentLength},
      // Whitespace or junk in the field name (RFC 9112 §5.1: must be 400).
      {"POST / HTTP/1.1\r\nContent-Length : 5\r\n\r\nhello", HttpError::BadHeader},
      {"POST / HTTP/1.1\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\n", HttpError::BadHeader},
      {"POST / HTTP/1.1\r\n Content-Length: 5\r\n\r\nhello", HttpError::BadHeader},
      {"POST / HTTP/1.1\r\nContent-Length\x0b: 5\r\n\r\nhello", HttpError::BadHeader},
      // Obsolete line folding (RFC 9112 §5.2): a folded Content-Length or
      // Transfer-Encoding means something else to a proxy that unfolds it.
      {"POST / HTTP/1.1\r\nContent-Length: 5\r\n 6\r\n\r\nhello!", HttpError::BadHeader},
      {"POST / HTTP/1.1\r\nX: a\r\n\tTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
       HttpError::BadHeader},
      {"POST / HTTP/1.1\r\nTransfer-Encoding:\r\n chunked\r\n\r\n0\r\n\r\n", HttpError::BadHeader},
      // A bare CR inside a field (RFC 9112 §2.2).
      {"POST / HTTP/1.1\r\nX: a\rContent-Length: 5\r\n\r\nhello", HttpError::BadHeader},
      // Transfer codings other than a single final chunked (RFC 9112 §6.1,
      // §6.3 item 4; §7.1: chunked is never applied twice).
      {"POST / HTTP/1.1\r\nTransfer-Encoding: identity\r\n\r\n", HttpError::UnsupportedCoding},
      {"POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
       HttpError::UnsupportedCoding},
      {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n",
       HttpError::UnsupportedCoding},
      {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked, chunked\r\n\r\n0\r\n\r\n",
       HttpError::UnsupportedCoding},
      {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n"
       "0\r\n\r\n",
       HttpError::UnsupportedCoding},
      {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n\r\n0\r\n\r\n",
       HttpError::UnsupportedCoding},
      {"POST / HTTP/1.1\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n",
       HttpError::UnsupportedCoding},
      // RFC 9112 §6.1: an HTTP/1.0 message with Transfer-Encoding has faulty
      // framing, even with a Content-Length.
      {"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
       HttpError::UnsupportedCoding},
      {"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\nhello",
       HttpError::UnsupportedCoding},
      // Chunk sizes are 1*HEXDIG (RFC 9112 §7.1): no sign, prefix or leading
      // whitespace, no more digits than fit.
      {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n 5\r\nhello\r\n0\r\n\r\n",
       HttpError::BadChunk},
      {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n+5\r\nhello\r\n0\r\n\r\n",
       HttpError::BadChunk},
      {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0x5\r\nhello\r\n0\r\n\r\n",
       HttpError::BadChunk},
      {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5 5\r\nhello\r\n0\r\n\r\n",
       HttpError::BadChunk},
      {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n10000000000000005\r\nhello\r\n",
       HttpError::BadChunk},
      // Chunk data longer than its size.
      {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhello\r\n0\r\n\r\n",
       HttpError::BadChunk},
  };
  for (const auto& [text, error] : cases) {
    SCOPED_TRACE(::testing::PrintToString(std::string(text)));
    for (const size_t step : {size_t{0}, size_t{1}, size_t{7}}) {
      const auto p = parse(HttpParser::Kind::Request, text, step);
      EXPECT_TRUE(p.parser.failed()) << "accepted, step " << step;
      EXPECT_FALSE(p.parser.done());
      EXPECT_EQ(p.parser.error(), error) << to_string(p.parser.error()) << ", step " << step;
    }
  }
}

// What may be accepted is accepted with one meaning, and the next request
// starts where a proxy would start it.
TEST(HttpSmugglingTest, UnambiguousFramingEndsWhereItSays) {
  const std::string next = "GET /next HTTP/1.1\r\nHost: x\r\n\r\n";
  const std::pair<std::string, std::string> cases[] = {
      // RFC 9110 §8.6: identical Content-Length values may be taken as one.
      {"POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello", "hello"},
      // OWS around a field value is not part of it (RFC 9110 §5.5).
      {"POST / HTTP/1.1\r\nContent-Length:  5 \r\n\r\nhello", "hello"},
      {"POST / HTTP/1.1\r\nContent-Length:\t005\r\n\r\nhello", "hello"},
      // Coding names are case-insensitive (RFC 9110 §10.1.4).
      {"POST / HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", "hello"},
      // BWS before a chunk extension (RFC 9112 §7.1.1); trailers are not body.
      {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5 ;a=b\r\nhello\r\n0\r\n"
       "Content-Length: 99\r\n\r\n",
       "hello"},
      // A request with neither has no body (RFC 9112 §6.3 item 7).
      {"POST / HTTP/1.1\r\nHost: x\r\n\r\n", ""},
  };
  for (const auto& [head, body] : cases) {
    SCOPED_TRACE(::testing::PrintToString(head));
    const std::string text = head + next;
    for (const size_t step : {size_t{0}, size_t{1}, size_t{7}}) {
      auto p = parse(HttpParser::Kind::Request, text, step);
      ASSERT_TRUE(p.parser.done()) << to_string(p.parser.error()) << ", step " << step;
      EXPECT_EQ(p.body, body);
      EXPECT_EQ(p.used, head.size()) << "step " << step;
      const auto second = request(std::string_view(text).substr(p.used));
      ASSERT_TRUE(second.parser.done()) << "step " << step;
      EXPECT_EQ(second.parser.target(), "/next");
    }
  }
}

TEST(HttpParserTest, RandomBytesNeverCrash) {
  Rng rng(seed_from_env("TINYTCP_SEED", 5));
  for (int i = 0; i < 2000; ++i) {
    std::string junk = "HTTP/1.1 200 OK\r\n" + rng.bytes(rng.uniform(0, 200));
    auto p = parse(HttpParser::Kind::Response, junk, rng.uniform(1, 16), true);
    EXPECT_TRUE(p.parser.done() || p.parser.failed()) << "seed " << rng.seed();
  }
}

}  // namespace
}  // namespace tinytcp::proto
