#include "proto/http.hh"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace tinytcp::proto {

namespace {

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  return s;
}

// RFC 9110 §5.6.2 token characters.
bool is_tchar(char c) {
  const auto u = static_cast<unsigned char>(c);
  return std::isalnum(u) != 0 ||
         std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

std::optional<uint64_t> parse_decimal(std::string_view s) {
  if (s.empty() || s.size() > 19) {
    return std::nullopt;
  }
  uint64_t v = 0;
  for (const char c : s) {
    if (c < '0' || c > '9') {
      return std::nullopt;
    }
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v;
}

}  // namespace

Expected<Url, std::string> parse_url(std::string_view text) {
  constexpr std::string_view kScheme = "http://";
  if (text.size() < kScheme.size() || !iequals(text.substr(0, kScheme.size()), kScheme)) {
    if (text.find("://") != std::string_view::npos) {
      return make_unexpected(fmt::format("unsupported URL scheme in '{}' (only http://)", text));
    }
    return make_unexpected(fmt::format("not an http:// URL: '{}'", text));
  }
  std::string_view rest = text.substr(kScheme.size());
  const size_t slash = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, slash);
  Url url;
  if (slash != std::string_view::npos) {
    std::string_view path = rest.substr(slash);
    path = path.substr(0, path.find('#'));  // fragments never go on the wire
    url.path = path.empty() || path[0] != '/' ? "/" + std::string(path) : std::string(path);
  }
  if (authority.find('@') != std::string_view::npos) {
    return make_unexpected(fmt::format("user info in URLs is not supported: '{}'", text));
  }
  const size_t colon = authority.rfind(':');
  if (colon != std::string_view::npos) {
    const auto port = parse_decimal(authority.substr(colon + 1));
    if (!port || *port == 0 || *port > 65535) {
      return make_unexpected(fmt::format("bad port in '{}'", text));
    }
    url.port = static_cast<uint16_t>(*port);
    authority = authority.substr(0, colon);
  }
  if (authority.empty()) {
    return make_unexpected(fmt::format("no host in '{}'", text));
  }
  for (const char c : authority) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) == 0 && c != '.' && c != '-' && c != '_') {
      return make_unexpected(fmt::format("bad host in '{}'", text));
    }
  }
  for (const char c : url.path) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7f) {
      return make_unexpected(fmt::format("bad character in the path of '{}'", text));
    }
  }
  url.host = std::string(authority);
  return url;
}

std::string make_get_request(const Url& url, std::string_view user_agent) {
  const std::string host = url.port == 80 ? url.host : fmt::format("{}:{}", url.host, url.port);
  return fmt::format(
      "GET {} HTTP/1.1\r\nHost: {}\r\nUser-Agent: {}\r\nAccept: */*\r\nConnection: close\r\n\r\n",
      url.path, host, user_agent);
}

std::string_view to_string(HttpError e) {
  switch (e) {
    case HttpError::BadStartLine:
      return "malformed start line";
    case HttpError::BadVersion:
      return "not HTTP/1.x";
    case HttpError::BadStatus:
      return "bad status code";
    case HttpError::BadHeader:
      return "malformed header field";
    case HttpError::HeaderTooLarge:
      return "header section too large";
    case HttpError::TooManyHeaders:
      return "too many header fields";
    case HttpError::BadContentLength:
      return "bad Content-Length";
    case HttpError::ConflictingLength:
      return "conflicting message length";
    case HttpError::BadChunk:
      return "malformed chunk";
    case HttpError::UnsupportedCoding:
      return "unsupported transfer coding";
    case HttpError::Truncated:
      return "message truncated";
    case HttpError::kCount:
      break;
  }
  return "unknown HTTP error";
}

std::optional<std::string_view> HttpParser::header(std::string_view name) const {
  for (const auto& [k, v] : headers_) {
    if (iequals(k, name)) {
      return std::string_view(v);
    }
  }
  return std::nullopt;
}

void HttpParser::fail(HttpError e) {
  error_ = e;
  state_ = State::Error;
}

size_t HttpParser::take_line(std::string_view data, std::optional<std::string>& line) {
  const size_t nl = data.find('\n');
  const size_t used = nl == std::string_view::npos ? data.size() : nl + 1;
  // Header lines count against the header budget; chunk-size lines against a
  // small budget of their own, so a peer cannot make us buffer without bound.
  const bool in_head =
      state_ == State::StartLine || state_ == State::Headers || state_ == State::Trailers;
  const size_t limit = in_head ? kMaxHeaderBytes - std::min(header_bytes_, kMaxHeaderBytes) : 1024;
  if (line_.size() + used > limit) {
    fail(in_head ? HttpError::HeaderTooLarge : HttpError::BadChunk);
    return used;
  }
  line_.append(data.substr(0, used));
  if (in_head) {
    header_bytes_ += used;
  }
  if (nl == std::string_view::npos) {
    return used;
  }
  // RFC 9112 §2.2: a bare LF is accepted as a line terminator.
  line_.pop_back();
  if (!line_.empty() && line_.back() == '\r') {
    line_.pop_back();
  }
  line = std::move(line_);
  line_.clear();
  return used;
}

size_t HttpParser::feed(std::string_view data, const BodySink& on_body) {
  return feed(data, HeadSink{}, on_body);
}

size_t HttpParser::feed(std::string_view data, const HeadSink& on_head, const BodySink& on_body) {
  size_t used = 0;
  while (used < data.size() && state_ != State::Done && state_ != State::Error) {
    const std::string_view rest = data.substr(used);
    switch (state_) {
      case State::StartLine:
      case State::Headers:
      case State::ChunkSize:
      case State::ChunkDataEnd:
      case State::Trailers: {
        std::optional<std::string> line;
        used += take_line(rest, line);
        if (!line) {
          break;
        }
        if (state_ == State::StartLine) {
          if (line->empty() && kind_ == Kind::Request) {
            break;  // RFC 9112 §2.2: ignore CRLFs before the request line (bounded)
          }
          on_start_line(*line);
        } else if (state_ == State::Headers) {
          if (line->empty()) {
            on_headers_done();
            if (state_ != State::Error && on_head) {
              on_head();
            }
          } else {
            on_header_line(*line);
          }
        } else if (state_ == State::ChunkSize) {
          on_chunk_size(*line);
        } else if (state_ == State::ChunkDataEnd) {
          if (!line->empty()) {
            fail(HttpError::BadChunk);
          } else {
            state_ = State::ChunkSize;
          }
        } else if (line->empty()) {  // Trailers: ignored, ended by an empty line
          state_ = State::Done;
        }
        break;
      }
      case State::Body:
      case State::ChunkData: {
        const size_t n = static_cast<size_t>(std::min<uint64_t>(remaining_, rest.size()));
        if (n > 0 && on_body) {
          on_body(rest.substr(0, n));
        }
        used += n;
        remaining_ -= n;
        body_bytes_ += n;
        if (remaining_ == 0) {
          state_ = state_ == State::Body ? State::Done : State::ChunkDataEnd;
        }
        break;
      }
      case State::BodyUntilClose:
        if (on_body) {
          on_body(rest);
        }
        body_bytes_ += rest.size();
        used = data.size();
        break;
      case State::Done:
      case State::Error:
        break;
    }
  }
  return used;
}

void HttpParser::finish() {
  if (state_ == State::BodyUntilClose) {
    state_ = State::Done;
  } else if (state_ != State::Done && state_ != State::Error) {
    fail(HttpError::Truncated);
  }
}

void HttpParser::on_start_line(const std::string& line) {
  if (kind_ == Kind::Response) {
    // status-line = HTTP-version SP status-code SP [ reason-phrase ]
    if (line.size() < 12 || line.compare(0, 7, "HTTP/1.") != 0 || line[8] != ' ') {
      fail(line.compare(0, 5, "HTTP/") == 0 ? HttpError::BadVersion : HttpError::BadStartLine);
      return;
    }
    if (line[7] != '0' && line[7] != '1') {
      fail(HttpError::BadVersion);
      return;
    }
    http10_ = line[7] == '0';
    const auto code = parse_decimal(std::string_view(line).substr(9, 3));
    if (!code || *code < 100 || *code > 599 || (line.size() > 12 && line[12] != ' ')) {
      fail(HttpError::BadStatus);
      return;
    }
    status_ = static_cast<int>(*code);
    reason_ = line.size() > 13 ? line.substr(13) : "";
  } else {
    // request-line = method SP request-target SP HTTP-version
    const size_t sp1 = line.find(' ');
    const size_t sp2 = sp1 == std::string::npos ? sp1 : line.find(' ', sp1 + 1);
    if (sp1 == std::string::npos || sp2 == std::string::npos || sp1 == 0 || sp2 == sp1 + 1 ||
        line.find(' ', sp2 + 1) != std::string::npos) {
      fail(HttpError::BadStartLine);
      return;
    }
    method_ = line.substr(0, sp1);
    target_ = line.substr(sp1 + 1, sp2 - sp1 - 1);
    const std::string version = line.substr(sp2 + 1);
    if (!std::all_of(method_.begin(), method_.end(), is_tchar)) {
      fail(HttpError::BadStartLine);
      return;
    }
    if (version != "HTTP/1.1" && version != "HTTP/1.0") {
      fail(HttpError::BadVersion);
      return;
    }
    http10_ = version == "HTTP/1.0";
  }
  state_ = State::Headers;
}

void HttpParser::on_header_line(const std::string& line) {
  if (line[0] == ' ' || line[0] == '\t') {
    fail(HttpError::BadHeader);  // RFC 9112 §5.2: obsolete line folding is rejected
    return;
  }
  const size_t colon = line.find(':');
  if (colon == std::string::npos || colon == 0) {
    fail(HttpError::BadHeader);
    return;
  }
  const std::string_view name(line.data(), colon);
  if (!std::all_of(name.begin(), name.end(), is_tchar)) {
    fail(HttpError::BadHeader);  // includes whitespace before the colon (§5.1)
    return;
  }
  if (headers_.size() >= kMaxHeaders) {
    fail(HttpError::TooManyHeaders);
    return;
  }
  const std::string_view value = trim(std::string_view(line).substr(colon + 1));
  if (std::any_of(value.begin(), value.end(),
                  [](char c) { return c == '\0' || c == '\r' || c == '\n'; })) {
    fail(HttpError::BadHeader);
    return;
  }
  headers_.emplace_back(std::string(name), std::string(value));
}

void HttpParser::on_headers_done() {
  for (const auto& [name, value] : headers_) {
    if (iequals(name, "Content-Length")) {
      const auto n = parse_decimal(value);
      if (!n) {
        fail(HttpError::BadContentLength);
        return;
      }
      if (content_length_ && *content_length_ != *n) {
        fail(HttpError::ConflictingLength);
        return;
      }
      content_length_ = n;
    } else if (iequals(name, "Transfer-Encoding")) {
      // RFC 9112 §7.1: chunked is applied once, so a second field naming it
      // (the list "chunked, chunked") is as unreadable as any other coding.
      if (!iequals(value, "chunked") || chunked_) {
        fail(HttpError::UnsupportedCoding);
        return;
      }
      chunked_ = true;
    }
  }
  // RFC 9112 §6.1: Transfer-Encoding in an HTTP/1.0 message means its
  // framing is faulty, whatever else it says (HTTP/1.0 has no chunked, so a
  // proxy may have framed it differently).
  if (chunked_ && http10_) {
    fail(HttpError::UnsupportedCoding);
    return;
  }
  // RFC 9112 §6.3: a message with both is a smuggling risk; refuse it.
  if (chunked_ && content_length_) {
    fail(HttpError::ConflictingLength);
    return;
  }
  const bool no_body = head_request_ || (kind_ == Kind::Response &&
                                         (status_ / 100 == 1 || status_ == 204 || status_ == 304));
  if (no_body) {
    state_ = State::Done;
  } else if (chunked_) {
    state_ = State::ChunkSize;
  } else if (content_length_) {
    remaining_ = *content_length_;
    state_ = remaining_ == 0 ? State::Done : State::Body;
  } else if (kind_ == Kind::Response) {
    state_ = State::BodyUntilClose;
  } else {
    state_ = State::Done;  // RFC 9112 §6.3: a request without either has no body
  }
}

void HttpParser::on_chunk_size(const std::string& line) {
  std::string_view text = line;
  text = text.substr(0, text.find(';'));  // chunk extensions are ignored
  // RFC 9112 §7.1: chunk-size is 1*HEXDIG, then BWS before an extension;
  // whitespace in front is an error, not padding another parser may read
  // differently.
  text = trim(text);
  if (text.empty() || text.size() > 15 || text.data() != line.data()) {
    fail(HttpError::BadChunk);
    return;
  }
  uint64_t size = 0;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isxdigit(u) == 0) {
      fail(HttpError::BadChunk);
      return;
    }
    size = size * 16 +
           static_cast<uint64_t>(std::isdigit(u) != 0 ? c - '0' : std::tolower(u) - 'a' + 10);
  }
  if (size == 0) {
    state_ = State::Trailers;
  } else {
    remaining_ = size;
    state_ = State::ChunkData;
  }
}

}  // namespace tinytcp::proto
