#pragma once

// What one TcpConnection counts (ConnectionStats) and the summary of it,
// its sender and its receiver that apps print and plot (ConnectionSummary).

#include <cstdint>

#include "tcp/tcp_receiver.hh"
#include "tcp/tcp_sender.hh"
#include "tcp/tcp_state.hh"
#include "util/counters.hh"

namespace tinytcp::tcp {

struct ConnectionStats {
  uint64_t segments_in = 0;
  uint64_t bytes_in = 0;  // payload bytes of every segment handed to receive()
  uint64_t segments_out = 0;
  uint64_t bytes_out = 0;  // payload bytes sent, retransmissions included
  uint64_t acks_out = 0;   // segments without payload, SYN, FIN or RST
  uint64_t resets_out = 0;
  uint64_t challenge_acks = 0;
  // SACK blocks left off a segment so that payload and options fit the MSS.
  uint64_t sack_blocks_trimmed = 0;
  EnumCounters<ConnectionDrop> drops;
};

// Everything an app prints or plots about one connection.
struct ConnectionSummary {
  uint64_t segments_in = 0;
  uint64_t bytes_in = 0;
  uint64_t segments_out = 0;
  uint64_t bytes_out = 0;
  uint64_t retransmits = 0;
  uint64_t fast_retransmits = 0;
  uint64_t rtos = 0;
  uint64_t sack_recovered_segments = 0;
  uint64_t rack_marked_lost = 0;  // RFC 8985 RACK-TLP
  uint64_t lost_retransmissions = 0;
  uint64_t tlp_probes = 0;
  uint64_t tlp_recoveries = 0;
  uint64_t recovery_probes = 0;
  uint64_t duplicate_acks = 0;
  uint64_t challenge_acks = 0;
  uint64_t drops = 0;  // connection and receiver drops together
  SenderState sender;  // cwnd, ssthresh, srtt, rttvar, rto
};

// The summary of a connection whose state machine counted `stats`.
ConnectionSummary summarize(const ConnectionStats& stats, const TcpSender& sender,
                            const TcpReceiver& receiver);

}  // namespace tinytcp::tcp
