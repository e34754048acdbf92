// tinyrouter: forwards IPv4 between TAP devices with tinytcp's Router (route
// trie, ARP with its timers, TTL, ICMP time exceeded / unreachable /
// fragmentation needed), so kernel hosts in separate network namespaces
// reach each other only through it (docs/tinyrouter.md).
//
//   tinyrouter --if tap0=10.0.0.1/24 --if tap1=10.0.1.1/24
//              [--route PREFIX/LEN=GATEWAY] [--impair tap1:loss=30%] [--pcap FILE]
//              [--no-offload]
//
// The TAP devices are opened (created if absent; root or CAP_NET_ADMIN), with
// offloads (IFF_VNET_HDR, checksum, TSO) unless --no-offload, --pcap or
// --impair, or the kernel lacks them: TCP super-frames then cross whole;
// their kernel side is configured outside (ip link/addr, or moved into a
// namespace). Exit status: 0 after SIGINT or SIGTERM (the counters on
// stdout with --json); 1 with one line on stderr when it cannot start.

#include <atomic>
#include <csignal>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "common/command_line.hh"
#include "common/router_flags.hh"
#include "common/version_flag.hh"
#include "tinyrouter/router_app.hh"
#include "util/logging.hh"

namespace {

using namespace tinytcp;

std::atomic<bool> g_stop{false};

void on_signal(int) {
  g_stop.store(true);
}

template <typename T>
T or_throw(Expected<T, std::string> value) {
  if (!value) {
    throw std::runtime_error(value.error());
  }
  return std::move(*value);
}

int run(int argc, char** argv) {
  CLI::App app{"Forward IPv4 between TAP devices with tinytcp's Router and ARP."};
  apps::add_version_flag(app, "tinyrouter");
  apps::describe_exit_statuses(
      app, {{0, "stopped by SIGINT or SIGTERM (with --json, the counters on stdout)"},
            {apps::kBadArguments, "bad arguments, or it cannot start (one line on stderr)"}});
  std::vector<std::string> ifs;
  std::vector<std::string> routes;
  std::vector<std::string> impairs;
  apps::RouterAppOptions options;
  bool json = false;
  int verbose = 0;
  bool quiet = false;
  app.add_option("--if", ifs, "NAME=ADDR/LEN: a TAP device, our address on it and its network")
      ->required();
  app.add_option("--route", routes, "PREFIX/LEN=GATEWAY or default=GATEWAY (repeatable)");
  app.add_option("--impair", impairs,
                 "NAME:SPEC impairment of what the router sends out of NAME, IPv4 only "
                 "(e.g. tap1:loss=30%; impair both interfaces for both directions)");
  app.add_option("--pcap", options.pcap,
                 "Capture what crosses the devices (several: FILE-NAME.pcap each)");
  app.add_option("--seed", options.seed, "Seed of the impairment stages")->capture_default_str();
  bool no_offload = false;
  app.add_flag("--no-offload", no_offload,
               "Open the TAP devices without IFF_VNET_HDR (one frame per read and write)");
  app.add_flag("--json", json, "Print the counters as JSON at exit");
  app.add_flag("-v,--verbose", verbose, "More logging (repeat for trace)");
  app.add_flag("-q,--quiet", quiet, "Errors only");
  if (const auto status = apps::parse_command_line(app, argc, argv, "tinyrouter")) {
    return *status;
  }
  setup_logging(quiet ? -1 : verbose);
  options.offload = !no_offload;

  for (const auto& text : ifs) {
    options.interfaces.push_back(or_throw(apps::parse_interface_spec(text)));
  }
  std::vector<apps::RouteSpec> route_specs;
  for (const auto& text : routes) {
    route_specs.push_back(or_throw(apps::parse_route_spec(text)));
  }
  options.routes = or_throw(apps::plan_routes(options.interfaces, route_specs));
  for (const auto& text : impairs) {
    auto imp = or_throw(apps::parse_interface_impairment(text));
    bool known = false;
    for (const auto& i : options.interfaces) {
      known = known || i.name == imp.name;
    }
    if (!known) {
      throw std::runtime_error(fmt::format("--impair {}: no --if {}", text, imp.name));
    }
    options.impairments.push_back(std::move(imp));
  }

  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  apps::RouterApp router(options);
  std::string names;
  for (const auto& i : options.interfaces) {
    names +=
        fmt::format("{}{}={}/{}", names.empty() ? "" : ", ", i.name, i.address, i.prefix_length);
  }
  spdlog::info("tinyrouter forwarding between {}", names);
  router.run(g_stop);
  if (json) {
    std::printf("%s\n", router.stats().dump().c_str());
  } else {
    spdlog::info("{}", router.summary());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tinyrouter: %s\n", e.what());
    return 1;
  }
}
