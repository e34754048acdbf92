#pragma once

// PerfTransport: the client side of tt-perf's connections (a StreamClient of
// common/stream_client.hh, robust sessions included) with the packets the
// client sent and received, counted the same way for every workload:
//   udp, tun  the Host's own counters (HostStats::datagrams_out/in): every
//             IPv4 datagram our stack handed to the device or took from it
//             (before an --impair stage drops it on the way out)
//   kernel    TCP_INFO of each connection (tcpi_segs_out/in), read just
//             before the connection is closed: segments after that (the FIN
//             exchange) are not counted
// TODO(issue 18): ask StreamClient for the counters once it offers them;
// until then the counting clients here repeat connect_streams' few lines.

#include <cstdint>
#include <memory>
#include <string>

#include "common/kernel_tcp.hh"
#include "common/stream_client.hh"
#include "common/stream_transport.hh"

namespace tinytcp::apps {

struct PacketCounts {
  uint64_t sent = 0;
  uint64_t received = 0;
  uint64_t retransmits = 0;  // kernel only (tcpi_total_retrans); 0 for our stack
};

class PacketCounter {
 public:
  virtual ~PacketCounter() = default;
  virtual PacketCounts packets() const = 0;
  // How packets() counts, one line for --help, the report and the docs.
  virtual const char* method() const = 0;
};

struct PerfTransport {
  std::unique_ptr<StreamClient> client;
  const PacketCounter* counter = nullptr;  // owned by `client` (or the carriers under it)
};

// Throws std::runtime_error (one line) when the transport cannot be set up.
PerfTransport open_perf_transport(const TransportOptions& options, const HostPort& to);

}  // namespace tinytcp::apps
