// file-recv: receives files from file-send into a directory, verifying each
// file's SHA-256 before it appears under its final name. Serves many senders
// at once: each connection is a session of its own, and no two sessions
// write one file (common/name_claims.hh).
//
//   file-recv --listen PORT --output DIR [--transport udp|tun|kernel] [--once]
//             [--max-sessions N] [--max-peers N] [--force] [--buffered]
//             [--max-size BYTES] [--idle-timeout S] [--pcap F] [--json]
//
// With --transport udp (the default) PORT is the UDP port of the tunnel and the
// TCP port inside it, and every sender (UDP address and port) has a TCP/IP
// stack of its own; with tun the stack listens on the device's 169.254.N.9.
//
// A session may carry a directory tree (file-send DIR): the tree is recreated
// under the output directory, one line per file and a session summary.
//
// Exit status (with --once): 0 when every file and directory of the session
// was verified and stored (or found already present and identical), 1
// otherwise.

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <list>
#include <memory>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "common/command_line.hh"
#include "common/name_claims.hh"
#include "common/posix_file.hh"
#include "common/receiver_limits.hh"
#include "common/stream_server.hh"
#include "common/transfer_driver.hh"
#include "common/version_flag.hh"
#include "receive_session.hh"
#include "util/logging.hh"

namespace {

using namespace tinytcp;

// The longest the loop sleeps: sessions check their idle timeouts and
// progress bars at least this often.
constexpr Duration kMaxWait = std::chrono::milliseconds(100);
// Descriptors a new session may need (its output directory, the hash
// worker's eventfd, the file, the directory walk) and some to spare.
constexpr int kSessionDescriptors = 16;

// True when `n` more file descriptors can be opened now.
bool descriptors_to_spare(int n) {
  std::vector<int> probes;
  for (int i = 0; i < n; ++i) {
    const int fd = ::fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 0);
    if (fd < 0) {
      break;
    }
    probes.push_back(fd);
  }
  for (const int fd : probes) {
    ::close(fd);
  }
  return probes.size() == static_cast<size_t>(n);
}

int run(int argc, char** argv) {
  CLI::App app{"Receive files from file-send; SHA-256 verified, atomic, resumable."};
  apps::add_version_flag(app, "file-recv");
  apps::describe_exit_statuses(
      app,
      {{0, "every file of every session (with --once: of the one session) verified and stored"},
       {apps::kBadArguments,
        "bad arguments, a local error (output directory, port), or a file that failed"}},
      "Many senders at once: each connection is a session; a file another machine's session is "
      "receiving is refused as busy, and a new session from the same machine takes such a file "
      "over (the sender was restarted). Without --once it runs until SIGINT or SIGTERM. Every "
      "error "
      "is one line on stderr.");
  std::string listen;
  std::string output;
  apps::TransportFlags transport_flags;
  bool once = false;
  bool force = false;
  bool buffered = false;
  uint64_t max_size = UINT64_MAX;
  double idle_timeout = 30;
  size_t max_sessions = 64;
  apps::ServerLimits limits;
  bool json = false;
  int verbose = 0;
  bool quiet = false;
  app.add_option("--listen", listen,
                 "[ADDR:]PORT to listen on ([IPv6]:PORT; default every address, IPv4 and IPv6; "
                 "for udp: the UDP and the TCP port)")
      ->required();
  app.add_option("--output", output, "Directory to write into")
      ->required()
      ->check(CLI::ExistingDirectory);
  apps::add_transport_flags(app, transport_flags);
  app.add_flag("--once", once, "Exit after one session");
  app.add_flag("--force", force, "Overwrite existing files");
  app.add_flag("--buffered", buffered,
               "Write through the page cache (default: O_DIRECT where the file system has it)");
  app.add_option("--max-size", max_size, "Refuse files larger than this many bytes");
  app.add_option("--idle-timeout", idle_timeout, "Drop a sender silent for this many seconds")
      ->check(CLI::PositiveNumber);
  app.add_option("--max-sessions", max_sessions,
                 "Sessions at once; a connection past them is reset")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_option("--max-peers", limits.max_peers,
                 "udp: senders with a TCP/IP stack each at once (completed handshakes)")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  app.add_option("--max-handshakes", limits.max_embryonic,
                 "udp: senders whose handshake is in progress; past it the oldest is forgotten")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  apps::ReceiverLimits session_limits;
  apps::add_receiver_limit_flags(app, session_limits);
  app.add_flag("--json", json, "Print each file's summary as JSON");
  app.add_flag("-v,--verbose", verbose, "More logging (repeat for trace)");
  app.add_flag("-q,--quiet", quiet, "Errors only");
  if (const auto status = apps::parse_command_line(app, argc, argv, "file-recv")) {
    return *status;
  }
  setup_logging(quiet ? -1 : verbose);

  const auto transport = transport_flags.finish();
  if (!transport) {
    std::fprintf(stderr, "file-recv: %s\n", transport.error().c_str());
    return 1;
  }
  limits.backlog = std::min<size_t>(max_sessions, 1024);
  const apps::HostPort at = apps::parse_listen(listen);
  const auto server = apps::serve_streams(*transport, at, limits);
  spdlog::info("listening on port {} ({}{} transport), writing into {}", at.port,
               at.host.empty() ? "" : "address " + at.host + ", ", transport->transport, output);
  apps::SessionSettings settings;
  settings.output = output;
  settings.policy.force = force;
  settings.policy.max_size = max_size;
  session_limits.apply(settings.policy);
  settings.direct_io = !buffered;
  settings.idle_timeout =
      std::chrono::duration_cast<Duration>(std::chrono::duration<double>(idle_timeout));

  apps::NameClaims claims;
  std::list<apps::ReceiveSession> sessions;
  apps::Progress progress("receiving");
  bool all_ok = true;
  size_t started = 0;
  double next_partial_sweep = 0;
  for (;;) {
    // Partial files no session completed for --partial-ttl go, checked at
    // most hourly and only while no session runs (one could be resuming).
    if (sessions.empty() && session_limits.partial_ttl.count() > 0 &&
        apps::monotonic_seconds() >= next_partial_sweep) {
      apps::PosixFileSink sweeper(output, false, false);
      if (const size_t removed = sweeper.remove_stale_partials(session_limits.partial_ttl)) {
        spdlog::info("removed {} partial files older than {} s", removed,
                     session_limits.partial_ttl.count());
      }
      next_partial_sweep = apps::monotonic_seconds() + 3600;
    }
    while (!once || started == 0) {
      auto stream = server->accept();
      if (!stream) {
        break;
      }
      if (sessions.size() >= max_sessions) {
        spdlog::warn("refused a session from {}: {} sessions at once at most", stream->peer(),
                     max_sessions);
        stream->abort();
        continue;
      }
      const std::string peer = stream->peer();
      if (!descriptors_to_spare(kSessionDescriptors)) {
        // Better a reset now than a session that fails half-way.
        spdlog::warn("refused a session from {}: out of file descriptors", peer);
        stream->abort();
        continue;
      }
      try {
        sessions.emplace_back(std::move(stream), settings, claims, *server);
      } catch (const std::exception& e) {
        // Out of file descriptors or threads: this connection is reset (its
        // stream went with the failed session), the others go on.
        spdlog::warn("cannot start a session from {}: {}", peer, e.what());
        continue;
      }
      spdlog::info("session from {}", peer);
      ++started;
    }
    bool busy = false;
    Duration wait = kMaxWait;
    const double now = apps::monotonic_seconds();
    for (auto it = sessions.begin(); it != sessions.end();) {
      busy = it->step(now) || busy;
      if (const auto ready = it->time_until_ready()) {
        wait = std::min(wait, *ready);
      }
      if (!it->finished()) {
        ++it;
        continue;
      }
      progress.clear();
      it->report(json);
      all_ok = all_ok && it->ok();
      it = sessions.erase(it);
    }
    if (sessions.size() == 1) {
      progress.update(sessions.front().position(), sessions.front().current_size(), 0);
    }
    if (once && started > 0 && sessions.empty()) {
      break;
    }
    server->wait(busy ? Duration::zero() : wait);
  }
  spdlog::debug("{}", server->summary());
  return all_ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "file-recv: %s\n", e.what());
    return 1;
  }
}
