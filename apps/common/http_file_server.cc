#include "common/http_file_server.hh"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "common/http_upload.hh"
#include "proto/http.hh"
#include "proto/transfer_messages.hh"

namespace tinytcp::apps {

namespace {

// The most of a file read into the send buffer at once.
constexpr size_t kChunkBytes = 256 * 1024;
// Timeouts are checked on a coarse scan of all connections, not a timer each.
constexpr Duration kScanInterval = std::chrono::milliseconds(250);

// The path of a request target inside the served directory ("/" is
// "index.html"), or empty when it may not name one: no "..", no
// percent-encoding, no backslash, no hidden (".") component.
std::string served_path(const std::string& target) {
  std::string path = target.substr(0, target.find('?'));
  if (path.empty() || path[0] != '/' || path.find("..") != std::string::npos ||
      path.find('%') != std::string::npos || path.find('\\') != std::string::npos ||
      path.find("/.") != std::string::npos) {
    return {};
  }
  return path == "/" ? "index.html" : path.substr(1);
}

// Opens `path` beneath `dir` for reading: every component is opened with
// O_NOFOLLOW (a symlink anywhere is refused), the last with O_NONBLOCK (a
// FIFO does not block the open), and only a regular file is kept.
io::FileDescriptor open_beneath(int dir, const std::string& path, struct stat& st) {
  io::FileDescriptor at;
  int current = dir;
  size_t start = 0;
  for (;;) {
    const size_t slash = path.find('/', start);
    const std::string part = path.substr(start, slash - start);
    if (part.empty()) {
      return {};
    }
    if (slash == std::string::npos) {
      io::FileDescriptor file(::openat(current, part.c_str(),
                                       O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
      if (!file || ::fstat(file.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
        return {};
      }
      return file;
    }
    at.reset(::openat(current, part.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!at) {
      return {};
    }
    current = at.get();
    start = slash + 1;
  }
}

}  // namespace

struct HttpFileServer::Connection {
  enum class Phase { Request, Response, Linger };

  proto::HttpParser parser{proto::HttpParser::Kind::Request};
  Phase phase = Phase::Request;
  Instant accepted;
  Instant last_progress;  // a byte in or out
  Instant linger_since;
  std::string out;          // response head (and small bodies) still to write
  io::FileDescriptor file;  // GET: the file being sent
  uint64_t file_offset = 0;
  uint64_t file_size = 0;
  std::unique_ptr<HttpUpload> upload;  // PUT: the body on its way to the file
};

HttpFileServer::HttpFileServer(stack::Host& host, HttpFileServerConfig config)
    : host_(host),
      config_(std::move(config)),
      dir_(config_.dir.empty() ? -1
                               : ::open(config_.dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {
  // No directory: tt-serve without --http never routes a request here.
  if (!config_.dir.empty() && !dir_) {
    throw std::runtime_error(
        fmt::format("cannot open directory {}: {}", config_.dir, std::strerror(errno)));
  }
}

HttpFileServer::~HttpFileServer() = default;

void HttpFileServer::add(stack::SocketId id, Instant now) {
  if (conns_.size() >= config_.max_connections) {
    make_room(now);
  }
  if (conns_.size() >= config_.max_connections) {
    ++stats_.evicted;  // every one is past its head: the newcomer goes
    host_.abort(id, now);
    return;
  }
  if (conns_.empty()) {
    next_scan_ = now + kScanInterval;
  }
  auto c = std::make_unique<Connection>();
  c->accepted = now;
  c->last_progress = now;
  conns_.emplace(id, std::move(c));
  awaiting_head_.emplace_back(now, id);
  ++stats_.connections;
  on_event(id, stack::SocketEvent::Readable, now);
}

// Past max_connections the oldest connection still waiting for its request
// head goes (awaiting_head_ is in accept order; entries of connections that
// moved on are skipped): a flood of half-sent requests then delays a good
// client by at most the flood's own turnover, never locks it out.
void HttpFileServer::make_room(Instant now) {
  while (!awaiting_head_.empty()) {
    const auto [accepted, id] = awaiting_head_.front();
    awaiting_head_.pop_front();
    const auto it = conns_.find(id);
    if (it != conns_.end() && it->second->accepted == accepted &&
        !it->second->parser.headers_complete() && it->second->phase == Connection::Phase::Request) {
      ++stats_.evicted;
      SPDLOG_DEBUG("http {}: evicted, still without a request head at max_connections", id);
      reset(id, now);
      return;
    }
  }
}

void HttpFileServer::on_event(stack::SocketId id, stack::SocketEvent event, Instant now) {
  const auto it = conns_.find(id);
  if (it == conns_.end()) {
    return;
  }
  if (event == stack::SocketEvent::Closed) {
    finish(id, now);
    return;
  }
  service(id, *it->second, now);
}

std::optional<Instant> HttpFileServer::next_deadline() const {
  return conns_.empty() ? std::nullopt : std::optional<Instant>(next_scan_);
}

void HttpFileServer::tick(Instant now) {
  if (now < next_scan_) {
    return;
  }
  next_scan_ = now + kScanInterval;
  while (!awaiting_head_.empty()) {  // forget the front entries that moved on
    const auto it = conns_.find(awaiting_head_.front().second);
    if (it != conns_.end() && !it->second->parser.headers_complete()) {
      break;
    }
    awaiting_head_.pop_front();
  }
  std::vector<std::pair<stack::SocketId, const char*>> expired;
  for (const auto& [id, c] : conns_) {
    if (c->phase == Connection::Phase::Linger) {
      if (now >= c->linger_since + config_.linger_timeout) {
        ++stats_.linger_timeouts;
        expired.emplace_back(id, nullptr);
      }
    } else if (!c->parser.headers_complete() && now >= c->accepted + config_.header_timeout) {
      ++stats_.header_timeouts;
      expired.emplace_back(id, "no request head within the header timeout");
    } else if (now >= c->last_progress + config_.idle_timeout) {
      ++stats_.idle_timeouts;
      expired.emplace_back(id, "idle");
    }
  }
  for (const auto& [id, why] : expired) {
    if (why == nullptr) {
      finish(id, now);  // lingered long enough: what was read is dropped, the rest resets
    } else {
      SPDLOG_DEBUG("http {}: reset: {}", id, why);
      reset(id, now);
    }
  }
}

void HttpFileServer::finish(stack::SocketId id, Instant now) {
  if (conns_.erase(id) > 0) {
    host_.close(id, now);
  }
}

void HttpFileServer::reset(stack::SocketId id, Instant now) {
  host_.abort(id, now);
  conns_.erase(id);
}

void HttpFileServer::respond(Connection& c, int status, const char* reason,
                             const std::string& body) {
  c.out = fmt::format(
      "HTTP/1.1 {} {}\r\nContent-Length: {}\r\nContent-Type: text/plain\r\nConnection: "
      "close\r\nServer: tinytcp\r\n\r\n{}",
      status, reason, body.size(), body);
  c.phase = Connection::Phase::Response;
  c.upload.reset();  // a refused or failed upload leaves no file
}

// The head is complete (its body may follow in the same segment): a PUT is
// refused here, before any body byte, or its upload file is opened.
void HttpFileServer::on_request_head(Connection& c) {
  ++stats_.requests;
  if (c.parser.method() != "PUT") {
    return;
  }
  if (!config_.allow_put) {
    ++stats_.puts_refused;
    respond(c, 403, "Forbidden",
            "PUT is disabled on this server (start tt-serve with --allow-put)\n");
    return;
  }
  if (c.parser.content_length() && *c.parser.content_length() > config_.max_upload_bytes) {
    ++stats_.uploads_too_large;
    respond(c, 413, "Content Too Large",
            fmt::format("uploads are limited to {} bytes\n", config_.max_upload_bytes));
    return;
  }
  const std::string& target = c.parser.target();
  const std::string name =
      target.empty() || target[0] != '/' ? std::string{} : target.substr(1, target.find('?') - 1);
  if (!proto::is_safe_name(name) || name[0] == '.') {
    ++stats_.bad_requests;
    respond(c, 400, "Bad Request", "PUT takes /NAME: one safe name, not hidden\n");
    return;
  }
  c.upload = std::make_unique<HttpUpload>(dir_.get(), name);
  if (!c.upload->open()) {
    ++stats_.upload_failures;
    spdlog::warn("http: cannot create an upload file in {}: {}", config_.dir, std::strerror(errno));
    respond(c, 500, "Internal Server Error", "could not store the upload\n");
  }
}

void HttpFileServer::on_body(Connection& c, std::string_view body) {
  if (!c.upload || c.phase != Connection::Phase::Request) {
    return;  // not a PUT, or already answered: the bytes are dropped
  }
  if (c.upload->bytes() + body.size() > config_.max_upload_bytes) {
    ++stats_.uploads_too_large;  // chunked: the size shows only as it arrives
    respond(c, 413, "Content Too Large",
            fmt::format("uploads are limited to {} bytes\n", config_.max_upload_bytes));
    return;
  }
  if (!c.upload->write(body)) {
    ++stats_.upload_failures;
    spdlog::warn("http: cannot write an upload in {}: {}", config_.dir, std::strerror(errno));
    respond(c, 500, "Internal Server Error", "could not store the upload\n");
  }
}

void HttpFileServer::start_response(Connection& c) {
  const std::string& method = c.parser.method();
  if (method == "PUT") {
    if (c.upload && c.upload->commit()) {
      ++stats_.uploads;
      respond(c, 201, "Created", "stored\n");
    } else {
      ++stats_.upload_failures;
      spdlog::warn("http: cannot store {}: {}", c.parser.target(), std::strerror(errno));
      respond(c, 500, "Internal Server Error", "could not store the upload\n");
    }
    return;
  }
  if (method != "GET" && method != "HEAD") {
    respond(c, 405, "Method Not Allowed",
            config_.allow_put ? "GET, HEAD or PUT\n" : "GET or HEAD\n");
    return;
  }
  const std::string path = served_path(c.parser.target());
  struct stat st {};
  io::FileDescriptor file =
      path.empty() ? io::FileDescriptor{} : open_beneath(dir_.get(), path, st);
  if (!file) {
    ++stats_.not_found;
    respond(c, 404, "Not Found", "not found\n");
    return;
  }
  c.phase = Connection::Phase::Response;
  c.file_size = static_cast<uint64_t>(st.st_size);
  c.out = fmt::format(
      "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nContent-Type: application/octet-stream\r\n"
      "Connection: close\r\nServer: tinytcp\r\n\r\n",
      c.file_size);
  if (method == "GET") {
    c.file = std::move(file);
  }
}

// Feeds the parser only what belongs to this request: what follows it (a
// pipelined request, a stray CRLF) stays unread until the lingering close
// drops it.
void HttpFileServer::read_request(stack::SocketId id, Connection& c, Instant now) {
  while (c.phase == Connection::Phase::Request) {
    const std::string_view v = host_.peek(id);
    if (v.empty()) {
      break;
    }
    const size_t used = c.parser.feed(
        v, [&] { on_request_head(c); }, [&](std::string_view body) { on_body(c, body); });
    stats_.bytes_in += used;
    host_.consume(id, used, now);
    c.last_progress = now;
    if (c.phase != Connection::Phase::Request) {
      break;  // answered from the head or the body (a refusal)
    }
    if (c.parser.failed()) {
      ++stats_.bad_requests;
      respond(c, 400, "Bad Request", fmt::format("{}\n", proto::to_string(c.parser.error())));
    } else if (c.parser.done()) {
      start_response(c);
    } else if (used < v.size()) {
      break;  // cannot happen: an unfinished parser takes everything
    }
  }
}

void HttpFileServer::service(stack::SocketId id, Connection& c, Instant now) {
  read_request(id, c, now);
  if (c.phase == Connection::Phase::Request) {
    const auto info = host_.info(id);
    if (info && info->peer_finished) {
      finish(id, now);  // the client gave up before its request was whole
    }
    return;
  }
  if (c.phase == Connection::Phase::Response && !write_response(id, c, now)) {
    return;
  }
  if (c.phase == Connection::Phase::Linger) {
    linger(id, c, now);
  }
}

// The head (or a small body) from c.out, then the file read straight into
// the send buffer (Host::write_region: one copy, no buffer of ours), as much
// as it takes; once all of it is queued, our FIN follows and the connection
// lingers. False when the connection is gone.
bool HttpFileServer::write_response(stack::SocketId id, Connection& c, Instant now) {
  while (!c.out.empty()) {
    const size_t n = host_.write(id, c.out, now);
    if (n == 0) {
      return true;  // send buffer full: continue on Writable
    }
    stats_.bytes_out += n;
    c.out.erase(0, n);
    c.last_progress = now;
  }
  while (c.file && c.file_offset < c.file_size) {
    const stream::WriteRegion r = host_.write_region(
        id, static_cast<size_t>(std::min<uint64_t>(kChunkBytes, c.file_size - c.file_offset)));
    if (r.size() == 0) {
      return true;  // send buffer full: continue on Writable
    }
    iovec iov[2] = {{r.first, static_cast<size_t>(r.first_size)},
                    {r.second, static_cast<size_t>(r.second_size)}};
    const ssize_t n =
        ::preadv(c.file.get(), iov, r.second_size > 0 ? 2 : 1, static_cast<off_t>(c.file_offset));
    if (n <= 0) {
      // The file shrank or failed: the response cannot be finished.
      ++stats_.file_read_errors;
      spdlog::warn("http: cannot read {} at {} of {}: {}", c.parser.target(), c.file_offset,
                   c.file_size, n == 0 ? "end of file" : std::strerror(errno));
      reset(id, now);
      return false;
    }
    host_.commit_write(id, static_cast<size_t>(n), now);
    stats_.bytes_out += static_cast<uint64_t>(n);
    c.file_offset += static_cast<uint64_t>(n);
    c.last_progress = now;
  }
  // All queued. Closing now with unread input would reset the connection and
  // throw the queued response away: shut down writing instead and linger.
  c.file.reset();
  c.phase = Connection::Phase::Linger;
  c.linger_since = now;
  ++stats_.lingering_closes;
  host_.shutdown_write(id, now);
  return true;
}

// After the response: read and drop whatever the client still sends until
// its FIN (then close, gracefully) or linger_timeout (tick()).
void HttpFileServer::linger(stack::SocketId id, Connection&, Instant now) {
  for (auto v = host_.peek(id); !v.empty(); v = host_.peek(id)) {
    host_.consume(id, v.size(), now);
  }
  const auto info = host_.info(id);
  if (!info || info->peer_finished) {
    finish(id, now);
  }
}

}  // namespace tinytcp::apps
