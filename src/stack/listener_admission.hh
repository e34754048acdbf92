#pragma once

// ListenerAdmission: who gets in through a listening port. A SYN opens a
// half-open connection while the SYN queue (the listener's backlog) has
// room; past it the SYN is answered with a SYN cookie (RFC 4987 §3.6,
// tcp::SynCookies), or dropped when cookies are off. A returning ACK is
// taken for a cookie only while the listener has been sending them
// recently (Linux's tcp_synq_no_recent_overflow), so a blind attacker
// cannot try guesses at any time. A connection that completed its
// handshake goes to the accept queue, bounded by the same backlog.
//
// It decides and keeps the queues' accounting; the Host makes the sockets,
// sends the segments and counts the drops.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>

#include "stack/address_fold.hh"
#include "stack/datagram_codec.hh"
#include "stack/host_types.hh"
#include "tcp/syn_cookie.hh"
#include "tcp/tcp_config.hh"
#include "tcp/tcp_segment.hh"
#include "util/expected.hh"
#include "util/time.hh"

namespace tinytcp::stack {

// One listening port's queues.
struct ListenQueue {
  uint16_t port = 0;
  size_t backlog = 0;
  size_t half_open = 0;                // SYN queue: passive opens still in their handshake
  std::deque<SocketId> ready;          // accept queue
  std::optional<Instant> last_cookie;  // when a SYN was last answered with a cookie
};

class ListenerAdmission {
 public:
  enum class SynVerdict {
    Open,    // a half-open connection (the caller counts it with add_half_open)
    Cookie,  // the SYN queue is full: answer with cookie_syn_ack()
    Drop,    // the SYN queue is full and cookies are off (HostDrop::SynBacklogFull)
  };

  ListenerAdmission(const std::string& secret, bool syn_cookies);

  SynVerdict on_syn(const ListenQueue& queue) const;
  static void add_half_open(ListenQueue& queue) { ++queue.half_open; }
  // The SYN-ACK whose ISN is a cookie for the SYN in `in`; `tsval_now` is the
  // TSval clock of the connection it would become.
  tcp::TcpSegment cookie_syn_ack(const tcp::TcpConfig& config, const InboundSegment& in,
                                 uint32_t tsval_now, Instant now) const;
  // `queue` answered a SYN with a cookie at `now`: ACKs are checked for
  // cookies for the next two cookie periods.
  static void cookies_sent(ListenQueue& queue, Instant now) { queue.last_cookie = now; }
  // An ACK for no connection on `queue`'s port: nullopt when it cannot be a
  // cookie (none sent recently), else the SYN the cookie encodes or why it
  // is no valid cookie.
  std::optional<Expected<tcp::TcpSegment, tcp::CookieError>> check_cookie(const ListenQueue& queue,
                                                                          const InboundSegment& in,
                                                                          Instant now) const;
  // A half-open connection `id` of `queue` completed its handshake: leaves
  // the SYN queue and joins the accept queue; false when that is full (the
  // caller resets it).
  static bool on_handshake_complete(ListenQueue& queue, SocketId id);

 private:
  tcp::CookieTuple cookie_tuple(const FourTuple& t) const;

  AddressFold fold_;
  tcp::SynCookies cookies_;
  bool syn_cookies_;
};

}  // namespace tinytcp::stack
