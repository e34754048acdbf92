// http_server: a tiny HTTP/1.1 server on tinytcp. Every GET gets one page
// ("hello from tinytcp"); anything else 405. Serves until killed, or
// --once: one request, then exit.
//
//   http_server DEV PORT [--once]
//   http_server tun144 80                      then: curl http://169.254.144.9/
//   http_server udp:127.0.0.1:9001@9000 80     then: webget --dev udp:127.0.0.1:9000@9001 ...
//
// Request heads are parsed with tinytcp's own HTTP parser (proto/http.hh).

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

#include <tinytcp/tinytcp.hh>

namespace {

// Reads the whole request (a GET has no body); false on EOF or a malformed one.
bool read_request(int fd, tinytcp::proto::HttpParser& parser) {
  char buf[4096];
  while (!parser.done()) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) {
      return false;
    }
    parser.feed(std::string_view(buf, static_cast<size_t>(n)), [](std::string_view) {});
    if (parser.failed()) {
      return false;
    }
  }
  return true;
}

void write_all(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n <= 0) {
      return;
    }
    done += static_cast<size_t>(n);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: http_server DEV PORT [--once]\n");
    return 1;
  }
  const auto port = static_cast<uint16_t>(std::atoi(argv[2]));
  const bool once = argc > 3 && std::strcmp(argv[3], "--once") == 0;
  try {
    tinytcp::runtime::RuntimeOptions options;
    options.dev = argv[1];  // tunN, tapN or udp:PEER_IP:PORT[@LOCAL_PORT]
    tinytcp::runtime::BlockingStack stack(options);
    stack.listen(port);
    std::fprintf(stderr, "http_server: listening on port %u (tinytcp %s)\n", port,
                 std::string(tinytcp::version()).c_str());
    for (;;) {
      const int fd = stack.accept(port, std::chrono::hours(24));
      if (fd < 0) {
        continue;
      }
      tinytcp::proto::HttpParser parser(tinytcp::proto::HttpParser::Kind::Request);
      if (read_request(fd, parser)) {
        const bool get = parser.method() == "GET";
        const std::string body = get ? "hello from tinytcp\n" : "method not allowed\n";
        write_all(fd, std::string(get ? "HTTP/1.1 200 OK" : "HTTP/1.1 405 Method Not Allowed") +
                          "\r\nContent-Type: text/plain\r\nContent-Length: " +
                          std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body);
      }
      ::close(fd);  // our FIN after the response
      if (once) {
        return 0;
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "http_server: %s\n", e.what());
    return 1;
  }
}
