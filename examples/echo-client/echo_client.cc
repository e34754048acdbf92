// echo_client: sends a message to a TCP echo server through tinytcp and
// prints what comes back.
//
//   echo_client DEV SERVER_IP PORT [MESSAGE]
//   echo_client tun144 169.254.144.1 7 hello          (needs tun144: tun.sh start 144)
//   echo_client udp:127.0.0.1:9000@9001 169.254.0.1 7  (a tinytcp peer over the UDP tunnel)
//
// The stack runs on its own thread (BlockingStack); the connection is an
// ordinary file descriptor, so read(), write() and close() work as on a
// kernel socket.

#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include <tinytcp/tinytcp.hh>

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: echo_client DEV SERVER_IP PORT [MESSAGE]\n");
    return 1;
  }
  const std::string message = std::string(argc > 4 ? argv[4] : "hello from tinytcp") + "\n";
  const auto server = tinytcp::wire::Ipv4Address::parse(argv[2]);
  if (!server) {
    std::fprintf(stderr, "echo_client: bad IPv4 address '%s'\n", argv[2]);
    return 1;
  }
  try {
    // The ten lines: a running stack and a connected socket.
    tinytcp::runtime::RuntimeOptions options;
    options.dev = argv[1];  // tunN, tapN or udp:PEER_IP:PORT[@LOCAL_PORT]
    tinytcp::runtime::BlockingStack stack(options);
    const int fd =
        stack.connect(*server, static_cast<uint16_t>(std::atoi(argv[3])), std::chrono::seconds(10));
    if (::write(fd, message.data(), message.size()) != static_cast<ssize_t>(message.size())) {
      std::perror("echo_client: write");
      return 1;
    }
    ::shutdown(fd, SHUT_WR);  // our FIN: the echo server closes after the echo

    std::string echoed;
    char buf[4096];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof buf)) > 0) {
      echoed.append(buf, static_cast<size_t>(n));
    }
    ::close(fd);
    std::fputs(echoed.c_str(), stdout);
    return echoed == message ? 0 : 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "echo_client: %s\n", e.what());
    return 1;
  }
}
