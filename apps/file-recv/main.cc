// file-recv: receives files from file-send into a directory, verifying each
// file's SHA-256 before it appears under its final name.
//
//   file-recv --listen PORT --output DIR [--transport udp|tun|kernel] [--once]
//             [--force] [--buffered] [--max-size BYTES] [--loss P ...] [--pcap F]
//
// With --transport udp (the default) PORT is the UDP port of the tunnel and the
// TCP port inside it; with tun the stack listens on the device's 169.254.N.9.
//
// A session may carry a directory tree (file-send DIR): the tree is recreated
// under the output directory, one line per file and a session summary.
//
// Exit status (with --once): 0 when every file and directory of the session
// was verified and stored (or found already present and identical), 1
// otherwise.

#include <algorithm>
#include <cstdio>
#include <iostream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "common/posix_file.hh"
#include "common/stream_transport.hh"
#include "common/threaded_hash.hh"
#include "common/transfer_driver.hh"
#include "proto/file_receiver.hh"
#include "util/logging.hh"

namespace {

using namespace tinytcp;

// How long a session's end may wait for our FIN to be acknowledged. If the
// sender took our FIN and left, its last ACK lost, nobody will answer; the
// transfer's outcome is settled by then, so this only delays the exit.
constexpr Duration kCloseLinger = std::chrono::seconds(2);

int run(int argc, char** argv) {
  CLI::App app{"Receive files from file-send; SHA-256 verified, atomic, resumable."};
  int port = 0;
  std::string output;
  apps::TransportFlags transport_flags;
  bool once = false;
  bool force = false;
  bool buffered = false;
  uint64_t max_size = UINT64_MAX;
  double idle_timeout = 30;
  bool json = false;
  int verbose = 0;
  bool quiet = false;
  app.add_option("--listen", port, "Port to listen on (for udp: the UDP and the TCP port)")
      ->required()
      ->check(CLI::Range(1, 65535));
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
  app.add_flag("--json", json, "Print each file's summary as JSON");
  app.add_flag("-v,--verbose", verbose, "More logging (repeat for trace)");
  app.add_flag("-q,--quiet", quiet, "Errors only");
  CLI11_PARSE(app, argc, argv);
  setup_logging(quiet ? -1 : verbose);

  const auto transport = transport_flags.finish();
  if (!transport) {
    std::fprintf(stderr, "file-recv: %s\n", transport.error().c_str());
    return 1;
  }
  const auto listener = apps::listen_stream(*transport, static_cast<uint16_t>(port));
  spdlog::info("listening on port {} ({} transport), writing into {}", port, transport->transport,
               output);
  const Duration idle =
      std::chrono::duration_cast<Duration>(std::chrono::duration<double>(idle_timeout));
  apps::ThreadedContentHash hash;  // SHA-256 beside the event loop
  bool all_ok = true;
  for (;;) {
    const auto stream = listener->accept();
    const double t0 = apps::monotonic_seconds();
    apps::PosixFileSink sink(output, force, /*direct_io=*/!buffered);
    proto::ReceiverPolicy policy;
    policy.force = force;
    policy.max_size = max_size;
    proto::FileReceiver receiver(sink, policy, &hash);
    apps::Progress progress("receiving");
    apps::PumpIo io;
    io.output = [&] { return receiver.output(); };
    io.consume = [&](size_t n) { receiver.consume_output(n); };
    io.input = [&](std::string_view d) { receiver.on_input(d); };
    io.done = [&] {
      return (receiver.state() == proto::FileReceiver::State::Closed ||
              receiver.state() == proto::FileReceiver::State::Failed) &&
             receiver.output().empty();
    };
    io.tick = [&] {
      if (!receiver.files().empty()) {
        progress.update(receiver.position(), receiver.files().back().size, 0);
      }
    };
    const auto pumped = stream->pump(io, idle);
    progress.clear();
    const double seconds = apps::monotonic_seconds() - t0;
    // The sender waits for our RESULT, and then for the end of the stream:
    // linger until our FIN is acknowledged (bounded), so a lost FIN is
    // retransmitted by us instead of leaving the sender to wait out its own
    // linger against a receiver that has gone.
    stream->close(std::min(idle, kCloseLinger), /*until_fin_acked=*/true);

    bool session_ok =
        !receiver.files().empty() && receiver.state() == proto::FileReceiver::State::Closed;
    uint64_t files = 0, present = 0, dirs = 0, failed = 0, bytes = 0, received = 0;
    for (const auto& f : receiver.files()) {
      session_ok = session_ok && f.ok;
      if (f.ok) {
        (f.directory ? dirs : files) += 1;
        present += f.already_present ? 1 : 0;
        bytes += f.size;
      } else {
        ++failed;
      }
      received += f.bytes_received;
      if (f.directory && f.ok) {
        continue;  // the session summary counts them
      }
      if (json) {
        nlohmann::json j;
        j["file"] = f.name;
        j["size"] = f.size;
        j["resumed_from"] = f.resumed_from;
        j["bytes_received"] = f.bytes_received;
        j["seconds"] = seconds;
        j["verified"] = f.ok;
        j["sha256"] = to_hex(f.sha256);
        if (f.already_present) {
          j["already_present"] = true;
        }
        if (!f.ok) {
          j["error"] = f.error.empty() ? "interrupted; partial file kept for resume" : f.error;
        }
        std::cout << j.dump() << std::endl;
      } else if (f.ok) {
        std::cout << fmt::format(
                         "{}: {} bytes, {} (sha256={}){}\n", f.name, f.size,
                         f.already_present ? "already present and identical" : "integrity verified",
                         to_hex(f.sha256),
                         f.resumed_from > 0 && !f.already_present
                             ? fmt::format(", resumed at {}", f.resumed_from)
                             : "")
                  << std::flush;
      } else {
        std::fprintf(
            stderr, "file-recv: %s: %s\n", f.name.c_str(),
            f.error.empty() ? "interrupted; partial file kept for resume" : f.error.c_str());
      }
    }
    // A session summary when the session was more than one file.
    const bool tree = receiver.files().size() > 1 ||
                      (receiver.files().size() == 1 && receiver.files().front().directory);
    if (tree) {
      const double mbps = seconds > 0 ? static_cast<double>(received) / seconds / 1e6 : 0;
      if (json) {
        nlohmann::json j;
        j["session"] = true;
        j["files"] = files;
        j["already_present"] = present;
        j["directories"] = dirs;
        j["bytes"] = bytes;
        j["bytes_received"] = received;
        j["seconds"] = seconds;
        j["throughput_MBps"] = mbps;
        j["failed"] = failed;
        j["verified"] = session_ok;
        std::cout << j.dump() << std::endl;
      } else {
        std::cout << fmt::format(
                         "session: {} files ({} already present), {} directories, {} bytes ({} "
                         "received) in {:.3f} s, {:.1f} MB/s{}{}\n",
                         files, present, dirs, bytes, received, seconds, mbps,
                         failed > 0 ? fmt::format(", {} failed", failed) : "",
                         receiver.state() == proto::FileReceiver::State::Closed
                             ? ""
                             : ", session ended before the sender said goodbye")
                  << std::flush;
      }
    }
    if (receiver.state() == proto::FileReceiver::State::Failed && !receiver.error().empty() &&
        receiver.files().empty()) {
      std::fprintf(stderr, "file-recv: %s\n", receiver.error().c_str());
    }
    if (pumped.result == apps::PumpResult::Timeout || pumped.result == apps::PumpResult::Error) {
      std::fprintf(stderr, "file-recv: session ended: %s\n", pumped.error.c_str());
    }
    all_ok = all_ok && session_ok;
    if (once) {
      break;
    }
  }
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
