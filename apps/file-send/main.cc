// file-send: sends a file to file-recv with SHA-256 verification and resume.
//
//   file-send FILE --to HOST:PORT [--transport udp|tun|kernel] [--cc ALG]
//             [--loss P --delay D ...] [--pcap F] [--trace F.csv] [--json]
//
// Exit status: 0 verified; 1 local error (file, arguments); 3 refused by the
// receiver; 4 SHA-256 mismatch; 5 receiver unreachable or connection lost
// (run the same command again to resume); 6 receiver could not write.

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <stdexcept>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "common/kernel_tcp.hh"
#include "common/posix_file.hh"
#include "common/stream_transport.hh"
#include "common/threaded_hash.hh"
#include "common/transfer_driver.hh"
#include "proto/file_sender.hh"
#include "util/logging.hh"

namespace {

using namespace tinytcp;

enum Exit { kOk = 0, kLocal = 1, kRefused = 3, kMismatch = 4, kUnreachable = 5, kWriteError = 6 };

int fail(int code, const std::string& message) {
  std::fprintf(stderr, "file-send: %s\n", message.c_str());
  return code;
}

int run(int argc, char** argv) {
  CLI::App app{"Send a file to file-recv; SHA-256 verified end to end, resumable."};
  std::string path;
  std::string to;
  apps::TransportFlags transport_flags;
  std::string name;
  double connect_timeout = 10;
  double idle_timeout = 30;
  bool json = false;
  int verbose = 0;
  bool quiet = false;
  app.add_option("file", path, "File to send")->required();
  app.add_option("--to", to,
                 "Receiver HOST:PORT (for --transport udp, the UDP port file-recv listens on)")
      ->required();
  apps::add_transport_flags(app, transport_flags);
  app.add_option("--name", name, "Name to give the file at the receiver (default: base name)");
  app.add_option("--connect-timeout", connect_timeout, "Seconds to wait for the receiver")
      ->check(CLI::PositiveNumber);
  app.add_option("--idle-timeout", idle_timeout, "Give up after this many seconds of no progress")
      ->check(CLI::PositiveNumber);
  app.add_flag("--json", json, "Print the summary as JSON");
  app.add_flag("-v,--verbose", verbose, "More logging (repeat for trace)");
  app.add_flag("-q,--quiet", quiet, "Errors only");
  CLI11_PARSE(app, argc, argv);
  setup_logging(quiet ? -1 : verbose);

  apps::HostPort peer;
  try {
    peer = apps::parse_host_port(to);
  } catch (const std::exception& e) {
    return fail(kLocal, e.what());
  }
  const auto transport = transport_flags.finish();
  if (!transport) {
    return fail(kLocal, transport.error());
  }
  const double t0 = apps::monotonic_seconds();
  std::unique_ptr<apps::PosixFileSource> source;
  Sha256Digest file_id{};
  try {
    source = std::make_unique<apps::PosixFileSource>(path);
    file_id = source->file_id();
  } catch (const std::exception& e) {
    return fail(kLocal, e.what());
  }
  if (name.empty()) {
    name = std::filesystem::path(path).filename().string();
  }

  std::unique_ptr<apps::StreamConnection> stream;
  try {
    stream = apps::connect_stream(
        *transport, peer,
        std::chrono::duration_cast<Duration>(std::chrono::duration<double>(connect_timeout)));
  } catch (const std::exception& e) {
    return fail(kUnreachable, e.what());
  }

  apps::ThreadedContentHash hash;  // SHA-256 beside the event loop
  proto::FileSender sender(&hash);
  sender.offer(*source, name, file_id);
  apps::Progress progress(name);
  apps::PumpIo io;
  io.output = [&] { return sender.output(); };
  io.consume = [&](size_t n) { sender.consume_output(n); };
  io.input = [&](std::string_view d) { sender.on_input(d); };
  io.done = [&] {
    return sender.state() == proto::FileSender::State::Idle ||
           sender.state() == proto::FileSender::State::Failed;
  };
  io.tick = [&] {
    // The receiver has what it acknowledged, not what sits in our send buffer.
    const uint64_t queued = stream->unacknowledged();
    const uint64_t acked = sender.position() > queued ? sender.position() - queued : 0;
    progress.update(acked, sender.file_size(), stream->stats().retransmits);
  };
  const Duration idle =
      std::chrono::duration_cast<Duration>(std::chrono::duration<double>(idle_timeout));
  auto pumped = stream->pump(io, idle);
  progress.clear();
  if (sender.state() == proto::FileSender::State::Idle) {
    sender.finish_stream();
    io.done = [&] { return sender.output().empty(); };
    stream->pump(io, idle);
  }
  // The result is in; the close only says goodbye, so it waits briefly.
  stream->close(std::chrono::seconds(2));
  const auto info = stream->stats();
  const double seconds = apps::monotonic_seconds() - t0;

  const auto& outcome = sender.outcome();
  if (!outcome.ok) {
    if (outcome.rejected) {
      return fail(kRefused, outcome.error);
    }
    if (outcome.result == proto::ResultStatus::Mismatch) {
      return fail(kMismatch, outcome.error);
    }
    if (outcome.result == proto::ResultStatus::WriteError) {
      return fail(kWriteError,
                  outcome.error + " (the receiver keeps the partial file; retry to resume)");
    }
    if (sender.state() == proto::FileSender::State::Failed) {
      return fail(kLocal, outcome.error);
    }
    const std::string why = pumped.result == apps::PumpResult::PeerClosed
                                ? "receiver closed the connection"
                                : pumped.error;
    return fail(kUnreachable,
                fmt::format("{} after {} of {} bytes; run the same command again to resume", why,
                            sender.position(), sender.file_size()));
  }

  const uint64_t size = source->size();
  const double mbps = seconds > 0 ? static_cast<double>(size) / seconds / 1e6 : 0;
  const double efficiency = info.payload_sent > 0 ? static_cast<double>(outcome.bytes_sent) /
                                                        static_cast<double>(info.payload_sent)
                                                  : 1.0;
  if (json) {
    nlohmann::json j;
    j["file"] = name;
    j["size"] = size;
    j["resumed_from"] = outcome.resumed_from;
    j["bytes_sent"] = outcome.bytes_sent;
    j["seconds"] = seconds;
    j["throughput_MBps"] = mbps;
    j["retransmits"] = info.retransmits;
    j["efficiency"] = efficiency;
    j["transport"] = transport->transport;
    j["cc"] = !transport->cc.empty() ? transport->cc
              : transport->transport == "kernel"
                  ? "default"
                  : apps::default_congestion_control(transport->transport);
    j["impairment"] = transport->impair;
    j["sha256"] = to_hex(outcome.sha256);
    j["verified"] = true;
    std::cout << j.dump() << "\n";
  } else {
    std::cout << fmt::format(
        "{}: {} bytes in {:.3f} s, {:.1f} MB/s, {} retransmits, efficiency {:.1f}%{}, integrity "
        "verified (sha256={})\n",
        name, size, seconds, mbps, info.retransmits, efficiency * 100,
        outcome.resumed_from > 0 ? fmt::format(", resumed at {}", outcome.resumed_from) : "",
        to_hex(outcome.sha256));
  }
  return kOk;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "file-send: %s\n", e.what());
    return 1;
  }
}
