#pragma once

// StackRuntime: a tinytcp Host on a real link, for the apps. It opens the
// device named by `--dev` (tunN, tapN with ARP on top, or udp:HOST:PORT, the
// unprivileged UDP tunnel), optionally wraps it in the impairment stage and a
// pcap capture, and runs the Host on the io/ event loop: datagrams in from the
// device, datagrams out to it, Host timers as a deadline source. The loop
// sleeps until the next packet or deadline; an idle stack uses no CPU.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "io/adapter.hh"
#include "io/event_loop.hh"
#include "stack/host.hh"
#include "wire/ipv4.hh"

namespace tinytcp::apps {

struct RuntimeOptions {
  // "tun144", "tap10", or "udp:PEER_IP:PORT" (add "@LOCAL_PORT" to fix our port).
  std::string dev = "tun144";
  std::optional<wire::Ipv4Address> address;  // default: 169.254.N.9 for tunN/tapN
  std::string pcap;                          // capture file, empty: none
  std::string impair;                        // impairment spec, each direction
  uint64_t seed = 1;
  tcp::TcpConfig tcp;
};

class StackRuntime {
 public:
  // Throws std::runtime_error (one line for the user) when the device cannot
  // be opened or an option is malformed.
  explicit StackRuntime(RuntimeOptions options);
  ~StackRuntime();

  stack::Host& host() { return *host_; }
  io::EventLoop& loop() { return loop_; }
  Instant now() const { return loop_.now(); }
  // The kernel side of a tunN/tapN link (169.254.N.1), for defaults.
  std::optional<wire::Ipv4Address> kernel_peer() const { return kernel_peer_; }
  const io::DatagramAdapter& adapter() const { return *top_; }

  // Runs the loop until `done()` is true (checked after every wake-up) or
  // `timeout` passes; returns done().
  bool run_until(const std::function<bool()>& done, Duration timeout);

 private:
  struct Tap;
  void on_packet(std::string_view packet);
  void send_datagram(std::string_view datagram);

  RuntimeOptions options_;
  io::EventLoop loop_;
  std::unique_ptr<io::DatagramAdapter> device_;
  std::unique_ptr<io::DatagramAdapter> impaired_;
  std::unique_ptr<io::DatagramAdapter> capture_;
  io::DatagramAdapter* top_ = nullptr;
  std::unique_ptr<Tap> tap_;
  std::unique_ptr<stack::Host> host_;
  std::optional<wire::Ipv4Address> kernel_peer_;
  io::EventLoop::SourceId adapter_source_ = 0;
  io::EventLoop::SourceId host_source_ = 0;
  io::EventLoop::SourceId tap_source_ = 0;
};

}  // namespace tinytcp::apps
