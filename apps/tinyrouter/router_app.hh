#pragma once

// RouterApp: tinyrouter's wiring. A net::Router (longest-prefix match, TTL,
// ICMP errors, ARP through its NetworkInterfaces; all sans-I/O in src/net)
// with one TapPort per --if, on one io::EventLoop: frames from each device
// go to the Router, frames it sends go to the device of their interface, and
// the Router's timers (ARP resolution timeouts, reassembly) are a deadline
// source of the loop. One thread; nothing here decides a forwarding question.

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/router_flags.hh"
#include "io/event_loop.hh"
#include "net/router.hh"
#include "tinyrouter/tap_port.hh"

namespace tinytcp::apps {

struct RouterAppOptions {
  std::vector<InterfaceSpec> interfaces;
  std::vector<net::Route> routes;  // plan_routes()
  std::vector<InterfaceImpairment> impairments;
  std::string pcap;  // one interface: this file; more: FILE-NAME.pcap per interface
  uint64_t seed = 1;
  bool offload = true;  // IFF_VNET_HDR and TSO on the TAP devices (where possible)
};

class RouterApp {
 public:
  // Throws std::runtime_error (one line) when a device cannot be opened.
  explicit RouterApp(const RouterAppOptions& options);
  ~RouterApp();
  RouterApp(const RouterApp&) = delete;
  RouterApp& operator=(const RouterApp&) = delete;

  // Forwards until `stop` is set.
  void run(const std::atomic<bool>& stop);
  nlohmann::json stats();
  std::string summary() const;
  const net::Router& router() const { return router_; }

 private:
  io::EventLoop loop_;
  net::Router router_;
  std::vector<std::unique_ptr<TapPort>> ports_;
  std::vector<io::EventLoop::SourceId> sources_;
  io::EventLoop::SourceId timers_ = 0;
};

// Where interface `name`'s capture goes: `pcap` itself when it is the only
// interface, else `pcap` with "-NAME" before its extension.
std::string capture_path(const std::string& pcap, const std::string& name, size_t interfaces);

}  // namespace tinytcp::apps
