#pragma once

// TimeWait: a connection in TIME-WAIT reduced to what it still needs to
// answer its peer (RFC 9293 §3.10.7.4 "TIME-WAIT STATE"), the way Linux
// keeps an inet_timewait_sock instead of the whole socket: about 40 bytes
// instead of a TcpConnection with its buffers, so a server that closes
// first can hold the 2 MSL of every connection it served.
//
// It answers a retransmitted FIN (ACK, restart the timer), any other
// unacceptable segment (ACK, rate limited like an out-of-window ACK), a RST
// at RCV.NXT (gone), and a new SYN for the same tuple: accepted when its
// timestamp is newer than TS.Recent or its sequence number is past RCV.NXT
// (RFC 6191, and RFC 1122 §4.2.2.13), so a client that reuses its port at
// once is not refused.
//
// Knows nothing of tuples or tables: stack/ keeps one per connection.

#include <cstdint>
#include <optional>

#include "tcp/tcp_segment.hh"
#include "tcp/wrap32.hh"
#include "util/time.hh"

namespace tinytcp::tcp {

struct TimeWait {
  Instant expires;                  // 2 MSL after the last FIN (RFC 9293 §3.4.2)
  Wrap32 snd_nxt;                   // after our FIN
  Wrap32 rcv_nxt;                   // after the peer's FIN
  uint16_t window = 0;              // the window field we last sent (scaled)
  bool timestamps = false;          // negotiated (RFC 7323)
  uint32_t ts_recent = 0;           // the peer's last TSval (RFC 7323 §4.3)
  uint32_t ts_offset = 0;           // of our TSval clock (TcpSender::timestamp_clock)
  std::optional<Instant> last_ack;  // of the last rate-limited ACK
};

enum class TimeWaitAction {
  Ignore,         // nothing to send (a bare ACK at RCV.NXT, an old RST, rate limited)
  Ack,            // send `ack`
  Close,          // a RST at RCV.NXT: forget the entry (RFC 9293; Linux without rfc1337)
  NewConnection,  // a SYN to accept (RFC 6191): forget the entry, open with `isn`
};

struct TimeWaitVerdict {
  TimeWaitAction action = TimeWaitAction::Ignore;
  TcpSegment ack;  // Ack: <SEQ=SND.NXT><ACK=RCV.NXT><CTL=ACK>
  Wrap32 isn;      // NewConnection: past anything the old incarnation sent
};

// Segment arrives for `tw` at `now`. `lifetime` is 2 MSL (a retransmitted
// FIN restarts it); `ack_interval` is the least time between two ACKs to
// segments without data (as Linux's tcp_invalid_ratelimit), so a flood of
// spoofed ACKs or SYNs cannot make us send one for each.
TimeWaitVerdict time_wait_receive(TimeWait& tw, const TcpSegment& segment, Instant now,
                                  Duration lifetime, Duration ack_interval);

// The ACK a TIME-WAIT connection sends.
TcpSegment time_wait_ack(const TimeWait& tw, Instant now);

}  // namespace tinytcp::tcp
