#include "stack/listener_admission.hh"

namespace tinytcp::stack {

ListenerAdmission::ListenerAdmission(const std::string& secret, bool syn_cookies)
    : fold_(secret), cookies_(secret), syn_cookies_(syn_cookies) {}

tcp::CookieTuple ListenerAdmission::cookie_tuple(const FourTuple& t) const {
  return tcp::CookieTuple{fold_(t.local_ip), t.local_port, fold_(t.remote_ip), t.remote_port};
}

ListenerAdmission::SynVerdict ListenerAdmission::on_syn(const ListenQueue& queue) const {
  if (queue.half_open < queue.backlog) {
    return SynVerdict::Open;
  }
  return syn_cookies_ ? SynVerdict::Cookie : SynVerdict::Drop;
}

tcp::TcpSegment ListenerAdmission::cookie_syn_ack(const tcp::TcpConfig& config,
                                                  const InboundSegment& in, uint32_t tsval_now,
                                                  Instant now) const {
  return cookies_.syn_ack(config, cookie_tuple(in.tuple), in.segment, tsval_now, now);
}

std::optional<Expected<tcp::TcpSegment, tcp::CookieError>> ListenerAdmission::check_cookie(
    const ListenQueue& queue, const InboundSegment& in, Instant now) const {
  // Cookies are checked only while a listener has been sending them (as
  // Linux's tcp_synq_no_recent_overflow): otherwise a blind attacker could
  // try to guess one at any time.
  if (!queue.last_cookie || now - *queue.last_cookie > 2 * tcp::SynCookies::kPeriod) {
    return std::nullopt;
  }
  return cookies_.rebuild_syn(cookie_tuple(in.tuple), in.segment, now);
}

bool ListenerAdmission::on_handshake_complete(ListenQueue& queue, SocketId id) {
  --queue.half_open;
  if (queue.ready.size() >= queue.backlog) {
    return false;
  }
  queue.ready.push_back(id);
  return true;
}

}  // namespace tinytcp::stack
