#pragma once

// TimeWaitHandler: a Host's connections in TIME-WAIT that no application
// holds. It moves them into the compact TimeWaitTable (or lets them close
// without TIME-WAIT when the table is full, as Linux past
// tcp_max_tw_buckets), and answers a segment for one of them as
// tcp::time_wait_receive decides: ignore it, ACK it (rate limited), end the
// entry on a RST at RCV.NXT, or give the tuple to a new connection whose
// SYN is newer (RFC 6191), with an ISN past the old incarnation's.
//
// It counts what it does in HostStats; the Host sends the ACKs and opens
// the new connections.

#include <cstddef>
#include <optional>

#include "stack/datagram_codec.hh"
#include "stack/four_tuple.hh"
#include "stack/host_types.hh"
#include "stack/time_wait_table.hh"
#include "tcp/tcp_segment.hh"
#include "tcp/time_wait.hh"
#include "util/time.hh"

namespace tinytcp::stack {

class TimeWaitHandler {
 public:
  // What to do with a segment for a tuple in TIME-WAIT.
  struct Answer {
    bool taken = true;                   // false: a SYN that opens a new connection
    std::optional<tcp::TcpSegment> ack;  // send this ACK
    std::optional<tcp::Wrap32> isn;      // the new connection's ISN (when not taken)
  };

  TimeWaitHandler(size_t capacity, Duration lifetime, Duration ack_interval);

  // The connection of `tuple` reached TIME-WAIT with nobody holding it
  // (`tw`: what it still needs, none if it cannot say).
  void enter(const FourTuple& tuple, const std::optional<tcp::TimeWait>& tw, HostStats& stats);
  // A segment for a tuple that contains() says is in TIME-WAIT.
  Answer receive(const InboundSegment& in, Instant now, HostStats& stats);

  bool contains(const FourTuple& tuple) const { return table_.contains(tuple); }
  void expire(Instant now) { table_.expire(now); }
  std::optional<Instant> next_deadline() const { return table_.next_deadline(); }
  size_t size() const { return table_.size(); }

 private:
  TimeWaitTable table_;
  Duration lifetime_;  // 2 MSL
  Duration ack_interval_;
};

}  // namespace tinytcp::stack
