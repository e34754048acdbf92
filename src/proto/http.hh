#pragma once

// HTTP/1.1 (RFC 9112) message framing for webget and tt-serve, as a sans-I/O
// incremental parser and a few builders. It runs over any byte stream: the
// apps feed it what the connection delivers.
//
// The parser reads one request or response: start line, header fields, and a
// body delimited by Content-Length, by chunked transfer coding (RFC 9112 §7.1),
// or (responses only) by the connection closing. Body bytes are handed to a
// callback as they arrive and never buffered, so a 100 MiB download costs no
// memory. The header section is bounded (kMaxHeaderBytes); anything malformed
// is an error with a reason, never a crash.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/expected.hh"

namespace tinytcp::proto {

struct Url {
  std::string host;
  uint16_t port = 80;
  std::string path = "/";  // origin-form request target, with query
};

// Parses "http://HOST[:PORT][/PATH]". Errors name what is wrong.
Expected<Url, std::string> parse_url(std::string_view text);

// "GET <path> HTTP/1.1" with Host (":port" when not 80), Connection: close.
std::string make_get_request(const Url& url, std::string_view user_agent = "tinytcp-webget/0.1");

enum class HttpError {
  BadStartLine,
  BadVersion,
  BadStatus,
  BadHeader,
  HeaderTooLarge,
  TooManyHeaders,
  BadContentLength,
  ConflictingLength,  // both Content-Length and chunked, or differing lengths
  BadChunk,
  UnsupportedCoding,  // a coding other than one chunked; any in HTTP/1.0 (RFC 9112 §6.1)
  Truncated,          // the stream ended inside the message
  kCount,
};
std::string_view to_string(HttpError e);

class HttpParser {
 public:
  static constexpr size_t kMaxHeaderBytes = 64 * 1024;
  static constexpr size_t kMaxHeaders = 100;

  enum class Kind { Request, Response };
  using BodySink = std::function<void(std::string_view)>;
  using HeadSink = std::function<void()>;

  // `head_request`: a response to HEAD has no body whatever its headers say.
  explicit HttpParser(Kind kind, bool head_request = false)
      : kind_(kind), head_request_(head_request) {}

  // Consumes bytes of the message; body bytes go to `on_body`. Returns the
  // bytes used: fewer than given once the message is complete (the rest
  // belongs to the next message) or on error.
  size_t feed(std::string_view data, const BodySink& on_body);
  // The same, and `on_head` runs once the header section is complete, before
  // the first body byte goes to `on_body` (even when both came in one
  // `data`), so a server can act on the head (open the file a PUT body goes
  // to, refuse it) first.
  size_t feed(std::string_view data, const HeadSink& on_head, const BodySink& on_body);
  // The stream ended: completes a close-delimited body, else Truncated if
  // the message is unfinished.
  void finish();

  bool done() const { return state_ == State::Done; }
  bool failed() const { return state_ == State::Error; }
  bool headers_complete() const {
    return state_ != State::StartLine && state_ != State::Headers && state_ != State::Error;
  }
  HttpError error() const { return error_; }

  // Request line.
  const std::string& method() const { return method_; }
  const std::string& target() const { return target_; }
  // Status line.
  int status() const { return status_; }
  const std::string& reason() const { return reason_; }
  // Header fields in order; names as sent.
  const std::vector<std::pair<std::string, std::string>>& headers() const { return headers_; }
  // The first field of that name (case-insensitive), if any.
  std::optional<std::string_view> header(std::string_view name) const;
  // Content-Length when the message declared one.
  std::optional<uint64_t> content_length() const { return content_length_; }
  bool chunked() const { return chunked_; }
  uint64_t body_bytes() const { return body_bytes_; }

 private:
  enum class State {
    StartLine,
    Headers,
    Body,  // Content-Length
    BodyUntilClose,
    ChunkSize,
    ChunkData,
    ChunkDataEnd,  // CRLF after chunk data
    Trailers,
    Done,
    Error,
  };

  // Takes one CRLF-terminated line from data (buffered across calls in
  // line_); returns bytes used and sets `line` when a whole line is ready.
  size_t take_line(std::string_view data, std::optional<std::string>& line);
  void on_start_line(const std::string& line);
  void on_header_line(const std::string& line);
  void on_headers_done();
  void on_chunk_size(const std::string& line);
  void fail(HttpError e);

  Kind kind_;
  bool head_request_;
  State state_ = State::StartLine;
  HttpError error_ = HttpError::Truncated;
  std::string line_;
  size_t header_bytes_ = 0;
  std::string method_;
  std::string target_;
  int status_ = 0;
  std::string reason_;
  std::vector<std::pair<std::string, std::string>> headers_;
  std::optional<uint64_t> content_length_;
  bool chunked_ = false;
  bool http10_ = false;     // the start line says HTTP/1.0
  uint64_t remaining_ = 0;  // in the current body or chunk
  uint64_t body_bytes_ = 0;
};

}  // namespace tinytcp::proto
