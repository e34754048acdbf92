#pragma once

// HttpFileServer: tt-serve's HTTP/1.1 server over a stack::Host, one request
// per connection. GET and HEAD of the regular files in a directory, and (only
// when allowed) PUT /NAME to store a file there through an HttpUpload (a
// unique temporary file, fsynced, renamed into place).
//
// It faces whoever can reach the port, so every connection is bounded: the
// request head must arrive within header_timeout of the accept, a connection
// that makes no progress either way for idle_timeout is reset, an upload past
// max_upload_bytes is refused with 413, and past max_connections the oldest
// connection still waiting for its request head is reset to make room. After
// the response it closes like nginx's lingering close: our FIN follows the
// response, then what the client still sends is read and dropped for up to
// linger_timeout, so a late byte (a pipelined request, a trailing CRLF, the
// rest of a refused body) does not turn the close into a RST that throws the
// queued response away.
//
// GET opens files beneath the directory only: no component may be a symlink,
// and only regular files are served (a FIFO or device is never opened for
// reading, so a request cannot block the loop).
//
// Sans-I/O as far as time goes: every call takes `now`, next_deadline() says
// when tick() is due (a scan of all connections every 250 ms while there are
// any, so timeouts fire up to that much late). It does file I/O (open, pread,
// write, fsync) on the caller's thread: a slow disk stalls every connection.

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "io/file_descriptor.hh"
#include "stack/host.hh"
#include "util/time.hh"

namespace tinytcp::apps {

struct HttpFileServerConfig {
  std::string dir;         // served directory
  bool allow_put = false;  // off: PUT gets 403
  uint64_t max_upload_bytes = uint64_t{1} << 30;
  Duration header_timeout = std::chrono::seconds(10);  // accept to end of request head
  Duration idle_timeout = std::chrono::seconds(30);    // no byte in or out
  Duration linger_timeout = std::chrono::seconds(5);   // after the response, for the peer's FIN
  size_t max_connections = 2048;
};

struct HttpFileServerStats {
  uint64_t connections = 0;
  uint64_t requests = 0;           // request heads parsed
  uint64_t bad_requests = 0;       // 400
  uint64_t not_found = 0;          // 404 (missing, outside, a symlink, not a regular file)
  uint64_t puts_refused = 0;       // 403: PUT without allow_put
  uint64_t uploads = 0;            // 201
  uint64_t uploads_too_large = 0;  // 413
  uint64_t upload_failures = 0;    // 500
  uint64_t header_timeouts = 0;    // reset: the request head did not arrive in time
  uint64_t idle_timeouts = 0;      // reset: no progress for idle_timeout
  uint64_t evicted = 0;            // reset at max_connections while waiting for a request head
  uint64_t lingering_closes = 0;   // closes that waited for the peer after the response
  uint64_t linger_timeouts = 0;    // of those, the peer did not finish in time
  uint64_t file_read_errors = 0;   // reset: a GET's file failed or shrank mid-response
  uint64_t bytes_in = 0;
  uint64_t bytes_out = 0;
};

class HttpFileServer {
 public:
  HttpFileServer(stack::Host& host, HttpFileServerConfig config);
  ~HttpFileServer();
  HttpFileServer(const HttpFileServer&) = delete;
  HttpFileServer& operator=(const HttpFileServer&) = delete;

  // A connection accepted from an HTTP listener: the server owns it now.
  void add(stack::SocketId id, Instant now);
  bool owns(stack::SocketId id) const { return conns_.count(id) != 0; }
  // Readable, Writable or Closed for a connection it owns.
  void on_event(stack::SocketId id, stack::SocketEvent event, Instant now);

  void tick(Instant now);
  std::optional<Instant> next_deadline() const;

  size_t connection_count() const { return conns_.size(); }
  const HttpFileServerStats& stats() const { return stats_; }
  const HttpFileServerConfig& config() const { return config_; }

 private:
  struct Connection;

  void service(stack::SocketId id, Connection& c, Instant now);
  void read_request(stack::SocketId id, Connection& c, Instant now);
  bool write_response(stack::SocketId id, Connection& c, Instant now);
  void linger(stack::SocketId id, Connection& c, Instant now);
  void on_request_head(Connection& c);
  void on_body(Connection& c, std::string_view body);
  void start_response(Connection& c);
  void respond(Connection& c, int status, const char* reason, const std::string& body);
  void finish(stack::SocketId id, Instant now);
  void reset(stack::SocketId id, Instant now);
  void make_room(Instant now);

  stack::Host& host_;
  HttpFileServerConfig config_;
  io::FileDescriptor dir_;  // config_.dir, opened once: requests resolve beneath it
  std::unordered_map<stack::SocketId, std::unique_ptr<Connection>> conns_;
  HttpFileServerStats stats_;
  Instant next_scan_;                                              // of every connection's timeouts
  std::deque<std::pair<Instant, stack::SocketId>> awaiting_head_;  // accept order
};

}  // namespace tinytcp::apps
