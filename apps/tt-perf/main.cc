// tt-perf: one measurement tool for every workload, over tinytcp in the UDP
// tunnel, tinytcp on TUN, or kernel TCP (docs/tt-perf.md).
//
//   tt-perf server --listen PORT [options]
//   tt-perf stream   --to HOST:PORT [--time S | --bytes N] [--parallel P]
//   tt-perf rr       --to HOST:PORT [--time S] [--parallel P]
//   tt-perf crr      --to HOST:PORT [--time S] [--parallel P]
//   tt-perf echo     --to HOST:PORT [--messages 1000] [--size 200-399] [--gap 2-19ms]
//   tt-perf messages --to HOST:PORT [--count 20000] [--size 1460]
//
// Every mode takes the transport flags (--transport udp|tun|kernel, --cc
// including fixed:N, --no-sack, --loss/--delay/--impair, --pcap, --robust)
// and --json. Exit status: 0 when the run completed (and echo verified), 1
// on an error (one line on stderr), 3 when echo's bytes did not match.

#include <atomic>
#include <csignal>
#include <cstdio>
#include <stdexcept>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "common/command_line.hh"
#include "common/version_flag.hh"
#include "tt-perf/perf_server.hh"
#include "tt-perf/perf_transport.hh"
#include "tt-perf/perf_workload.hh"
#include "util/logging.hh"

namespace {

using namespace tinytcp;

std::atomic<bool> g_stop{false};

void on_signal(int) {
  g_stop.store(true);
}

constexpr const char* kPacketsHelp =
    "Packets: udp/tun count the IPv4 datagrams our stack sent and received (Host counters, "
    "before --loss drops them); kernel sums TCP_INFO tcpi_segs_out/in of every connection, read "
    "just before it is closed.";

void add_exit_statuses(CLI::App& app) {
  apps::describe_exit_statuses(
      app,
      {{0, "the run completed (echo: every byte came back)"},
       {apps::kBadArguments, "bad arguments, or the run failed (one line on stderr)"},
       {3, "echo: the bytes that came back differ from those sent"}},
      kPacketsHelp);
}

struct CommonFlags {
  apps::TransportFlags transport;
  bool json = false;
  int verbose = 0;
  bool quiet = false;
};

void add_common_flags(CLI::App& app, CommonFlags& f) {
  apps::add_transport_flags(app, f.transport);
  app.add_flag("--json", f.json, "Print the results as one JSON object");
  app.add_flag("-v,--verbose", f.verbose, "More logging (repeat for trace)");
  app.add_flag("-q,--quiet", f.quiet, "Errors only");
}

apps::TransportOptions finish_transport(const CommonFlags& f) {
  auto t = f.transport.finish();
  if (!t) {
    throw std::runtime_error(t.error());
  }
  return *t;
}

struct ClientFlags {
  CommonFlags common;
  std::string to;
  double time = 5;
  double idle_timeout = 30;
  std::string size;
  std::string gap = "2-19ms";
};

CLI::App* add_client(CLI::App& app, const std::string& mode, const std::string& what,
                     ClientFlags& f, apps::ClientOptions& o) {
  CLI::App* sub = app.add_subcommand(mode, what);
  sub->add_option("--to", f.to, "HOST:PORT or [IPv6]:PORT of tt-perf server (udp: its UDP port)")
      ->required();
  if (mode == "stream" || mode == "rr" || mode == "crr") {
    sub->add_option("--time", f.time, "Seconds to run")
        ->check(CLI::Range(0.01, 86400.0))
        ->capture_default_str();
    sub->add_option("--parallel,-P", o.parallel, "Connections (crr: transactions) at once")
        ->check(CLI::Range(1, 1024))
        ->capture_default_str();
  }
  sub->add_option("--idle-timeout", f.idle_timeout, "Fail after this many seconds without progress")
      ->check(CLI::Range(0.1, 86400.0))
      ->capture_default_str();
  add_common_flags(*sub, f.common);
  add_exit_statuses(*sub);
  return sub;
}

int report_and_exit(const apps::PerfReport& report, bool json) {
  if (json) {
    std::printf("%s\n", report.to_json().dump().c_str());
  } else {
    std::printf("%s\n", report.to_text().c_str());
  }
  if (report.errors != 0) {
    std::fprintf(stderr, "tt-perf: %s\n", report.error.c_str());
    return 1;
  }
  if (report.verified && !*report.verified) {
    std::fprintf(stderr, "tt-perf: %s: the bytes did not match\n", report.mode.c_str());
    return 3;
  }
  return 0;
}

int run(int argc, char** argv) {
  CLI::App app{"Measure throughput, request rates and latency over tinytcp or kernel TCP."};
  apps::add_version_flag(app, "tt-perf");
  app.require_subcommand(1);
  add_exit_statuses(app);

  CommonFlags server_flags;
  std::string listen;
  size_t max_connections = 4096;
  CLI::App* server = app.add_subcommand("server", "Sink, echo and reply to tt-perf clients");
  server
      ->add_option("--listen", listen,
                   "[ADDR:]PORT ([IPv6]:PORT; default every address, IPv4 and IPv6; udp: the UDP "
                   "port and the TCP port inside)")
      ->required();
  server->add_option("--max-connections", max_connections, "Connections at once")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  add_common_flags(*server, server_flags);

  apps::ClientOptions o;
  ClientFlags f;
  std::vector<CLI::App*> clients;
  clients.push_back(add_client(app, "stream", "Bulk bytes to the server: throughput", f, o));
  clients.back()->add_option("--bytes", o.bytes, "Stop after this many bytes in all (0: --time)");
  clients.push_back(
      add_client(app, "rr", "1-byte request/response: transactions/s, latency", f, o));
  clients.push_back(add_client(
      app, "crr", "Connect, 64-byte request, 8 KiB reply, close: transactions/s, latency", f, o));
  clients.back()
      ->add_option("--request", o.request_bytes, "Request bytes")
      ->check(CLI::Range(1U, apps::PerfHeader::kMaxRequest))
      ->capture_default_str();
  clients.back()
      ->add_option("--reply", o.reply_bytes, "Reply bytes")
      ->check(CLI::Range(0U, apps::PerfHeader::kMaxReply))
      ->capture_default_str();
  CLI::App* echo = add_client(
      app, "echo", "Messages with random sizes and gaps, echoed and checked (SHA-256)", f, o);
  clients.push_back(echo);
  echo->add_option("--messages", o.messages, "Messages to send")
      ->check(CLI::Range(1, 100000000))
      ->capture_default_str();
  echo->add_option("--size", f.size, "Bytes per message: N or LOW-HIGH (default 200-399)");
  echo->add_option("--gap", f.gap, "Gap between sends: e.g. 2-19ms, 0ms, 1s")
      ->capture_default_str();
  CLI::App* messages =
      add_client(app, "messages",
                 "Fixed-size messages as fast as allowed (--cc fixed:1: stop-and-wait)", f, o);
  clients.push_back(messages);
  messages->add_option("--count", o.count, "Messages to send")
      ->check(CLI::Range(1, 100000000))
      ->capture_default_str();
  messages->add_option("--size", f.size, "Bytes per message (default 1460)");

  if (const auto status = apps::parse_command_line(app, argc, argv, "tt-perf")) {
    return *status;
  }

  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  std::signal(SIGPIPE, SIG_IGN);
  if (server->parsed()) {
    setup_logging(server_flags.quiet ? -1 : server_flags.verbose);
    const apps::TransportOptions t = finish_transport(server_flags);
    if (!t.trace.empty()) {
      throw std::runtime_error("--trace: records a client's sender; give it to the client");
    }
    const apps::HostPort at = apps::parse_listen(listen);
    apps::PerfServer perf(t, at, max_connections);
    spdlog::info("tt-perf server on port {} ({}{})", at.port,
                 at.host.empty() ? "" : "address " + at.host + ", ", t.transport);
    perf.run(g_stop);
    if (server_flags.json) {
      std::printf("%s\n", perf.stats().to_json().dump().c_str());
    } else {
      spdlog::info("{}", perf.summary());
    }
    return 0;
  }

  for (CLI::App* sub : clients) {
    if (sub->parsed()) {
      o.mode = sub->get_name();
    }
  }
  setup_logging(f.common.quiet ? -1 : f.common.verbose);
  const apps::TransportOptions t = finish_transport(f.common);
  o.to = apps::parse_host_port(f.to);
  o.seed = t.seed;
  o.duration = std::chrono::duration_cast<Duration>(std::chrono::duration<double>(f.time));
  o.idle_timeout =
      std::chrono::duration_cast<Duration>(std::chrono::duration<double>(f.idle_timeout));
  if (o.mode == "echo") {
    const auto size =
        apps::parse_size_range(f.size.empty() ? "200-399" : f.size, "--size", 1, 16 << 20);
    const auto gap = apps::parse_duration_range(f.gap, "--gap");
    if (!size) {
      throw std::runtime_error(size.error());
    }
    if (!gap) {
      throw std::runtime_error(gap.error());
    }
    o.size = *size;
    o.gap = *gap;
  } else if (o.mode == "messages") {
    const auto size =
        apps::parse_size_range(f.size.empty() ? "1460" : f.size, "--size", 1, 16 << 20);
    if (!size || size->low != size->high) {
      throw std::runtime_error(size ? "--size: messages have one size, not a range" : size.error());
    }
    o.message_size = size->low;
  }

  apps::PerfTransport transport = apps::open_perf_transport(t, o.to);
  auto workload = apps::make_workload(o);
  apps::PerfReport report = workload->run(*transport.client, g_stop);
  report.transport = t.transport;
  report.cc = t.cc;
  report.sack = t.sack;
  report.robust = t.robust;
  report.packets = transport.counter->packets();
  report.packet_method = transport.counter->method();
  return report_and_exit(report, f.common.json);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tt-perf: %s\n", e.what());
    return 1;
  }
}
