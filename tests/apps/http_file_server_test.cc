// HttpFileServer (tt-serve's HTTP server) on Host a of two in-memory Hosts on
// a manual clock; the tests play the client on Host b, well-behaved or
// hostile, byte by byte.

#include "common/http_file_server.hh"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "../unit/stack/two_hosts.hh"

namespace {

// close() calls that found no open fd: a double close. The test binary's own
// close() takes precedence over libc's, so the server's calls come here.
int g_bad_closes = 0;

}  // namespace

extern "C" int close(int fd) {
  const long r = ::syscall(SYS_close, fd);
  if (r != 0 && errno == EBADF) {
    ++g_bad_closes;
  }
  return static_cast<int>(r);
}

namespace tinytcp::apps {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using stack::kA;
using stack::SocketEvent;
using stack::SocketId;

stack::HostConfig server_host() {
  stack::HostConfig c = stack::config_for(kA);
  c.max_sockets = 64;  // a small table, so a flood of connections can fill it
  return c;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void spit(const fs::path& p, const std::string& data) {
  std::ofstream(p, std::ios::binary) << data;
}

struct Reply {
  std::string text;  // everything received, head and body
  bool reset = false;
  bool eof = false;  // the server's FIN arrived
  int status() const { return text.size() >= 12 ? std::atoi(text.c_str() + 9) : 0; }
  std::string body() const {
    const size_t end = text.find("\r\n\r\n");
    return end == std::string::npos ? std::string{} : text.substr(end + 4);
  }
};

class HttpFileServerTest : public stack::TwoHosts {
 protected:
  HttpFileServerTest() : TwoHosts(server_host(), stack::config_for(stack::kB)) {
    char dir[] = "/tmp/http-file-server.XXXXXX";
    root_ = ::mkdtemp(dir);
    fs::create_directory(root_ / "www");
    fs::create_directory(root_ / "outside");
    config_.dir = (root_ / "www").string();
  }
  ~HttpFileServerTest() override {
    server_.reset();
    fs::remove_all(root_);
  }

  void start() {
    server_ = std::make_unique<HttpFileServer>(a_, config_);
    const auto listener = a_.listen(80, 128);
    ASSERT_TRUE(listener);
    a_.set_event_callback([this, l = *listener](SocketId id, SocketEvent e) {
      if (id == l) {
        while (const auto c = a_.accept(l)) {
          server_->add(*c, now_);
        }
      } else {
        server_->on_event(id, e, now_);
      }
    });
  }

  // Runs the link, both hosts and the server's timers until `done` or `limit`.
  void wait(Duration d) {
    run([] { return false; }, d);
  }

  template <typename Pred>
  bool run(Pred done, Duration limit = 10s) {
    const Instant end = now_ + limit;
    for (;;) {
      Instant stop = end;
      if (const auto d = server_->next_deadline(); d && *d < stop) {
        stop = std::max(*d, now_);
      }
      if (run_until(done, stop - now_)) {
        return true;
      }
      if (now_ >= end) {
        return false;
      }
      server_->tick(now_);
    }
  }

  SocketId open() {
    const auto c = b_.connect(kA, 80, now_);
    EXPECT_TRUE(c);
    EXPECT_TRUE(run([&] { return b_.info(*c)->state == tcp::TcpState::Established; }));
    return *c;
  }

  // Writes all of `data` (running the link while the send buffer is full).
  void send_all(SocketId c, std::string_view data) {
    size_t written = 0;
    EXPECT_TRUE(run([&] {
      written += b_.write(c, data.substr(written), now_);
      return written == data.size();
    }));
  }

  // Reads `into` until the server's FIN or a reset, or `limit` passes.
  void receive(SocketId c, Reply& into, Duration limit = 60s) {
    run(
        [&] {
          into.text += read_all(b_, c);
          const auto info = b_.info(c);
          into.reset = info && info->close_reason == tcp::CloseReason::ResetByPeer;
          into.eof = info && info->peer_finished;
          return into.reset || into.eof;
        },
        limit);
  }

  Reply request(const std::string& bytes) {
    const SocketId c = open();
    send_all(c, bytes);
    Reply r;
    receive(c, r);
    b_.close(c, now_);
    return r;
  }

  bool closed_by_server(SocketId c) {
    const auto info = b_.info(c);
    return !info || info->close_reason.has_value() || info->peer_finished;
  }

  fs::path root_;
  HttpFileServerConfig config_;
  std::unique_ptr<HttpFileServer> server_;
};

// Item 7 of issue 21: body bytes in the same segment as the head.
TEST_F(HttpFileServerTest, PutWithTheBodyInTheHeadSegmentStoresEveryByte) {
  config_.allow_put = true;
  start();
  const Reply r = request("PUT /x HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello");
  EXPECT_EQ(r.status(), 201) << r.text;
  EXPECT_EQ(slurp(root_ / "www" / "x"), "hello");
}

// Item 8: a failed rename (the name is a directory) closes the temp file once.
TEST_F(HttpFileServerTest, PutOntoADirectoryFailsAndClosesTheTempFileOnce) {
  config_.allow_put = true;
  fs::create_directory(root_ / "www" / "sub");
  start();
  g_bad_closes = 0;
  const Reply r = request("PUT /sub HTTP/1.1\r\nContent-Length: 2\r\n\r\nhi");
  EXPECT_EQ(r.status(), 500) << r.text;
  EXPECT_EQ(g_bad_closes, 0);
  EXPECT_TRUE(fs::is_directory(root_ / "www" / "sub"));
  EXPECT_EQ(std::distance(fs::directory_iterator(root_ / "www"), {}), 1);  // no temp file left
}

// Item 8: two PUTs of one name at once each store their own whole body.
TEST_F(HttpFileServerTest, ConcurrentPutsOfOneNameEachStoreTheirOwnBody) {
  config_.allow_put = true;
  start();
  const std::string a(20000, 'a');
  const std::string b(20000, 'b');
  const std::string head = "PUT /same HTTP/1.1\r\nContent-Length: 20000\r\n\r\n";
  const SocketId c1 = open();
  const SocketId c2 = open();
  send_all(c1, head + a.substr(0, 10000));
  wait(50ms);
  send_all(c2, head + b.substr(0, 10000));
  wait(50ms);
  send_all(c1, a.substr(10000));
  Reply r1;
  receive(c1, r1);
  EXPECT_EQ(r1.status(), 201) << r1.text;
  EXPECT_TRUE(slurp(root_ / "www" / "same") == a) << "the first upload is not stored whole";
  send_all(c2, b.substr(10000));
  Reply r2;
  receive(c2, r2);
  EXPECT_EQ(r2.status(), 201) << r2.text;
  EXPECT_TRUE(slurp(root_ / "www" / "same") == b) << "the second upload is not stored whole";
}

// Item 8: a symlink planted where the old predictable temp name was is not
// followed.
TEST_F(HttpFileServerTest, PutDoesNotWriteThroughASymlinkAtTheTempName) {
  config_.allow_put = true;
  spit(root_ / "outside" / "victim", "precious");
  fs::create_symlink(root_ / "outside" / "victim",
                     root_ / "www" / fmt::format(".x.upload.{}", ::getpid()));
  start();
  const Reply r = request("PUT /x HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello");
  EXPECT_EQ(slurp(root_ / "outside" / "victim"), "precious");
  EXPECT_EQ(r.status(), 201) << r.text;
  EXPECT_FALSE(fs::is_symlink(root_ / "www" / "x"));
  EXPECT_EQ(slurp(root_ / "www" / "x"), "hello");
}

// Item 9: PUT is off unless asked for.
TEST_F(HttpFileServerTest, PutIsRefusedUnlessAllowed) {
  start();
  const Reply r = request("PUT /x HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello");
  EXPECT_EQ(r.status(), 403) << r.text;
  EXPECT_NE(r.body().find("--allow-put"), std::string::npos) << r.text;
  EXPECT_FALSE(fs::exists(root_ / "www" / "x"));
  EXPECT_EQ(server_->stats().puts_refused, 1u);
  EXPECT_TRUE(r.eof);
  EXPECT_FALSE(r.reset);
}

// Item 9: uploads past max_upload_bytes, declared or chunked.
TEST_F(HttpFileServerTest, UploadsPastTheLimitAreRefused) {
  config_.allow_put = true;
  config_.max_upload_bytes = 10;
  start();
  const Reply declared = request("PUT /x HTTP/1.1\r\nContent-Length: 11\r\n\r\nhello world");
  EXPECT_EQ(declared.status(), 413) << declared.text;
  const Reply chunked = request(
      "PUT /y HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nhello "
      "\r\n5\r\nworld\r\n0\r\n\r\n");
  EXPECT_EQ(chunked.status(), 413) << chunked.text;
  const Reply fits = request("PUT /z HTTP/1.1\r\nContent-Length: 10\r\n\r\nhelloworld");
  EXPECT_EQ(fits.status(), 201) << fits.text;
  EXPECT_EQ(server_->stats().uploads_too_large, 2u);
  EXPECT_FALSE(fs::exists(root_ / "www" / "x"));
  EXPECT_FALSE(fs::exists(root_ / "www" / "y"));
  EXPECT_EQ(std::distance(fs::directory_iterator(root_ / "www"), {}), 1);  // z, no temp files
}

// Item 9: a request head that never ends is cut at the header timeout, even
// when it keeps dripping bytes (the idle timeout never fires then).
TEST_F(HttpFileServerTest, HalfSentAndDrippedRequestHeadsAreResetAtTheHeaderTimeout) {
  config_.header_timeout = 10s;
  start();
  const SocketId half = open();
  send_all(half, "GET / HTTP/1.1\r\nHost: a\r\n");
  const SocketId drip = open();
  int dripped = 0;
  for (int i = 0; i < 90; ++i) {  // a byte every 100 ms for 9 s
    dripped += static_cast<int>(b_.write(drip, "X", now_));
    wait(100ms);
  }
  EXPECT_FALSE(closed_by_server(half));
  EXPECT_FALSE(closed_by_server(drip));
  EXPECT_TRUE(run([&] { return closed_by_server(half) && closed_by_server(drip); }, 2s));
  EXPECT_EQ(server_->stats().header_timeouts, 2u);
  EXPECT_EQ(server_->connection_count(), 0u);
  EXPECT_EQ(dripped, 90);
}

// Item 9: connections stuck waiting for their heads do not lock out a good
// client, even when they fill the Host's socket table.
TEST_F(HttpFileServerTest, HalfSentRequestsDoNotLockOutAGoodClient) {
  config_.max_connections = 16;
  spit(root_ / "www" / "hello.txt", "hello\n");
  start();
  std::vector<SocketId> bad;
  for (int i = 0; i < 100; ++i) {
    const auto c = b_.connect(kA, 80, now_);
    ASSERT_TRUE(c);
    bad.push_back(*c);
    wait(5ms);
    if (b_.info(*c) && b_.info(*c)->state == tcp::TcpState::Established) {
      b_.write(*c, "GET / HTTP/1.1\r\n", now_);
    }
  }
  wait(100ms);
  const SocketId good = b_.connect(kA, 80, now_).value();
  bool sent = false;
  Reply r;
  run(
      [&] {
        if (!sent && b_.info(good)->state == tcp::TcpState::Established) {
          sent = b_.write(good, "GET /hello.txt HTTP/1.1\r\n\r\n", now_) > 0;
        }
        r.text += read_all(b_, good);
        return b_.info(good)->peer_finished;
      },
      2s);  // well inside the header timeout
  EXPECT_EQ(r.status(), 200) << r.text;
  EXPECT_EQ(r.body(), "hello\n");
  EXPECT_LE(server_->connection_count(), 16u);
  EXPECT_GE(server_->stats().evicted, 1u);
}

// Item 9: an upload that stalls is reset after the idle timeout, and its
// temp file goes.
TEST_F(HttpFileServerTest, StalledUploadIsResetAtTheIdleTimeout) {
  config_.allow_put = true;
  config_.idle_timeout = 30s;
  start();
  const SocketId c = open();
  send_all(c, "PUT /x HTTP/1.1\r\nContent-Length: 1000\r\n\r\n0123456789");
  wait(29s);
  EXPECT_FALSE(closed_by_server(c));
  EXPECT_TRUE(run([&] { return closed_by_server(c); }, 2s));
  EXPECT_EQ(server_->stats().idle_timeouts, 1u);
  EXPECT_EQ(std::distance(fs::directory_iterator(root_ / "www"), {}), 0);
}

// Item 9: GET does not follow a symlink out of the served directory.
TEST_F(HttpFileServerTest, GetDoesNotFollowSymlinks) {
  spit(root_ / "outside" / "secret", "secret");
  fs::create_symlink(root_ / "outside" / "secret", root_ / "www" / "link");
  fs::create_directory_symlink(root_ / "outside", root_ / "www" / "dirlink");
  start();
  EXPECT_EQ(request("GET /link HTTP/1.1\r\n\r\n").status(), 404);
  EXPECT_EQ(request("GET /dirlink/secret HTTP/1.1\r\n\r\n").status(), 404);
  EXPECT_EQ(server_->stats().not_found, 2u);
}

// Item 9: GET of a FIFO answers 404 instead of blocking the loop in open()
// (before the fix the alarm ended the test).
TEST_F(HttpFileServerTest, GetOfAFifoDoesNotBlock) {
  ASSERT_EQ(::mkfifo((root_ / "www" / "fifo").c_str(), 0644), 0);
  start();
  ::alarm(20);
  const Reply r = request("GET /fifo HTTP/1.1\r\n\r\n");
  ::alarm(0);
  EXPECT_EQ(r.status(), 404);
}

// Item 10: bytes that arrive after the request (a trailing CRLF) while the
// response is still queued do not turn the close into a RST.
TEST_F(HttpFileServerTest, LateBytesAfterTheRequestDoNotTruncateTheResponse) {
  const std::string big(1 << 20, 'z');
  spit(root_ / "www" / "big", big);
  start();
  const SocketId c = open();
  send_all(c, "GET /big HTTP/1.1\r\n\r\n");
  Reply r;
  ASSERT_TRUE(run([&] {
    r.text += read_all(b_, c);
    return r.text.size() > 1000;
  }));
  send_all(c, "\r\n");
  receive(c, r);
  EXPECT_FALSE(r.reset);
  EXPECT_TRUE(r.eof);
  EXPECT_EQ(r.status(), 200);
  EXPECT_EQ(r.body().size(), big.size());
  b_.close(c, now_);
  EXPECT_TRUE(run([&] { return server_->connection_count() == 0; }));
  EXPECT_EQ(server_->stats().lingering_closes, 1u);
}

// Item 10: a 400 while the client keeps sending its body reaches the client
// whole, and a client that never finishes is let go after linger_timeout.
TEST_F(HttpFileServerTest, ErrorWhileTheBodyArrivesIsDeliveredThenLingerEnds) {
  config_.linger_timeout = 5s;
  start();
  const SocketId c = open();
  send_all(c, "GET / HTTP/1.1\r\nContent-Length: x\r\n\r\n");
  Reply r;
  ASSERT_TRUE(run([&] {
    b_.write(c, std::string(1000, 'b'), now_);
    r.text += read_all(b_, c);
    const auto info = b_.info(c);
    r.eof = info && info->peer_finished;
    return r.eof || (info && info->close_reason);
  }));
  EXPECT_TRUE(r.eof);
  EXPECT_EQ(r.status(), 400) << r.text;
  EXPECT_NE(r.body().find("Content-Length"), std::string::npos) << r.text;
  // The client never closes: the server gives up after the linger timeout.
  EXPECT_TRUE(run([&] { return server_->connection_count() == 0; }, 6s));
  EXPECT_EQ(server_->stats().linger_timeouts, 1u);
}

// The file goes straight into the send buffer (Host::write_region), in
// pieces that wrap its ring: every byte arrives, in order, then the FIN.
TEST_F(HttpFileServerTest, GetOfAFileLargerThanTheSendBufferArrivesWhole) {
  std::string data(1'000'003, '\0');
  for (size_t i = 0; i < data.size(); ++i) {
    data[i] = static_cast<char>((i * 2654435761u) >> 13);
  }
  spit(root_ / "www" / "big.bin", data);
  start();
  const Reply r = request("GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(r.status(), 200);
  EXPECT_TRUE(r.eof);
  EXPECT_FALSE(r.reset);
  EXPECT_TRUE(r.body() == data);
  EXPECT_EQ(server_->stats().file_read_errors, 0u);
}

// A file that shrinks while it is sent cannot give the length promised: the
// connection is reset once, counted, and the server forgets it.
TEST_F(HttpFileServerTest, FileThatShrinksMidResponseResetsTheConnectionOnce) {
  spit(root_ / "www" / "shrinks.bin", std::string(1 << 20, 'x'));
  start();
  const SocketId c = open();
  send_all(c, "GET /shrinks.bin HTTP/1.1\r\nHost: x\r\n\r\n");
  Reply r;
  ASSERT_TRUE(run([&] {
    r.text += read_all(b_, c);
    return r.text.size() > 100'000;
  }));
  ASSERT_EQ(::truncate((root_ / "www" / "shrinks.bin").c_str(), 200'000), 0);
  receive(c, r);
  EXPECT_TRUE(r.reset);
  EXPECT_FALSE(r.eof);
  EXPECT_LE(r.body().size(), 200'000u);
  EXPECT_EQ(server_->stats().file_read_errors, 1u);
  EXPECT_EQ(server_->connection_count(), 0u);
  b_.close(c, now_);
}

}  // namespace
}  // namespace tinytcp::apps
