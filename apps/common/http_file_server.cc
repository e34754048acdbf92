#include "common/http_file_server.hh"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "proto/http.hh"
#include "proto/transfer_messages.hh"

namespace tinytcp::apps {

namespace {

constexpr size_t kChunkBytes = 256 * 1024;

}  // namespace

struct HttpFileServer::Connection {
  proto::HttpParser parser{proto::HttpParser::Kind::Request};
  bool responded = false;
  std::string out;                // response head (and small bodies) still to write
  int file = -1;                  // GET: the file being sent
  std::unique_ptr<char[]> chunk;  // file bytes read, [chunk_pos, chunk_len) not yet written
  size_t chunk_pos = 0;
  size_t chunk_len = 0;
  uint64_t file_offset = 0;
  uint64_t file_size = 0;
  int upload = -1;  // PUT: the temporary file being written
  std::string upload_tmp;
  std::string upload_final;
  bool upload_failed = false;
  ~Connection() {
    if (file >= 0) {
      ::close(file);
    }
    if (upload >= 0) {
      ::close(upload);
      ::unlink(upload_tmp.c_str());
    }
  }
};

HttpFileServer::HttpFileServer(stack::Host& host, HttpFileServerConfig config)
    : host_(host), config_(std::move(config)) {}

HttpFileServer::~HttpFileServer() = default;

void HttpFileServer::add(stack::SocketId id, Instant now) {
  conns_.emplace(id, std::make_unique<Connection>());
  ++stats_.connections;
  on_event(id, stack::SocketEvent::Readable, now);
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

void HttpFileServer::tick(Instant) {}

std::optional<Instant> HttpFileServer::next_deadline() const {
  return std::nullopt;
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

void HttpFileServer::make_room(Instant) {}

void HttpFileServer::respond(Connection& h, int status, const char* reason,
                             const std::string& body) {
  h.out = fmt::format(
      "HTTP/1.1 {} {}\r\nContent-Length: {}\r\nContent-Type: text/plain\r\nConnection: "
      "close\r\nServer: tinytcp\r\n\r\n{}",
      status, reason, body.size(), body);
  h.responded = true;
}

namespace {

// The file a request target names inside dir, or empty when it may not.
std::string resolve(const std::string& dir, const std::string& target) {
  std::string path = target.substr(0, target.find('?'));
  if (path.empty() || path[0] != '/' || path.find("..") != std::string::npos ||
      path.find('%') != std::string::npos || path.find('\\') != std::string::npos) {
    return {};
  }
  if (path == "/") {
    path = "/index.html";
  }
  return dir + path;
}

}  // namespace

void HttpFileServer::start_response(Connection& h) {
  const std::string& method = h.parser.method();
  if (method == "PUT") {
    if (h.upload_failed) {
      respond(h, 500, "Internal Server Error", "could not store the upload\n");
      return;
    }
    if (h.upload >= 0 && ::fsync(h.upload) == 0 && ::close(h.upload) == 0 &&
        ::rename(h.upload_tmp.c_str(), h.upload_final.c_str()) == 0) {
      h.upload = -1;
      respond(h, 201, "Created", "stored\n");
    } else {
      respond(h, 500, "Internal Server Error", "could not store the upload\n");
    }
    return;
  }
  if (method != "GET" && method != "HEAD") {
    respond(h, 405, "Method Not Allowed", "GET, HEAD or PUT\n");
    return;
  }
  const std::string path = resolve(config_.dir, h.parser.target());
  struct stat st {};
  const int fd = path.empty() ? -1 : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    if (fd >= 0) {
      ::close(fd);
    }
    respond(h, 404, "Not Found", "not found\n");
    return;
  }
  h.responded = true;
  h.file_size = static_cast<uint64_t>(st.st_size);
  h.out = fmt::format(
      "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nContent-Type: application/octet-stream\r\n"
      "Connection: close\r\nServer: tinytcp\r\n\r\n",
      h.file_size);
  if (method == "GET") {
    h.file = fd;
  } else {
    ::close(fd);
  }
}

void HttpFileServer::on_request_head(Connection& h) {
  if (h.parser.method() != "PUT" || h.upload >= 0 || h.upload_failed) {
    return;
  }
  std::string name = h.parser.target().substr(1);
  name = name.substr(0, name.find('?'));
  if (h.parser.target().empty() || h.parser.target()[0] != '/' || !proto::is_safe_name(name)) {
    h.upload_failed = true;
    return;
  }
  h.upload_final = config_.dir + "/" + name;
  h.upload_tmp = fmt::format("{}/.{}.upload.{}", config_.dir, name, ::getpid());
  h.upload = ::open(h.upload_tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  h.upload_failed = h.upload < 0;
}

void HttpFileServer::read_request(stack::SocketId id, Connection& h, Instant now) {
  for (auto v = host_.peek(id); !v.empty() && !h.responded; v = host_.peek(id)) {
    const size_t used = h.parser.feed(v, [&](std::string_view body) {
      if (h.upload >= 0 && !h.upload_failed) {
        while (!body.empty()) {
          const ssize_t n = ::write(h.upload, body.data(), body.size());
          if (n <= 0) {
            h.upload_failed = true;
            break;
          }
          body.remove_prefix(static_cast<size_t>(n));
        }
      }
    });
    stats_.bytes_in += v.size();
    host_.consume(id, v.size(), now);  // anything after the request is ignored
    static_cast<void>(used);
    if (h.parser.headers_complete()) {
      on_request_head(h);
    }
    if (h.parser.failed()) {
      respond(h, 400, "Bad Request", fmt::format("{}\n", proto::to_string(h.parser.error())));
    } else if (h.parser.done()) {
      start_response(h);
    }
  }
}

void HttpFileServer::linger(stack::SocketId, Connection&, Instant) {}

void HttpFileServer::service(stack::SocketId id, Connection& h, Instant now) {
  read_request(id, h, now);
  if (!h.responded) {
    const auto info = host_.info(id);
    if (info && info->peer_finished) {
      finish(id, now);
    }
    return;
  }
  write_response(id, h, now);
}

// The head (or a small body) from h.out, then the file in chunks read
// straight into a reused buffer, as much as the send buffer takes. False
// when the connection is gone.
bool HttpFileServer::write_response(stack::SocketId id, Connection& h, Instant now) {
  while (!h.out.empty()) {
    const size_t n = host_.write(id, h.out, now);
    stats_.bytes_out += n;
    h.out.erase(0, n);
    if (n == 0) {
      return true;  // send buffer full: continue on Writable
    }
  }
  for (;;) {
    if (h.chunk_pos == h.chunk_len && h.file >= 0 && h.file_offset < h.file_size) {
      const auto info = host_.info(id);
      const uint64_t room = info ? info->writable_bytes : 0;
      if (room == 0) {
        return true;
      }
      if (!h.chunk) {
        h.chunk = std::make_unique<char[]>(kChunkBytes);
      }
      const auto want =
          static_cast<size_t>(std::min<uint64_t>({room, kChunkBytes, h.file_size - h.file_offset}));
      const ssize_t n = ::pread(h.file, h.chunk.get(), want, static_cast<off_t>(h.file_offset));
      if (n <= 0) {
        reset(id, now);
        return false;
      }
      h.chunk_pos = 0;
      h.chunk_len = static_cast<size_t>(n);
      h.file_offset += static_cast<uint64_t>(n);
    }
    if (h.chunk_pos == h.chunk_len) {
      finish(id, now);  // all sent: our FIN follows the data
      return false;
    }
    const size_t n = host_.write(
        id, std::string_view(h.chunk.get() + h.chunk_pos, h.chunk_len - h.chunk_pos), now);
    stats_.bytes_out += n;
    h.chunk_pos += n;
    if (h.chunk_pos < h.chunk_len) {
      return true;  // continue on Writable
    }
  }
}

}  // namespace tinytcp::apps
