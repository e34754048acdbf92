// webget: HTTP/1.1 GET through tinytcp's own TCP/IP stack.
//
//   webget [--dev tun144|tap10|udp:PEER:PORT] [--pcap F] [-o FILE] URL
//
// URL is http://IPV4[:PORT]/PATH or http://[IPV6][:PORT]/PATH (RFC 3986
// §3.2.2: an IPv6 literal in brackets); over IPv6 our address is
// fd00:7474:N::9 on tunN/tapN (--address6).
//
// The request goes out with a Host header and `Connection: close`; the body
// (Content-Length, chunked, or until close) goes to stdout or FILE. Errors are
// one line on stderr and a non-zero exit: 1 bad arguments or local error,
// 2 connection refused or reset, 3 timed out, 4 malformed response, 5 HTTP
// error status (4xx/5xx; the body is still written).

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "common/command_line.hh"
#include "common/version_flag.hh"
#include "proto/http.hh"
#include "runtime/stack_runtime.hh"
#include "stack/ip_address.hh"
#include "util/expected.hh"
#include "util/logging.hh"
#include "util/printable.hh"

namespace {

using namespace tinytcp;

enum Exit { kOk = 0, kLocal = 1, kConnection = 2, kTimeout = 3, kProtocol = 4, kHttpError = 5 };

int fail(int code, const std::string& message) {
  std::fprintf(stderr, "webget: %s\n", message.c_str());
  return code;
}

// An http:// URL whose host is a bracketed IPv6 literal ("http://[fd00::1]:8080/x")
// is parsed by proto::parse_url with a placeholder for the literal (parse_url
// knows only names and IPv4), then given its literal back, brackets and all,
// which is also the Host header's form (RFC 9110 §7.2). Other URLs pass through.
struct TargetUrl {
  proto::Url url;
  std::optional<stack::IpAddress> server;  // the literal, parsed
};

Expected<TargetUrl, std::string> parse_target(const std::string& text) {
  constexpr std::string_view kScheme = "http://";
  std::string rewritten = text;
  std::optional<wire::Ipv6Address> literal;
  std::string bracketed;
  if (text.size() > kScheme.size() && text[kScheme.size()] == '[') {
    const size_t open = kScheme.size();
    const size_t close = text.find(']', open);
    const size_t end = text.find_first_of("/?#", open);
    if (close == std::string::npos || (end != std::string::npos && close > end)) {
      return make_unexpected(fmt::format(
          "malformed IPv6 literal in '{}': no closing ']' (expected http://[ADDR]:PORT/PATH)",
          text));
    }
    const std::string inside = text.substr(open + 1, close - open - 1);
    literal = wire::Ipv6Address::parse(inside);
    if (!literal) {
      return make_unexpected(
          fmt::format("malformed IPv6 literal in '{}': '{}' is not an IPv6 address", text, inside));
    }
    if (close + 1 < text.size() && text.find_first_of(":/?#", close + 1) != close + 1) {
      return make_unexpected(
          fmt::format("malformed IPv6 literal in '{}': expected ':PORT' or '/' after ']'", text));
    }
    bracketed = text.substr(open, close - open + 1);
    rewritten = text.substr(0, open) + "ipv6-literal" + text.substr(close + 1);
  }
  auto url = proto::parse_url(rewritten);
  if (!url) {
    // Its message names the URL as given, not our rewrite.
    std::string message = url.error();
    if (const size_t at = message.find(rewritten); literal && at != std::string::npos) {
      message.replace(at, rewritten.size(), text);
    }
    return make_unexpected(message);
  }
  TargetUrl target{*url, std::nullopt};
  if (literal) {
    target.url.host = bracketed;
    target.server = stack::IpAddress(*literal);
  } else if (const auto v4 = wire::Ipv4Address::parse(url->host)) {
    target.server = stack::IpAddress(*v4);
  }
  return target;
}

int run(int argc, char** argv) {
  CLI::App app{"HTTP/1.1 GET through tinytcp's TCP/IP stack."};
  apps::add_version_flag(app, "webget");
  apps::describe_exit_statuses(
      app,
      {{kOk, "the body was received whole"},
       {kLocal, "bad arguments or a local error (device, output file)"},
       {kConnection, "connection refused or reset, or closed before a response"},
       {kTimeout, "timed out (--timeout)"},
       {kProtocol, "malformed HTTP response"},
       {kHttpError, "HTTP error status 4xx or 5xx (the body is still written)"}},
      "Every error is one line on stderr.");
  runtime::RuntimeOptions options;
  std::string url_text;
  std::string output;
  std::string address;
  std::string address6;
  bool no_ipv6 = false;
  double timeout_s = 30;
  int verbose = 0;
  bool quiet = false;
  app.add_option("url", url_text, "http://IPV4[:PORT]/PATH or http://[IPV6][:PORT]/PATH")
      ->required();
  app.add_option("--dev", options.dev,
                 "tunN (tunN+nooffload: no TSO/GSO), tapN or udp:PEER_IP:PORT[@LOCAL_PORT]")
      ->capture_default_str();
  app.add_option("--address", address, "Our IPv4 address (default 169.254.N.9 for tunN/tapN)");
  app.add_option("--address6", address6, "Our IPv6 address (default fd00:7474:N::9 for tunN/tapN)");
  app.add_flag("--no-ipv6", no_ipv6, "No IPv6 address (IPv4 only)");
  app.add_option("--pcap", options.pcap, "Capture every packet to this pcap file");
  app.add_option("--impair", options.impair,
                 "Impairment each way, e.g. loss=1%,delay=10ms (see docs/io.md)");
  app.add_option("-o,--output", output, "Write the body here instead of stdout");
  app.add_option("--timeout", timeout_s, "Give up after this many seconds")
      ->check(CLI::PositiveNumber);
  app.add_flag("-v,--verbose", verbose, "More logging (repeat for trace)");
  app.add_flag("-q,--quiet", quiet, "Errors only");
  if (const auto status = apps::parse_command_line(app, argc, argv, "webget")) {
    return *status;
  }
  setup_logging(quiet ? -1 : verbose);

  const auto target = parse_target(url_text);
  if (!target) {
    return fail(kLocal, target.error());
  }
  const proto::Url* url = &target->url;
  if (!target->server) {
    return fail(kLocal, fmt::format("host must be an IPv4 address or a bracketed IPv6 one "
                                    "(tinytcp has no DNS resolver): '{}'",
                                    url->host));
  }
  const stack::IpAddress server = *target->server;
  options.ipv6 = !no_ipv6;
  if (!address6.empty()) {
    options.address6 = wire::Ipv6Address::parse(address6);
    if (!options.address6) {
      return fail(kLocal, fmt::format("bad --address6 '{}'", address6));
    }
  }
  if (server.is_v6() && no_ipv6) {
    return fail(kLocal, "--no-ipv6 with an IPv6 URL");
  }
  if (!address.empty()) {
    options.address = wire::Ipv4Address::parse(address);
    if (!options.address) {
      return fail(kLocal, fmt::format("bad --address '{}'", address));
    }
  }

  std::FILE* out = stdout;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(nullptr, &std::fclose);
  if (!output.empty()) {
    file.reset(std::fopen(output.c_str(), "wb"));
    if (!file) {
      return fail(kLocal, fmt::format("cannot open {}: {}", output, std::strerror(errno)));
    }
    out = file.get();
  }

  std::unique_ptr<runtime::StackRuntime> runtime;
  try {
    runtime = std::make_unique<runtime::StackRuntime>(options);
  } catch (const std::exception& e) {
    return fail(kLocal, e.what());
  }
  stack::Host& host = runtime->host();
  if (server.is_v6() && !host.config().ipv6) {
    return fail(kLocal,
                fmt::format("no IPv6 address of ours on --dev {} (give --address6)", options.dev));
  }
  const double t0 = to_seconds(runtime->now().since_epoch());

  const auto socket = host.connect(server, url->port, runtime->now());
  if (!socket) {
    return fail(kConnection, fmt::format("cannot connect: {}", stack::to_string(socket.error())));
  }
  const stack::SocketId id = *socket;
  const std::string request = proto::make_get_request(*url);
  size_t request_sent = 0;
  proto::HttpParser parser(proto::HttpParser::Kind::Response);
  bool write_failed = false;
  bool closed = false;
  const auto on_body = [&](std::string_view data) {
    if (!write_failed && std::fwrite(data.data(), 1, data.size(), out) != data.size()) {
      write_failed = true;
    }
  };

  host.set_event_callback([&](stack::SocketId sid, stack::SocketEvent e) {
    if (sid != id) {
      return;
    }
    const Instant now = runtime->now();
    if ((e == stack::SocketEvent::Connected || e == stack::SocketEvent::Writable) &&
        request_sent < request.size()) {
      request_sent += host.write(id, std::string_view(request).substr(request_sent), now);
    }
    if (e == stack::SocketEvent::Readable) {
      for (auto view = host.peek(id); !view.empty() && !parser.done() && !parser.failed();
           view = host.peek(id)) {
        const size_t used = parser.feed(view, on_body);
        host.consume(id, view.size(), now);  // bytes past the message are ignored
        static_cast<void>(used);
      }
      const auto info = host.info(id);
      if (info && info->peer_finished) {
        parser.finish();
      }
    }
    if (e == stack::SocketEvent::Closed) {
      closed = true;
      parser.finish();
    }
  });

  const bool finished = runtime->run_until(
      [&] { return parser.done() || parser.failed() || closed || write_failed; },
      std::chrono::duration_cast<Duration>(std::chrono::duration<double>(timeout_s)));
  const auto info = host.info(id);
  const auto* conn = host.connection(id);
  const uint64_t retransmits = conn != nullptr ? conn->summary().retransmits : 0;
  const double seconds = to_seconds(runtime->now().since_epoch()) - t0;

  // Let our FIN go out; TIME-WAIT is not waited for.
  host.close(id, runtime->now());
  runtime->run_until([] { return false; }, std::chrono::milliseconds(20));
  host.set_event_callback(nullptr);
  if (file && std::fflush(file.get()) != 0) {
    write_failed = true;
  }

  if (write_failed) {
    return fail(kLocal, fmt::format("cannot write the body: {}", std::strerror(errno)));
  }
  if (!finished) {
    return fail(kTimeout, fmt::format("timed out after {:.0f} s ({} body bytes)", timeout_s,
                                      parser.body_bytes()));
  }
  if (parser.failed()) {
    if (!parser.headers_complete() && info && info->close_reason &&
        *info->close_reason != tcp::CloseReason::Normal) {
      return fail(kConnection, fmt::format("{}:{}: {}", url->host, url->port,
                                           tcp::to_string(*info->close_reason)));
    }
    return fail(kProtocol, fmt::format("bad response: {} after {} body bytes",
                                       proto::to_string(parser.error()), parser.body_bytes()));
  }
  if (!parser.done()) {
    return fail(kConnection, "connection closed before a response");
  }
  // The reason phrase is the server's text: escaped, never raw to a terminal.
  const std::string reason = printable(parser.reason());
  if (parser.status() >= 400) {
    return fail(kHttpError, fmt::format("HTTP error {} {} ({} body bytes written)", parser.status(),
                                        reason, parser.body_bytes()));
  }
  spdlog::info("{} {}: {} body bytes in {:.3f} s ({:.1f} MB/s), {} retransmits", parser.status(),
               reason, parser.body_bytes(), seconds,
               seconds > 0 ? static_cast<double>(parser.body_bytes()) / seconds / 1e6 : 0.0,
               retransmits);
  return kOk;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "webget: %s\n", e.what());
    return 1;
  }
}
