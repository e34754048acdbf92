// file-send: sends a file, or a directory tree, to file-recv with SHA-256
// verification and resume.
//
//   file-send FILE|DIR --to HOST:PORT [--transport udp|tun|kernel] [--cc ALG]
//             [--loss P --delay D ...] [--pcap F] [--trace F.csv] [--json]
//
// Exit status: 0 verified; 1 local error (file, arguments); 3 refused by the
// receiver; 4 SHA-256 mismatch; 5 receiver unreachable or connection lost
// (run the same command again to resume); 6 receiver could not write. For a
// directory: that of the first file that failed, except that 5 wins (the rest
// of the tree was not sent).

#include <cstdio>
#include <filesystem>
#include <future>
#include <iostream>
#include <stdexcept>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "common/command_line.hh"
#include "common/file_tree.hh"
#include "common/kernel_tcp.hh"
#include "common/posix_file.hh"
#include "common/stream_transport.hh"
#include "common/threaded_hash.hh"
#include "common/transfer_driver.hh"
#include "common/version_flag.hh"
#include "proto/file_sender.hh"
#include "util/logging.hh"
#include "util/printable.hh"

namespace {

using namespace tinytcp;

enum Exit { kOk = 0, kLocal = 1, kRefused = 3, kMismatch = 4, kUnreachable = 5, kWriteError = 6 };

// Names (ours, or a REJECT text from the receiver) are printed escaped:
// never a raw control character to the terminal (util/printable.hh).
int fail(int code, const std::string& message) {
  std::fprintf(stderr, "file-send: %s\n", printable(message).c_str());
  return code;
}

// JSON that cannot throw on a name: names go in through printable() (valid
// UTF-8), and anything else invalid is replaced, not an exception.
std::string dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

struct SendContext {
  std::string root;
  apps::TransportOptions transport;
  apps::StreamConnection* stream = nullptr;
  Duration idle{};
  bool json = false;
  double t0 = 0;
};

std::string cc_name(const apps::TransportOptions& transport) {
  return !transport.cc.empty()             ? transport.cc
         : transport.transport == "kernel" ? "default"
                                           : apps::default_congestion_control(transport.transport);
}

// The event loop's side of `sender` on `stream`: bytes both ways, done once
// the sender is idle (the file's outcome is known) or failed, and progress by
// the bytes the receiver acknowledged, not those in our send buffer.
apps::PumpIo sender_io(proto::FileSender& sender, apps::StreamConnection& stream,
                       apps::Progress& progress) {
  apps::PumpIo io;
  io.output = [&sender] { return sender.output(); };
  io.consume = [&sender](size_t n) { sender.consume_output(n); };
  io.input = [&sender](std::string_view d) { sender.on_input(d); };
  io.done = [&sender] {
    return sender.state() == proto::FileSender::State::Idle ||
           sender.state() == proto::FileSender::State::Failed;
  };
  io.tick = [&sender, &stream, &progress] {
    const uint64_t queued = stream.unacknowledged();
    const uint64_t acked = sender.position() > queued ? sender.position() - queued : 0;
    progress.update(acked, sender.file_size(), stream.stats().retransmits);
  };
  return io;
}

// Sends every entry of `tree` in one session; prints a line per file and a
// session summary. Returns the exit status.
int send_tree(SendContext& ctx, const apps::TreeScan& tree) {
  int status = kOk;
  const auto record = [&](int code) {
    if (code == kUnreachable || status == kOk) {
      status = code;
    }
  };
  for (const auto& line : tree.skipped) {
    std::fprintf(stderr, "file-send: warning: %s\n", printable(line).c_str());
  }
  for (const auto& line : tree.errors) {
    std::fprintf(stderr, "file-send: %s\n", printable(line).c_str());
    record(kLocal);
  }
  apps::ThreadedContentHash hash;  // SHA-256 beside the event loop
  proto::FileSender sender(&hash);
  uint64_t files = 0, present = 0, dirs = 0, failed = tree.errors.size();
  uint64_t bytes_total = 0, bytes_sent = 0;
  bool lost = false;
  for (const auto& entry : tree.entries) {
    std::unique_ptr<apps::PosixFileSource> source;
    if (entry.directory) {
      sender.offer_directory(entry.path);
    } else {
      try {
        // Only the file the scan found: not a symlink or another file
        // swapped in since.
        source = std::make_unique<apps::PosixFileSource>(
            entry.source, apps::FileIdentity{entry.device, entry.inode});
        const auto id = source->file_id();
        sender.offer(*source, entry.path, id, /*confirm_identical=*/true);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "file-send: %s: %s\n", printable(entry.path).c_str(),
                     printable(e.what()).c_str());
        record(kLocal);
        ++failed;
        continue;
      }
    }
    apps::Progress progress(entry.path);
    const auto pumped = ctx.stream->pump(sender_io(sender, *ctx.stream, progress), ctx.idle);
    progress.clear();
    const auto& outcome = sender.outcome();
    bytes_sent += outcome.bytes_sent;
    if (outcome.ok) {
      if (entry.directory) {
        ++dirs;
        continue;
      }
      ++files;
      present += outcome.already_present ? 1 : 0;
      bytes_total += sender.file_size();
      if (ctx.json) {
        nlohmann::json j;
        j["file"] = printable(entry.path);
        j["size"] = sender.file_size();
        j["resumed_from"] = outcome.resumed_from;
        j["bytes_sent"] = outcome.bytes_sent;
        j["already_present"] = outcome.already_present;
        j["sha256"] = to_hex(outcome.sha256);
        j["verified"] = true;
        std::cout << dump(j) << "\n";
      } else if (outcome.already_present) {
        std::cout << fmt::format("{}: {} bytes, already present and identical (sha256={})\n",
                                 printable(entry.path), sender.file_size(), to_hex(outcome.sha256));
      } else {
        std::cout << fmt::format(
            "{}: {} bytes, integrity verified (sha256={}){}\n", printable(entry.path),
            sender.file_size(), to_hex(outcome.sha256),
            outcome.resumed_from > 0 ? fmt::format(", resumed at {}", outcome.resumed_from) : "");
      }
      std::cout << std::flush;
      continue;
    }
    ++failed;
    if (sender.state() == proto::FileSender::State::Idle) {  // refused or mismatch: go on
      std::fprintf(stderr, "file-send: %s: %s\n", printable(entry.path).c_str(),
                   printable(outcome.error).c_str());
      record(outcome.rejected ? kRefused : kMismatch);
      continue;
    }
    if (outcome.result == proto::ResultStatus::WriteError) {
      std::fprintf(stderr,
                   "file-send: %s: %s (the receiver keeps the partial file; retry to "
                   "resume)\n",
                   printable(entry.path).c_str(), printable(outcome.error).c_str());
      record(kWriteError);
    } else if (sender.state() == proto::FileSender::State::Failed) {
      std::fprintf(stderr, "file-send: %s: %s\n", printable(entry.path).c_str(),
                   printable(outcome.error).c_str());
      record(kLocal);
    } else {
      const std::string why = pumped.result == apps::PumpResult::PeerClosed
                                  ? "receiver closed the connection"
                                  : pumped.error;
      std::fprintf(stderr,
                   "file-send: %s: %s after %llu of %llu bytes; run the same command again to "
                   "resume\n",
                   printable(entry.path).c_str(), printable(why).c_str(),
                   static_cast<unsigned long long>(sender.position()),
                   static_cast<unsigned long long>(sender.file_size()));
      record(kUnreachable);
      lost = true;
    }
    break;  // the session cannot go on
  }
  if (sender.state() == proto::FileSender::State::Idle) {
    sender.finish_stream();
    apps::Progress quiet("");
    apps::PumpIo io = sender_io(sender, *ctx.stream, quiet);
    io.done = [&] { return sender.output().empty(); };
    io.tick = [] {};
    ctx.stream->pump(io, ctx.idle);
  }
  ctx.stream->close(std::chrono::seconds(2), /*until_fin_acked=*/false);
  const auto info = ctx.stream->stats();
  const double seconds = apps::monotonic_seconds() - ctx.t0;
  const double mbps = seconds > 0 ? static_cast<double>(bytes_sent) / seconds / 1e6 : 0;
  const uint64_t skipped = tree.skipped.size();
  if (ctx.json) {
    nlohmann::json j;
    j["directory"] = printable(ctx.root);
    j["files"] = files;
    j["already_present"] = present;
    j["directories"] = dirs;
    j["bytes"] = bytes_total;
    j["bytes_sent"] = bytes_sent;
    j["seconds"] = seconds;
    j["throughput_MBps"] = mbps;
    j["retransmits"] = info.retransmits;
    j["skipped"] = skipped;
    j["failed"] = failed;
    j["transport"] = ctx.transport.transport;
    j["cc"] = cc_name(ctx.transport);
    j["verified"] = status == kOk;
    std::cout << dump(j) << "\n";
  } else {
    std::cout << fmt::format(
        "{}/: {} files ({} already present), {} directories, {} bytes ({} sent) in {:.3f} s, "
        "{:.1f} MB/s, {} retransmits{}{}{}\n",
        printable(ctx.root), files, present, dirs, bytes_total, bytes_sent, seconds, mbps,
        info.retransmits, skipped > 0 ? fmt::format(", {} skipped", skipped) : "",
        failed > 0 ? fmt::format(", {} failed", failed) : "",
        lost ? ", session lost: run the same command again to resume" : "");
  }
  return status;
}

int run(int argc, char** argv) {
  CLI::App app{"Send a file to file-recv; SHA-256 verified end to end, resumable."};
  apps::add_version_flag(app, "file-send");
  apps::describe_exit_statuses(
      app,
      {{kOk, "verified: the receiver holds the file (or the whole tree)"},
       {kLocal, "bad arguments or a local error (reading the file)"},
       {kRefused, "refused by the receiver (a name, a size limit, busy)"},
       {kMismatch, "SHA-256 mismatch at the receiver"},
       {kUnreachable,
        "receiver unreachable, or the connection was lost: run the same command "
        "again to resume"},
       {kWriteError, "the receiver could not write the file"}},
      "Every error is one line on stderr. For a directory, the status of the first file that "
      "failed, except that 5 wins (the rest of the tree was not sent).");
  std::string path;
  std::string to;
  apps::TransportFlags transport_flags;
  std::string name;
  double connect_timeout = 10;
  double idle_timeout = 30;
  bool json = false;
  int verbose = 0;
  bool quiet = false;
  app.add_option("file", path, "File or directory to send")->required();
  app.add_option("--to", to,
                 "Receiver HOST:PORT or [IPv6]:PORT (for --transport udp, the UDP port file-recv "
                 "listens on)")
      ->required();
  apps::add_transport_flags(app, transport_flags);
  app.add_option("--name", name,
                 "Name to give the file (or the directory) at the receiver (default: base name)");
  app.add_option("--connect-timeout", connect_timeout, "Seconds to wait for the receiver")
      ->check(CLI::PositiveNumber);
  app.add_option("--idle-timeout", idle_timeout, "Give up after this many seconds of no progress")
      ->check(CLI::PositiveNumber);
  app.add_flag("--json", json, "Print the summary as JSON");
  app.add_flag("-v,--verbose", verbose, "More logging (repeat for trace)");
  app.add_flag("-q,--quiet", quiet, "Errors only");
  if (const auto status = apps::parse_command_line(app, argc, argv, "file-send")) {
    return *status;
  }
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
  std::error_code ec;
  // Bounded by --connect-timeout; called once the local input is known good,
  // so a missing file is reported without waiting for the receiver.
  const auto connect = [&] {
    return apps::connect_stream(
        *transport, peer,
        std::chrono::duration_cast<Duration>(std::chrono::duration<double>(connect_timeout)));
  };
  if (std::filesystem::is_directory(path, ec)) {
    SendContext ctx;
    ctx.transport = *transport;
    ctx.json = json;
    ctx.t0 = t0;
    ctx.idle = std::chrono::duration_cast<Duration>(std::chrono::duration<double>(idle_timeout));
    ctx.root = name;
    if (ctx.root.empty()) {
      auto p = std::filesystem::absolute(path).lexically_normal();
      if (!p.has_filename()) {
        p = p.parent_path();
      }
      ctx.root = p.filename().string();
    }
    apps::TreeScan tree;
    try {
      tree = apps::scan_tree(path, ctx.root);
    } catch (const std::exception& e) {
      return fail(kLocal, e.what());
    }
    std::unique_ptr<apps::StreamConnection> stream;
    try {
      stream = connect();
    } catch (const std::exception& e) {
      return fail(kUnreachable, e.what());
    }
    ctx.stream = stream.get();
    return send_tree(ctx, tree);
  }
  std::unique_ptr<apps::PosixFileSource> source;
  try {
    source = std::make_unique<apps::PosixFileSource>(path);
  } catch (const std::exception& e) {
    return fail(kLocal, e.what());
  }
  if (name.empty()) {
    name = std::filesystem::path(path).filename().string();
  }

  // The file id (SHA-256 of the size and the first and last 64 KiB; with
  // OpenSSL's first-use set-up about 0.8 ms) is needed only for the OFFER:
  // compute it while the transport comes up and the handshake runs, instead
  // of before the first SYN.
  auto file_id_future = std::async(std::launch::async, [&source] { return source->file_id(); });
  std::unique_ptr<apps::StreamConnection> stream;
  try {
    stream = connect();
  } catch (const std::exception& e) {
    return fail(kUnreachable, e.what());  // the future's destructor waits for the hash
  }
  Sha256Digest file_id{};
  try {
    file_id = file_id_future.get();
  } catch (const std::exception& e) {
    return fail(kLocal, e.what());
  }

  apps::ThreadedContentHash hash;  // SHA-256 beside the event loop
  proto::FileSender sender(&hash);
  sender.offer(*source, name, file_id);
  apps::Progress progress(name);
  const Duration idle =
      std::chrono::duration_cast<Duration>(std::chrono::duration<double>(idle_timeout));
  apps::PumpIo io = sender_io(sender, *stream, progress);
  auto pumped = stream->pump(io, idle);
  progress.clear();
  if (sender.state() == proto::FileSender::State::Idle) {
    sender.finish_stream();
    io.done = [&] { return sender.output().empty(); };
    stream->pump(io, idle);
  }
  // The result is in; the close only says goodbye, so it waits briefly.
  stream->close(std::chrono::seconds(2), /*until_fin_acked=*/false);
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
    j["file"] = printable(name);
    j["size"] = size;
    j["resumed_from"] = outcome.resumed_from;
    j["bytes_sent"] = outcome.bytes_sent;
    j["seconds"] = seconds;
    j["throughput_MBps"] = mbps;
    j["retransmits"] = info.retransmits;
    j["efficiency"] = efficiency;
    j["transport"] = transport->transport;
    j["cc"] = cc_name(*transport);
    j["impairment"] = transport->impair;
    j["sha256"] = to_hex(outcome.sha256);
    j["verified"] = true;
    std::cout << dump(j) << "\n";
  } else {
    std::cout << fmt::format(
        "{}: {} bytes in {:.3f} s, {:.1f} MB/s, {} retransmits, efficiency {:.1f}%{}, integrity "
        "verified (sha256={})\n",
        printable(name), size, seconds, mbps, info.retransmits, efficiency * 100,
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
    std::fprintf(stderr, "file-send: %s\n", tinytcp::printable(e.what()).c_str());
    return 1;
  }
}
