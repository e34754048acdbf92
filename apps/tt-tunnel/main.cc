// tt-tunnel: carries kernel TCP connections of unmodified programs across a
// lossy or flapping link, over tinytcp in the UDP tunnel (or kernel TCP),
// each in a robust session (src/session) that survives the loss of the
// connection under it.
//
//   tt-tunnel server --listen PORT --forward HOST:PORT [options]
//   tt-tunnel client --listen [ADDR:]PORT --to SERVER:PORT [options]
//
// Programs connect to the client's --listen and reach HOST:PORT behind the
// server. Options on both ends: --transport udp|tun|kernel (udp: no
// privileges; PORT is the server's UDP port), --robust/--no-robust (default:
// robust for udp and tun, plain for kernel), --key-file (a pre-shared key:
// every session handshake and control message authenticated; no
// confidentiality), --cc, --loss/--delay/--impair, --pcap, --json, -v/-q.
//
// Exit status: 0 after SIGINT or SIGTERM; 1 (one line on stderr) when the
// tunnel cannot start.

#include <csignal>
#include <cstdio>
#include <fstream>
#include <iterator>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "common/command_line.hh"
#include "common/version_flag.hh"
#include "tt-tunnel/tunnel_client.hh"
#include "tt-tunnel/tunnel_server.hh"
#include "util/logging.hh"

namespace {

using namespace tinytcp;

std::atomic<bool> g_stop{false};

void on_signal(int) {
  g_stop.store(true);
}

struct CommonFlags {
  apps::TransportFlags transport;  // --robust among them
  bool no_robust = false;
  std::string key_file;
  size_t max_connections = 256;
  double give_up = 0;
  bool json = false;
  int verbose = 0;
  bool quiet = false;
};

void add_common_flags(CLI::App& app, CommonFlags& f) {
  apps::add_transport_flags(app, f.transport);
  app.add_flag("--no-robust", f.no_robust,
               "One plain carrier connection per forwarded connection (the default for kernel; "
               "udp and tun carry each in a robust session)");
  app.add_option("--key-file", f.key_file,
                 "Pre-shared key (any bytes, at least 16): sessions and control messages "
                 "authenticated; both ends need the same file")
      ->check(CLI::ExistingFile);
  app.add_option("--max-connections", f.max_connections, "Forwarded connections at once")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_option("--give-up", f.give_up,
                 "Robust: a session without a carrier this many seconds fails (0: never)")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--json", f.json, "Print the counters as JSON at exit");
  app.add_flag("-v,--verbose", f.verbose, "More logging (repeat for trace)");
  app.add_flag("-q,--quiet", f.quiet, "Errors only");
}

// The options, checked; throws std::runtime_error with one line.
apps::TunnelOptions finish(const CommonFlags& f) {
  apps::TunnelOptions options;
  auto transport = f.transport.finish();
  if (!transport) {
    throw std::runtime_error(transport.error());
  }
  auto& t = options.transport;
  t = *transport;
  if (t.robust && f.no_robust) {
    throw std::runtime_error("--robust and --no-robust: choose one");
  }
  t.robust = t.robust || (!f.no_robust && t.transport != "kernel");
  if (!f.key_file.empty()) {
    std::ifstream in(f.key_file, std::ios::binary);
    std::string key((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) {
      throw std::runtime_error(fmt::format("--key-file {}: cannot read it", f.key_file));
    }
    if (key.size() < 16) {
      throw std::runtime_error(
          fmt::format("--key-file {}: {} bytes; a key needs at least 16", f.key_file, key.size()));
    }
    if (!t.robust) {
      throw std::runtime_error("--key-file needs --robust (it authenticates sessions)");
    }
    t.session.psk = std::move(key);
  }
  if (f.give_up > 0) {
    t.session.give_up =
        std::chrono::duration_cast<Duration>(std::chrono::duration<double>(f.give_up));
  }
  t.session.max_sessions = f.max_connections;
  // The WELCOME waits for the target's first reply bytes (a short
  // request/response: one write and one wake-up of the client less).
  t.session.welcome_hold = std::chrono::milliseconds(2);
  options.max_connections = f.max_connections;
  return options;
}

void report(const apps::TunnelStats& stats, bool json) {
  if (json) {
    std::printf("%s\n", stats.to_json().dump().c_str());
  } else {
    spdlog::info("{}", stats.to_line());
  }
}

int run(int argc, char** argv) {
  CLI::App app{
      "Carry kernel TCP connections of unmodified programs across a lossy or flapping link."};
  apps::add_version_flag(app, "tt-tunnel");
  app.require_subcommand(1);
  apps::describe_exit_statuses(
      app,
      {{0, "stopped by SIGINT or SIGTERM"},
       {apps::kBadArguments, "bad arguments, or the tunnel cannot start (one line on stderr)"}},
      "A refused connection (--max-connections, target unreachable) is logged and reset; the "
      "tunnel keeps serving.");

  CommonFlags server_flags;
  std::string server_listen;
  std::string forward;
  CLI::App* server = app.add_subcommand("server", "Accept tunnel clients; forward to --forward");
  server
      ->add_option("--listen", server_listen,
                   "[ADDR:]PORT ([IPv6]:PORT; default every address, IPv4 and IPv6; udp: the UDP "
                   "port and the TCP port inside)")
      ->required();
  server
      ->add_option("--forward", forward,
                   "HOST:PORT (or [IPv6]:PORT) every connection is forwarded to")
      ->required();
  add_common_flags(*server, server_flags);

  CommonFlags client_flags;
  std::string listen;
  std::string to;
  CLI::App* client = app.add_subcommand("client", "Accept programs on --listen; tunnel to --to");
  client
      ->add_option("--listen", listen,
                   "[ADDR:]PORT the programs connect to (ADDR: 127.0.0.1; IPv6: [ADDR]:PORT)")
      ->required();
  client->add_option("--to", to, "SERVER:PORT or [IPv6]:PORT of tt-tunnel server")->required();
  double passivate_after = 0;
  client
      ->add_option("--passivate-after", passivate_after,
                   "Robust: close the carrier of a connection idle this many seconds; the next "
                   "byte from the program reconnects and resumes (0: never; bytes the server "
                   "sends meanwhile wait for that)")
      ->check(CLI::NonNegativeNumber);
  add_common_flags(*client, client_flags);
  if (const auto status = apps::parse_command_line(app, argc, argv, "tt-tunnel")) {
    return *status;
  }

  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  std::signal(SIGPIPE, SIG_IGN);
  if (server->parsed()) {
    setup_logging(server_flags.quiet ? -1 : server_flags.verbose);
    const apps::TunnelOptions options = finish(server_flags);
    const apps::HostPort at = apps::parse_listen(server_listen);
    apps::TunnelServer tunnel(options, at, apps::parse_host_port(forward));
    spdlog::info("tunnel server on port {} ({}{}{}), forwarding to {}", at.port,
                 at.host.empty() ? "" : "address " + at.host + ", ", options.transport.transport,
                 options.transport.robust ? ", robust" : "", forward);
    tunnel.run(g_stop);
    if (server_flags.json) {
      report(tunnel.stats(), true);
    } else {
      spdlog::info("{}", tunnel.summary());
    }
    return 0;
  }
  setup_logging(client_flags.quiet ? -1 : client_flags.verbose);
  apps::TunnelOptions options = finish(client_flags);
  if (passivate_after > 0) {
    if (!options.transport.robust) {
      throw std::runtime_error("--passivate-after needs --robust");
    }
    options.transport.passivate_after =
        std::chrono::duration_cast<Duration>(std::chrono::duration<double>(passivate_after));
  }
  const apps::HostPort at =
      apps::parse_host_port(listen.find(':') == std::string::npos ? "127.0.0.1:" + listen : listen);
  apps::TunnelClient tunnel(options, at, apps::parse_host_port(to));
  spdlog::info("tunnel client on {} ({}{}), to {}",
               apps::HostPort{at.host, tunnel.port()}.to_string(), options.transport.transport,
               options.transport.robust ? ", robust" : "", to);
  tunnel.run(g_stop);
  if (client_flags.json) {
    report(tunnel.stats(), true);
  } else {
    spdlog::info("{}", tunnel.summary());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tt-tunnel: %s\n", e.what());
    return 1;
  }
}
