#include "stack/host.hh"

#include <spdlog/spdlog.h>

#include "util/buffer.hh"
#include "util/check.hh"
#include "util/hash.hh"
#include "wire/icmp.hh"

namespace tinytcp::stack {

const char* to_string(SocketError e) {
  switch (e) {
    case SocketError::NotFound:
      return "no such socket";
    case SocketError::AddressInUse:
      return "address in use";
    case SocketError::NoPortsFree:
      return "no ephemeral port free";
    case SocketError::TooManySockets:
      return "too many sockets";
    case SocketError::NotListener:
      return "not a listening socket";
    case SocketError::BadAddress:
      return "bad address";
    case SocketError::kCount:
      break;
  }
  return "unknown";
}

const char* to_string(HostDrop d) {
  switch (d) {
    case HostDrop::BadIpv4:
      return "bad IPv4";
    case HostDrop::NotForUs:
      return "not for our address";
    case HostDrop::BadTcp:
      return "bad TCP";
    case HostDrop::BadAddress:
      return "non-unicast address";
    case HostDrop::BadIcmp:
      return "bad ICMP";
    case HostDrop::IcmpStale:
      return "ICMP frag-needed for no data in flight";
    case HostDrop::IcmpIgnored:
      return "ICMP ignored";
    case HostDrop::NoConnection:
      return "no connection (reset sent)";
    case HostDrop::SynBacklogFull:
      return "SYN backlog full";
    case HostDrop::BadCookie:
      return "ACK with a bad SYN cookie (reset sent)";
    case HostDrop::AcceptQueueFull:
      return "accept queue full";
    case HostDrop::SocketLimit:
      return "socket limit";
    case HostDrop::kCount:
      break;
  }
  return "unknown";
}

const char* to_string(SocketEvent e) {
  switch (e) {
    case SocketEvent::Connected:
      return "connected";
    case SocketEvent::Acceptable:
      return "acceptable";
    case SocketEvent::Readable:
      return "readable";
    case SocketEvent::Writable:
      return "writable";
    case SocketEvent::Closed:
      return "closed";
  }
  return "unknown";
}

struct Host::Socket {
  SocketId id = 0;
  FourTuple tuple;
  std::unique_ptr<tcp::TcpConnection> conn;  // null for a listener
  std::optional<Listener> listener;
  SocketId parent = 0;      // listener of a passive open not yet accepted
  bool half_open = false;   // counted in the parent's half_open
  bool queued = false;      // in the parent's ready queue
  bool app_closed = false;  // the app let go: reclaim once CLOSED
  bool announced_connected = false;
  bool announced_closed = false;
  std::optional<Instant> scheduled;
  uint64_t seen_pushed = 0;  // inbound bytes_pushed at the last Readable
  bool seen_fin = false;
  uint64_t seen_writable = 0;  // writable_bytes at the last Writable, or lower since
};

namespace {

constexpr size_t kMaxDatagram = 65535;

std::string make_secret(const std::string& given) {
  return given.size() >= 16 ? given : secure_random_bytes(32);
}

bool unicast(wire::Ipv4Address a) {
  return !a.is_zero() && !a.is_limited_broadcast() && !a.is_multicast();
}

bool synchronized_or_later(tcp::TcpState s) {
  switch (s) {
    case tcp::TcpState::Established:
    case tcp::TcpState::FinWait1:
    case tcp::TcpState::FinWait2:
    case tcp::TcpState::CloseWait:
    case tcp::TcpState::Closing:
    case tcp::TcpState::LastAck:
    case tcp::TcpState::TimeWait:
      return true;
    default:
      return false;
  }
}

}  // namespace

Host::Host(HostConfig config, Output output)
    : config_(std::move(config)),
      output_(std::move(output)),
      isn_(make_secret(config_.secret) + "isn"),
      cookies_(make_secret(config_.secret) + "cookies"),
      ports_(make_secret(config_.secret) + "ports"),
      icmp_(config_.icmp),
      reassembler_(config_.reassembly),
      time_wait_(config_.max_time_wait),
      out_buffer_(kMaxDatagram) {
  // Every SYN and SYN-ACK needs an HMAC (its ISN): set OpenSSL up now, not
  // while a peer waits for the first answer.
  warm_up_crypto();
}

Host::~Host() = default;

Host::Socket* Host::find(SocketId id) {
  const auto it = sockets_.find(id);
  return it == sockets_.end() ? nullptr : it->second.get();
}

const Host::Socket* Host::find(SocketId id) const {
  const auto it = sockets_.find(id);
  return it == sockets_.end() ? nullptr : it->second.get();
}

Host::Socket* Host::find_open(SocketId id) {
  Socket* s = find(id);
  return s != nullptr && !s->app_closed ? s : nullptr;
}

const Host::Socket* Host::find_open(SocketId id) const {
  const Socket* s = find(id);
  return s != nullptr && !s->app_closed ? s : nullptr;
}

void Host::emit(std::string_view datagram) {
  ++stats_.datagrams_out;
  output_(datagram);
}

void Host::send_segment(const tcp::TcpSegment& segment, const FourTuple& tuple) {
  BufferWriter w(out_buffer_.data(), out_buffer_.size());
  if (serialize_datagram(segment, tuple, config_.ttl, w)) {
    emit(w.written());
  }
}

void Host::transmit(SocketId id, const tcp::TcpSegment& segment) {
  const Socket* s = find(id);
  TINYTCP_DCHECK(s != nullptr);
  if (s == nullptr) {
    return;
  }
  BufferWriter w(out_buffer_.data(), out_buffer_.size());
  if (!serialize_datagram(segment, s->tuple, config_.ttl, w)) {
    spdlog::error("host: segment of {} bytes does not fit a datagram", segment.payload.size());
    return;
  }
  emit(w.written());
}

uint32_t Host::timestamp_offset(const FourTuple& tuple) const {
  return isn_.timestamp_offset(tuple.local_ip.value, tuple.remote_ip.value);
}

Host::Socket& Host::make_socket(const FourTuple& tuple, SocketId listener, Instant now,
                                std::optional<tcp::Wrap32> isn) {
  const SocketId id = next_id_++;
  auto socket = std::make_unique<Socket>();
  socket->id = id;
  socket->tuple = tuple;
  socket->parent = listener;
  if (!isn) {
    isn = isn_.generate(tuple.local_ip.value, tuple.local_port, tuple.remote_ip.value,
                        tuple.remote_port, now);
  }
  socket->conn = std::make_unique<tcp::TcpConnection>(
      config_.tcp, *isn, [this, id](const tcp::TcpSegment& seg) { transmit(id, seg); },
      timestamp_offset(tuple));
  Socket& ref = *socket;
  sockets_.emplace(id, std::move(socket));
  by_tuple_.emplace(tuple, id);
  return ref;
}

void Host::release(SocketId id) {
  const auto it = sockets_.find(id);
  if (it == sockets_.end()) {
    return;
  }
  Socket& s = *it->second;
  if (s.listener) {
    listener_by_port_.erase(s.listener->port);
  } else {
    const auto t = by_tuple_.find(s.tuple);
    if (t != by_tuple_.end() && t->second == id) {
      by_tuple_.erase(t);
    }
    if (s.half_open) {
      if (Socket* parent = find(s.parent); parent && parent->listener) {
        --parent->listener->half_open;
      }
    }
  }
  sockets_.erase(it);
}

void Host::queue_event(SocketId id, SocketEvent e) {
  events_.emplace_back(id, e);
}

void Host::dispatch_events() {
  if (dispatching_) {
    return;
  }
  dispatching_ = true;
  while (!events_.empty()) {
    std::vector<std::pair<SocketId, SocketEvent>> batch;
    batch.swap(events_);
    for (const auto& [id, e] : batch) {
      if (on_event_) {
        on_event_(id, e);
      }
    }
  }
  dispatching_ = false;
}

void Host::schedule(Socket& s) {
  const auto deadline = s.conn ? s.conn->next_deadline() : std::nullopt;
  if (deadline && (!s.scheduled || *s.scheduled != *deadline)) {
    timers_.emplace(*deadline, s.id);
  }
  s.scheduled = deadline;
}

void Host::after_activity(SocketId id, Instant now) {
  Socket* s = find(id);
  if (s == nullptr || !s->conn) {
    return;
  }
  tcp::TcpConnection& c = *s->conn;
  const tcp::TcpState state = c.state();

  if (s->half_open && synchronized_or_later(state)) {
    // The passive open completed its handshake: on to the accept queue.
    s->half_open = false;
    Socket* parent = find(s->parent);
    if (parent == nullptr || !parent->listener) {
      c.abort(now);
      s->app_closed = true;
    } else {
      --parent->listener->half_open;
      if (parent->listener->ready.size() >= parent->listener->backlog) {
        stats_.drops.count(HostDrop::AcceptQueueFull);
        SPDLOG_DEBUG("host: accept queue of port {} full; resetting {}", parent->listener->port,
                     s->tuple);
        c.abort(now);
        s->app_closed = true;
      } else {
        parent->listener->ready.push_back(id);
        s->queued = true;
        ++stats_.connections_opened;
        queue_event(parent->id, SocketEvent::Acceptable);
      }
    }
  }
  if (s->parent == 0 && !s->announced_connected && synchronized_or_later(state)) {
    s->announced_connected = true;
    ++stats_.connections_opened;
    queue_event(id, SocketEvent::Connected);
  }

  stream::ByteStream& in = c.inbound();
  if (s->app_closed) {
    in.pop(in.bytes_buffered());  // nobody will read it
  } else if (s->parent == 0) {
    const bool fin = in.is_closed();
    if (in.bytes_pushed() != s->seen_pushed || fin != s->seen_fin) {
      s->seen_pushed = in.bytes_pushed();
      s->seen_fin = fin;
      queue_event(id, SocketEvent::Readable);
    }
    // Writable when the free space grew since the last announcement (or since
    // it last shrank) and is at least half of what is still queued, as
    // Linux's sk_stream_is_writeable(): a full buffer is announced once a
    // third of it is free, not after every ACK, so an app writes (and reads
    // its source) in large pieces. Everything acknowledged, any space is enough.
    const uint64_t writable = c.writable_bytes();
    if (writable > s->seen_writable) {
      if (synchronized_or_later(state) && 2 * writable >= c.outbound().bytes_buffered()) {
        queue_event(id, SocketEvent::Writable);
        s->seen_writable = writable;
      }
    } else {
      s->seen_writable = writable;
    }
  }

  if (state == tcp::TcpState::TimeWait && s->app_closed) {
    // Nobody holds it: keep only what TIME-WAIT needs.
    if (const auto tw = c.time_wait(); tw && time_wait_.insert(s->tuple, *tw)) {
      ++stats_.time_wait_entered;
    } else {
      ++stats_.time_wait_overflow;
      SPDLOG_DEBUG("host: TIME-WAIT table full; {} closes without it", s->tuple);
    }
    release(id);
    return;
  }
  if (c.closed()) {
    if (s->app_closed || (s->parent != 0 && !s->queued)) {
      release(id);
      return;
    }
    if (s->parent == 0 && !s->announced_closed) {
      s->announced_closed = true;
      queue_event(id, SocketEvent::Closed);
    }
  }
  schedule(*s);
}

void Host::receive_datagram(std::string_view datagram, Instant now) {
  ++stats_.datagrams_in;
  const auto ip = wire::parse_ipv4(datagram);
  if (!ip) {
    stats_.drops.count(HostDrop::BadIpv4);
    SPDLOG_DEBUG("host: drop datagram: {}", wire::to_string(ip.error()));
  } else {
    on_ipv4(*ip, datagram, now);
  }
  dispatch_events();
}

void Host::on_ipv4(const wire::Ipv4View& ip, std::string_view bytes, Instant now) {
  if (ip.header.dst != config_.address) {
    stats_.drops.count(HostDrop::NotForUs);
    SPDLOG_DEBUG("host: drop datagram for {}", ip.header.dst);
    return;
  }
  if (ip.header.is_fragment()) {
    const auto whole = reassembler_.add(ip, bytes, now);
    if (!whole) {
      return;  // waiting for more, or refused (the reassembler counts why)
    }
    const auto reparsed = wire::parse_ipv4(*whole);
    if (!reparsed) {
      stats_.drops.count(HostDrop::BadIpv4);
      return;
    }
    on_ipv4(*reparsed, *whole, now);
    return;
  }
  switch (ip.header.protocol) {
    case static_cast<uint8_t>(wire::IpProtocol::kTcp):
      on_tcp(ip, now);
      break;
    case static_cast<uint8_t>(wire::IpProtocol::kIcmp):
      on_icmp(ip, now);
      break;
    case static_cast<uint8_t>(wire::IpProtocol::kUdp):
      // No UDP sockets: RFC 1122 §4.1.3.1 port unreachable.
      send_error(wire::icmp::kDestinationUnreachable, wire::icmp::kPortUnreachable, ip, bytes, now);
      break;
    default:
      send_error(wire::icmp::kDestinationUnreachable, wire::icmp::kProtocolUnreachable, ip, bytes,
                 now);
      break;
  }
}

void Host::send_error(uint8_t type, uint8_t code, const wire::Ipv4View& ip, std::string_view bytes,
                      Instant now) {
  const auto datagram = icmp_.error(type, code, 0, ip, bytes, config_.address, now);
  if (!datagram.empty()) {
    ++stats_.icmp_errors_sent;
    emit(datagram);
  }
}

void Host::on_icmp(const wire::Ipv4View& ip, Instant now) {
  static_cast<void>(now);
  const auto msg = wire::parse_icmp(ip.payload);
  if (!msg) {
    stats_.drops.count(HostDrop::BadIcmp);
    return;
  }
  if (msg->type == wire::icmp::kEchoRequest && msg->code == 0) {
    const auto reply = icmp_.echo_reply(ip, *msg, config_.address);
    if (!reply.empty()) {
      ++stats_.echo_replies;
      emit(reply);
    }
    return;
  }
  if (msg->type == wire::icmp::kDestinationUnreachable &&
      msg->code == wire::icmp::kFragmentationNeeded) {
    on_fragmentation_needed(*msg, now);
    return;
  }
  stats_.drops.count(HostDrop::IcmpIgnored);
}

void Host::on_fragmentation_needed(const wire::IcmpMessage& msg, Instant now) {
  const auto quote = wire::parse_icmp_quote(msg.data);
  if (!quote || quote->header.protocol != static_cast<uint8_t>(wire::IpProtocol::kTcp) ||
      quote->header.src != config_.address || quote->data.size() < 8) {
    stats_.drops.count(HostDrop::BadIcmp);
    return;
  }
  BufferReader r(quote->data);
  const uint16_t src_port = r.u16();
  const uint16_t dst_port = r.u16();
  const tcp::Wrap32 seq{r.u32()};
  const FourTuple tuple{config_.address, src_port, quote->header.dst, dst_port};
  const auto it = by_tuple_.find(tuple);
  // RFC 1191 §4: a router that predates it sends 0; RFC 1191 §5 would guess
  // a plateau below the quoted length, Linux takes 552 (its min_pmtu).
  const uint32_t mtu = msg.next_hop_mtu();
  if (it == by_tuple_.end() || !find(it->second)->conn->on_path_mtu(mtu, seq, now)) {
    stats_.drops.count(HostDrop::IcmpStale);
    SPDLOG_DEBUG("host: frag-needed for {} seq {}: not in flight", tuple, seq);
    return;
  }
  ++stats_.path_mtu_updates;
  after_activity(it->second, now);
}

void Host::send_reset(const InboundSegment& in) {
  const auto rst = reset_for(in.segment);
  if (!rst) {
    return;
  }
  BufferWriter w(out_buffer_.data(), out_buffer_.size());
  if (serialize_datagram(*rst, in.tuple, config_.ttl, w)) {
    ++stats_.resets_sent;
    emit(w.written());
  }
}

void Host::on_tcp(const wire::Ipv4View& ip, Instant now) {
  const auto in = parse_segment(ip);
  if (!in) {
    stats_.drops.count(in.error() == InboundError::BadAddress ? HostDrop::BadAddress
                                                              : HostDrop::BadTcp);
    SPDLOG_DEBUG("host: drop TCP: {}", to_string(in.error()));
    return;
  }
  if (const auto it = by_tuple_.find(in->tuple); it != by_tuple_.end()) {
    const SocketId id = it->second;
    find(id)->conn->receive(in->segment, now);
    after_activity(id, now);
    return;
  }
  const tcp::TcpSegment& seg = in->segment;
  std::optional<tcp::Wrap32> isn;
  if (time_wait_.contains(in->tuple) && on_time_wait(*in, now, isn)) {
    return;
  }
  if (const auto l = listener_by_port_.find(in->tuple.local_port); l != listener_by_port_.end()) {
    Socket& listener = *find(l->second);
    if (seg.syn && !seg.ack && !seg.rst && !seg.fin) {
      on_listener_syn(listener, *in, now, isn);
      return;
    }
    if (seg.ack && !seg.syn && !seg.rst && on_cookie_ack(listener, *in, now)) {
      return;
    }
  }
  stats_.drops.count(HostDrop::NoConnection);
  SPDLOG_DEBUG("host: no connection for {}", in->tuple);
  send_reset(*in);
}

bool Host::on_time_wait(const InboundSegment& in, Instant now, std::optional<tcp::Wrap32>& isn) {
  tcp::TimeWait& tw = *time_wait_.find(in.tuple);
  const tcp::TimeWaitVerdict v = tcp::time_wait_receive(tw, in.segment, now, 2 * config_.tcp.msl,
                                                        config_.time_wait_ack_interval);
  switch (v.action) {
    case tcp::TimeWaitAction::Ignore:
      return true;
    case tcp::TimeWaitAction::Ack:
      ++stats_.time_wait_acks;
      send_segment(v.ack, in.tuple);
      return true;
    case tcp::TimeWaitAction::Close:
      ++stats_.time_wait_reset;
      time_wait_.erase(in.tuple);
      return true;
    case tcp::TimeWaitAction::NewConnection:
      ++stats_.time_wait_reused;
      time_wait_.erase(in.tuple);
      isn = v.isn;
      return false;
  }
  return true;
}

void Host::on_listener_syn(Socket& listener, const InboundSegment& in, Instant now,
                           std::optional<tcp::Wrap32> isn) {
  if (sockets_.size() >= config_.max_sockets) {
    stats_.drops.count(HostDrop::SocketLimit);
    return;
  }
  if (listener.listener->half_open >= listener.listener->backlog) {
    if (config_.syn_cookies) {
      send_cookie_syn_ack(*listener.listener, in, now);
    } else {
      stats_.drops.count(HostDrop::SynBacklogFull);
    }
    return;
  }
  Socket& s = make_socket(in.tuple, listener.id, now, isn);
  s.half_open = true;
  ++listener.listener->half_open;
  s.conn->listen();
  s.conn->receive(in.segment, now);
  after_activity(s.id, now);
}

namespace {

tcp::CookieTuple cookie_tuple(const FourTuple& t) {
  return tcp::CookieTuple{t.local_ip.value, t.local_port, t.remote_ip.value, t.remote_port};
}

}  // namespace

void Host::send_cookie_syn_ack(Listener& listener, const InboundSegment& in, Instant now) {
  const uint32_t tsval_now = tcp::TcpSender::timestamp_clock(timestamp_offset(in.tuple), now);
  const tcp::TcpSegment syn_ack =
      cookies_.syn_ack(config_.tcp, cookie_tuple(in.tuple), in.segment, tsval_now, now);
  BufferWriter w(out_buffer_.data(), out_buffer_.size());
  if (serialize_datagram(syn_ack, in.tuple, config_.ttl, w)) {
    ++stats_.syn_cookies_sent;
    listener.last_cookie = now;
    emit(w.written());
  }
}

void Host::expect_cookies(SocketId listener, Instant now) {
  if (Socket* s = find(listener); s != nullptr && s->listener) {
    s->listener->last_cookie = now;
  }
}

bool Host::on_cookie_ack(Socket& listener, const InboundSegment& in, Instant now) {
  // Cookies are checked only while a listener has been sending them (as
  // Linux's tcp_synq_no_recent_overflow): otherwise a blind attacker could
  // try to guess one at any time.
  const auto& last = listener.listener->last_cookie;
  if (!last || now - *last > 2 * tcp::SynCookies::kPeriod) {
    return false;
  }
  const auto syn = cookies_.rebuild_syn(cookie_tuple(in.tuple), in.segment, now);
  if (!syn) {
    stats_.drops.count(HostDrop::BadCookie);
    SPDLOG_DEBUG("host: {} from {}", tcp::to_string(syn.error()), in.tuple);
    send_reset(in);
    return true;
  }
  if (sockets_.size() >= config_.max_sockets) {
    stats_.drops.count(HostDrop::SocketLimit);
    return true;
  }
  Socket& s = make_socket(in.tuple, listener.id, now, in.segment.ackno - 1);
  s.half_open = true;
  ++listener.listener->half_open;
  ++stats_.syn_cookies_accepted;
  s.conn->open_from_cookie(*syn, now);
  s.conn->receive(in.segment, now);
  after_activity(s.id, now);
  return true;
}

void Host::tick(Instant now) {
  reassembler_.tick(now);
  time_wait_.expire(now);
  std::vector<SocketId> due;
  while (!timers_.empty() && timers_.top().first <= now) {
    const auto [when, id] = timers_.top();
    timers_.pop();
    Socket* s = find(id);
    if (s != nullptr && s->scheduled && *s->scheduled == when) {
      s->scheduled.reset();
      due.push_back(id);
    }
  }
  for (const SocketId id : due) {
    if (Socket* s = find(id); s != nullptr && s->conn) {
      s->conn->tick(now);
      after_activity(id, now);
    }
  }
  dispatch_events();
}

std::optional<Instant> Host::next_deadline() const {
  while (!timers_.empty()) {
    const auto& [when, id] = timers_.top();
    const Socket* s = find(id);
    if (s != nullptr && s->scheduled && *s->scheduled == when) {
      break;
    }
    timers_.pop();
  }
  std::optional<Instant> next;
  if (!timers_.empty()) {
    next = timers_.top().first;
  }
  if (const auto r = reassembler_.next_deadline(); r && (!next || *r < *next)) {
    next = r;
  }
  if (const auto t = time_wait_.next_deadline(); t && (!next || *t < *next)) {
    next = t;
  }
  return next;
}

Expected<SocketId, SocketError> Host::connect(wire::Ipv4Address remote, uint16_t port,
                                              Instant now) {
  if (!unicast(remote) || port == 0) {
    return make_unexpected(SocketError::BadAddress);
  }
  if (sockets_.size() >= config_.max_sockets) {
    return make_unexpected(SocketError::TooManySockets);
  }
  const auto local_port = ports_.allocate(config_.address, remote, port, [&](uint16_t candidate) {
    const FourTuple tuple{config_.address, candidate, remote, port};
    return listener_by_port_.count(candidate) > 0 || by_tuple_.count(tuple) > 0 ||
           time_wait_.contains(tuple);
  });
  if (!local_port) {
    return make_unexpected(SocketError::NoPortsFree);
  }
  Socket& s = make_socket(FourTuple{config_.address, *local_port, remote, port}, 0, now);
  const SocketId id = s.id;
  s.conn->connect(now);
  after_activity(id, now);
  dispatch_events();
  return id;
}

Expected<SocketId, SocketError> Host::listen(uint16_t port, size_t backlog) {
  if (port == 0) {
    return make_unexpected(SocketError::BadAddress);
  }
  if (listener_by_port_.count(port) > 0) {
    return make_unexpected(SocketError::AddressInUse);
  }
  if (sockets_.size() >= config_.max_sockets) {
    return make_unexpected(SocketError::TooManySockets);
  }
  const SocketId id = next_id_++;
  auto socket = std::make_unique<Socket>();
  socket->id = id;
  socket->tuple = FourTuple{config_.address, port, {}, 0};
  socket->listener = Listener{port, backlog == 0 ? config_.default_backlog : backlog, 0, {}, {}};
  sockets_.emplace(id, std::move(socket));
  listener_by_port_.emplace(port, id);
  return id;
}

std::optional<SocketId> Host::accept(SocketId listener) {
  Socket* l = find(listener);
  if (l == nullptr || !l->listener) {
    return std::nullopt;
  }
  while (!l->listener->ready.empty()) {
    const SocketId id = l->listener->ready.front();
    l->listener->ready.pop_front();
    Socket* s = find(id);
    if (s == nullptr) {
      continue;
    }
    s->queued = false;
    s->parent = 0;
    s->announced_connected = true;
    return id;
  }
  return std::nullopt;
}

std::string_view Host::peek(SocketId id) const {
  const Socket* s = find_open(id);
  if (s == nullptr || !s->conn) {
    return {};
  }
  return s->conn->inbound().peek();
}

void Host::consume(SocketId id, size_t n, Instant now) {
  Socket* s = find_open(id);
  if (s == nullptr || !s->conn) {
    return;
  }
  s->conn->inbound().pop(n);
  s->conn->tick(now);  // a window update may be due
  after_activity(id, now);
  dispatch_events();
}

size_t Host::read(SocketId id, char* out, size_t n, Instant now) {
  Socket* s = find_open(id);
  if (s == nullptr || !s->conn) {
    return 0;
  }
  stream::ByteStream& in = s->conn->inbound();
  size_t done = 0;
  while (done < n && in.bytes_buffered() > 0) {
    const auto view = in.peek();
    const size_t k = std::min(view.size(), n - done);
    std::copy_n(view.data(), k, out + done);
    in.pop(k);
    done += k;
  }
  if (done > 0) {
    s->conn->tick(now);
    after_activity(id, now);
    dispatch_events();
  }
  return done;
}

size_t Host::write(SocketId id, std::string_view data, Instant now) {
  Socket* s = find_open(id);
  if (s == nullptr || !s->conn || s->app_closed) {
    return 0;
  }
  const uint64_t room = s->conn->writable_bytes();
  const size_t n = static_cast<size_t>(s->conn->outbound().push(
      data.substr(0, static_cast<size_t>(std::min<uint64_t>(room, data.size())))));
  s->seen_writable = s->conn->writable_bytes();
  s->conn->tick(now);
  after_activity(id, now);
  dispatch_events();
  return n;
}

void Host::shutdown_write(SocketId id, Instant now) {
  Socket* s = find_open(id);
  if (s == nullptr || !s->conn) {
    return;
  }
  s->conn->shutdown_write(now);
  after_activity(id, now);
  dispatch_events();
}

void Host::close(SocketId id, Instant now) {
  Socket* s = find_open(id);
  if (s == nullptr) {
    return;
  }
  if (s->listener) {
    // Connections nobody will accept: reset them.
    std::vector<SocketId> children;
    for (const auto& [child_id, child] : sockets_) {
      if (child->parent == id) {
        children.push_back(child_id);
      }
    }
    for (const SocketId child : children) {
      abort(child, now);
    }
    release(id);
    dispatch_events();
    return;
  }
  tcp::TcpConnection& c = *s->conn;
  s->app_closed = true;
  const tcp::TcpState state = c.state();
  if (c.inbound().bytes_buffered() > 0 || state == tcp::TcpState::SynSent ||
      state == tcp::TcpState::SynReceived || state == tcp::TcpState::Listen) {
    // RFC 2525 §2.17: closing with unread data resets the connection.
    c.abort(now);
  } else if (!c.closed()) {
    c.orphan(now);
    c.shutdown_write(now);
  }
  after_activity(id, now);
  dispatch_events();
}

void Host::abort(SocketId id, Instant now) {
  Socket* s = find(id);
  if (s == nullptr) {
    return;
  }
  if (s->conn && !s->conn->closed()) {
    s->conn->abort(now);
  }
  release(id);
  dispatch_events();
}

std::optional<SocketInfo> Host::info(SocketId id) const {
  const Socket* s = find_open(id);
  if (s == nullptr) {
    return std::nullopt;
  }
  SocketInfo out;
  out.tuple = s->tuple;
  out.listener = s->listener.has_value();
  if (s->conn) {
    const tcp::TcpConnection& c = *s->conn;
    out.state = c.state();
    out.close_reason = c.close_reason();
    out.readable_bytes = c.inbound().bytes_buffered();
    out.writable_bytes = c.writable_bytes();
    out.peer_finished = c.inbound().is_finished();
  } else {
    out.state = tcp::TcpState::Listen;
  }
  return out;
}

const tcp::TcpConnection* Host::connection(SocketId id) const {
  const Socket* s = find_open(id);
  return s == nullptr ? nullptr : s->conn.get();
}

void Host::set_trace(SocketId id, tcp::TcpSender::Trace trace) {
  if (Socket* s = find(id); s != nullptr && s->conn) {
    s->conn->set_trace(std::move(trace));
  }
}

}  // namespace tinytcp::stack
