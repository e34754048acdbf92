#pragma once

// The reliable byte stream under file-send and file-recv, whichever TCP
// carries it:
//   kernel  kernel TCP sockets on both ends (the baseline)
//   udp     tinytcp's TCP inside the UDP tunnel: no privileges; the receiver
//           binds UDP PORT and listens on TCP PORT inside the tunnel at
//           169.254.0.1 (for every peer: stream_server.hh), the sender
//           connects from 169.254.0.2
//   tun     tinytcp's TCP on a TUN device (default tun144) to a kernel peer
// A StreamConnection runs a protocol endpoint (PumpIo) to completion and
// closes gracefully; the stack transports take impairment, pcap, congestion
// control and a CSV trace of the sender's state.
//
// Errors for the user are thrown as std::runtime_error with one line.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "common/kernel_tcp.hh"
#include "common/transfer_driver.hh"
#include "runtime/stack_runtime.hh"
#include "session/session_config.hh"
#include "util/expected.hh"
#include "util/time.hh"

namespace tinytcp::apps {

inline constexpr uint32_t kBulkDelayedAckMs = 5;

struct TransportOptions {
  std::string transport = "udp";  // udp | tun | kernel
  std::string dev;                // tun: the device (default tun144)
  std::string cc;                 // congestion control; empty: the transport's default
  bool sack = true;
  bool delayed_ack = true;  // false: every segment acknowledged at once
  // The longest our receiver delays an ACK, in ms (bulk profile: 5; Linux
  // waits up to 40). The timers that allow for the peer's delayed ACK (tail
  // loss probe, minimum RTO) follow it, so both ends should use one value.
  uint32_t delayed_ack_ms = kBulkDelayedAckMs;
  // Nagle's algorithm (RFC 896, Linux's default): a small segment waits while
  // data is unacknowledged. Off in the bulk profile: the file protocol writes
  // whole frames and the last one must not wait.
  bool nagle = false;
  std::string impair;  // impairment spec for our transports, each direction
  std::string pcap;
  std::string trace;  // CSV file of the sender's state over time
  uint64_t seed = 1;
  // The stream is a robust session (common/robust_streams.hh) whose carriers
  // are connections of the transport: it survives their loss.
  bool robust = false;
  session::SessionConfig session;
  // Robust clients: close the carrier of a session idle this long (it
  // reconnects on the next byte). nullopt: never.
  std::optional<Duration> passivate_after;
};

// Checks the combination before anything is opened; the message names the flag.
std::optional<std::string> validate(const TransportOptions& options);

// The command-line flags both file apps share: --transport, --dev, --cc,
// --no-sack, --no-delayed-ack, --delayed-ack-ms, --nagle,
// --loss/--delay/--jitter/--reorder/--duplicate (each direction),
// --impair SPEC (the full impairment syntax), --seed, --pcap, --trace,
// --robust.
struct TransportFlags {
  TransportOptions options;
  std::string loss, delay, jitter, reorder, duplicate;
  bool no_sack = false;
  bool no_delayed_ack = false;

  // The options with the impairment flags folded in, checked; or the error.
  Expected<TransportOptions, std::string> finish() const;
};
void add_transport_flags(CLI::App& app, TransportFlags& flags);

// The congestion control a transport uses when none is given.
std::string default_congestion_control(const std::string& transport);

struct TransportStats {
  uint64_t retransmits = 0;   // segments sent again
  uint64_t payload_sent = 0;  // payload bytes sent, retransmissions included
  uint64_t payload_received = 0;
};

class StreamConnection {
 public:
  virtual ~StreamConnection() = default;

  // Moves bytes between the endpoint and the stream until io.done(), the peer
  // closes, an error, or `idle_timeout` without progress.
  virtual PumpOutcome pump(const PumpIo& io, Duration idle_timeout) = 0;
  // Closes gracefully: what was written is delivered (waits at most `linger`).
  // The wait ends once our FIN is acknowledged or the peer's FIN arrived;
  // with `until_fin_acked`, only once our FIN is acknowledged. The side that
  // answers the other's FIN with its own and then exits (file-recv) needs
  // that: if its FIN were lost and it had gone, the peer would retransmit
  // its own FIN to nobody until its linger ran out.
  virtual void close(Duration linger, bool until_fin_acked) = 0;
  virtual TransportStats stats() const = 0;
  // Bytes written to the stream that the peer has not acknowledged yet.
  virtual uint64_t unacknowledged() const = 0;
};

// Connects to the receiver at `to` (for udp, its UDP endpoint); throws
// std::runtime_error "cannot reach ..." after `timeout`.
std::unique_ptr<StreamConnection> connect_stream(const TransportOptions& options,
                                                 const HostPort& to, Duration timeout);

// The TCP settings of the file apps on our stack (large buffers, lossy-link
// timers), the runtime::StackRuntime of one end, and the receiver's address inside the
// UDP tunnel.
tcp::TcpConfig transfer_tcp_config(const TransportOptions& options);
runtime::RuntimeOptions runtime_options(const TransportOptions& options, bool listening);
wire::Ipv4Address tunnel_receiver_address();

}  // namespace tinytcp::apps
