#include "stack/host.hh"

#include <spdlog/spdlog.h>

#include "util/buffer.hh"
#include "util/check.hh"
#include "util/hash.hh"

namespace tinytcp::stack {

namespace {

constexpr size_t kMaxDatagram = 65535;

std::string make_secret(const std::string& given) {
  return given.size() >= 16 ? given : secure_random_bytes(32);
}

}  // namespace

Host::Host(HostConfig config, Output output)
    : config_(std::move(config)),
      output_(std::move(output)),
      isn_(make_secret(config_.secret) + "isn"),
      admission_(make_secret(config_.secret) + "cookies", config_.syn_cookies),
      ports_(make_secret(config_.secret) + "ports"),
      fold_(make_secret(config_.secret) + "fold"),
      ipv4_(config_),
      ipv6_(Ipv6Input::from(config_)),
      tcp6_(Ipv6Input::tcp_config(config_.tcp)),
      time_wait_(config_.max_time_wait, 2 * config_.tcp.msl, config_.time_wait_ack_interval),
      out_buffer_(new char[kMaxDatagram]) {
  // connect() needs an HMAC (its ephemeral port, RFC 6056): set OpenSSL up
  // now, not while a peer waits for the first answer.
  warm_up_crypto();
}

Host::~Host() = default;

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
  BufferWriter w(out_buffer_.get(), kMaxDatagram);
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
  BufferWriter w(out_buffer_.get(), kMaxDatagram);
  if (!serialize_datagram(segment, s->tuple, config_.ttl, w)) {
    spdlog::error("host: segment of {} bytes does not fit a datagram", segment.payload.size());
    return;
  }
  emit(w.written());
}

uint32_t Host::timestamp_offset(const FourTuple& tuple) const {
  return isn_.timestamp_offset(fold_(tuple.local_ip), fold_(tuple.remote_ip));
}

Host::Socket& Host::make_socket(const FourTuple& tuple, SocketId listener, Instant now,
                                std::optional<tcp::Wrap32> isn) {
  const SocketId id = sockets_.allocate_id();
  auto socket = std::make_unique<Socket>();
  socket->id = id;
  socket->tuple = tuple;
  socket->parent = listener;
  if (!isn) {
    isn = isn_.generate(fold_(tuple.local_ip), tuple.local_port, fold_(tuple.remote_ip),
                        tuple.remote_port, now);
  }
  socket->conn = std::make_unique<tcp::TcpConnection>(
      tcp_config(tuple), *isn, [this, id](const tcp::TcpSegment& seg) { transmit(id, seg); },
      timestamp_offset(tuple));
  return sockets_.add(std::move(socket));
}

void Host::after_activity(SocketId id, Instant now) {
  Socket* s = find(id);
  if (s == nullptr || !s->conn) {
    return;
  }
  tcp::TcpConnection& c = *s->conn;
  const tcp::TcpState state = c.state();

  if (s->half_open && tcp::established_or_later(state)) {
    // The passive open completed its handshake: on to the accept queue.
    s->half_open = false;
    Socket* parent = find(s->parent);
    if (parent == nullptr || !parent->listener) {
      c.abort(now);
      s->app_closed = true;
    } else {
      if (!ListenerAdmission::on_handshake_complete(*parent->listener, id)) {
        stats_.drops.count(HostDrop::AcceptQueueFull);
        SPDLOG_DEBUG("host: accept queue of port {} full; resetting {}", parent->listener->port,
                     s->tuple);
        c.abort(now);
        s->app_closed = true;
      } else {
        s->queued = true;
        ++stats_.connections_opened;
        events_.queue(parent->id, SocketEvent::Acceptable);
      }
    }
  }
  if (s->parent == 0 && !s->announced_connected && tcp::established_or_later(state)) {
    s->announced_connected = true;
    ++stats_.connections_opened;
    events_.queue(id, SocketEvent::Connected);
  }

  stream::ByteStream& in = c.inbound();
  if (s->app_closed) {
    in.pop(in.bytes_buffered());  // nobody will read it
  } else if (s->parent == 0) {
    events_.announce_io(*s, c, tcp::established_or_later(state));
  }

  if (state == tcp::TcpState::TimeWait && s->app_closed) {
    // Nobody holds it: keep only what TIME-WAIT needs.
    time_wait_.enter(s->tuple, c.time_wait(), stats_);
    sockets_.release(id);
    return;
  }
  if (c.closed()) {
    if (s->app_closed || (s->parent != 0 && !s->queued)) {
      sockets_.release(id);
      return;
    }
    if (s->parent == 0 && !s->announced_closed) {
      s->announced_closed = true;
      events_.queue(id, SocketEvent::Closed);
    }
  }
  timers_.schedule(*s, c.next_deadline());
}

void Host::receive_datagram(std::string_view datagram, Instant now, bool link_multicast) {
  now = advance(now);
  ++stats_.datagrams_in;
  if (ipv6_ && !datagram.empty() && (static_cast<uint8_t>(datagram[0]) >> 4) == 6) {
    apply(ipv6_->receive(datagram, now, link_multicast), now);
  } else {
    apply(ipv4_.receive(datagram, now, link_multicast), now);
  }
  events_.dispatch();
}

void Host::apply(const IpInputOutcome& out, Instant now) {
  if (out.drop) {
    stats_.drops.count(*out.drop);
  }
  if (!out.reply.empty()) {
    ++(out.reply_is_error ? stats_.icmp_errors_sent : stats_.echo_replies);
    emit(out.reply);
  }
  if (out.segment) {
    on_segment(*out.segment, now);
  } else if (out.path_mtu) {
    on_path_mtu(*out.path_mtu, now);
  }
}

void Host::on_path_mtu(const FragmentationNeeded& frag, Instant now) {
  const auto id = sockets_.connection(frag.tuple);
  if (!id || !find(*id)->conn->on_path_mtu(frag.mtu, frag.seqno, now)) {
    stats_.drops.count(HostDrop::IcmpStale);
    SPDLOG_DEBUG("host: path MTU for {} seq {}: not in flight", frag.tuple, frag.seqno);
    return;
  }
  ++stats_.path_mtu_updates;
  after_activity(*id, now);
}

void Host::send_reset(const InboundSegment& in) {
  const auto rst = reset_for(in.segment);
  if (!rst) {
    return;
  }
  BufferWriter w(out_buffer_.get(), kMaxDatagram);
  if (serialize_datagram(*rst, in.tuple, config_.ttl, w)) {
    ++stats_.resets_sent;
    emit(w.written());
  }
}

void Host::on_segment(const InboundSegment& in, Instant now) {
  if (const auto id = sockets_.connection(in.tuple)) {
    tcp::TcpConnection& c = *find(*id)->conn;
    if (holding_acks_ && !c.acks_held()) {
      c.hold_acks();
      held_acks_.push_back(*id);
    }
    c.receive(in.segment, now);
    after_activity(*id, now);
    return;
  }
  const tcp::TcpSegment& seg = in.segment;
  std::optional<tcp::Wrap32> isn;
  if (time_wait_.contains(in.tuple)) {
    const TimeWaitHandler::Answer answer = time_wait_.receive(in, now, stats_);
    if (answer.ack) {
      send_segment(*answer.ack, in.tuple);
    }
    if (answer.taken) {
      return;
    }
    isn = answer.isn;
  }
  if (Socket* l = sockets_.listener(in.tuple.local_port)) {
    Socket& listener = *l;
    if (seg.syn && !seg.ack && !seg.rst && !seg.fin) {
      on_listener_syn(listener, in, now, isn);
      return;
    }
    if (seg.ack && !seg.syn && !seg.rst && on_cookie_ack(listener, in, now)) {
      return;
    }
  }
  stats_.drops.count(HostDrop::NoConnection);
  SPDLOG_DEBUG("host: no connection for {}", in.tuple);
  send_reset(in);
}

void Host::on_listener_syn(Socket& listener, const InboundSegment& in, Instant now,
                           std::optional<tcp::Wrap32> isn) {
  if (sockets_.size() >= config_.max_sockets) {
    stats_.drops.count(HostDrop::SocketLimit);
    return;
  }
  switch (admission_.on_syn(*listener.listener)) {
    case ListenerAdmission::SynVerdict::Cookie:
      send_cookie_syn_ack(*listener.listener, in, now);
      return;
    case ListenerAdmission::SynVerdict::Drop:
      stats_.drops.count(HostDrop::SynBacklogFull);
      return;
    case ListenerAdmission::SynVerdict::Open:
      break;
  }
  Socket& s = make_socket(in.tuple, listener.id, now, isn);
  s.half_open = true;
  ListenerAdmission::add_half_open(*listener.listener);
  s.conn->listen();
  s.conn->receive(in.segment, now);
  after_activity(s.id, now);
}

void Host::send_cookie_syn_ack(ListenQueue& listener, const InboundSegment& in, Instant now) {
  const uint32_t tsval_now = tcp::TcpSender::timestamp_clock(timestamp_offset(in.tuple), now);
  const tcp::TcpSegment syn_ack =
      admission_.cookie_syn_ack(tcp_config(in.tuple), in, tsval_now, now);
  BufferWriter w(out_buffer_.get(), kMaxDatagram);
  if (serialize_datagram(syn_ack, in.tuple, config_.ttl, w)) {
    ++stats_.syn_cookies_sent;
    ListenerAdmission::cookies_sent(listener, now);
    emit(w.written());
  }
}

void Host::expect_cookies(SocketId listener, Instant now) {
  now = advance(now);
  if (Socket* s = find(listener); s != nullptr && s->listener) {
    ListenerAdmission::cookies_sent(*s->listener, now);
  }
}

bool Host::on_cookie_ack(Socket& listener, const InboundSegment& in, Instant now) {
  const auto syn = admission_.check_cookie(*listener.listener, in, now);
  if (!syn) {
    return false;
  }
  if (!*syn) {
    stats_.drops.count(HostDrop::BadCookie);
    SPDLOG_DEBUG("host: {} from {}", tcp::to_string(syn->error()), in.tuple);
    send_reset(in);
    return true;
  }
  if (sockets_.size() >= config_.max_sockets) {
    stats_.drops.count(HostDrop::SocketLimit);
    return true;
  }
  Socket& s = make_socket(in.tuple, listener.id, now, in.segment.ackno - 1);
  s.half_open = true;
  ListenerAdmission::add_half_open(*listener.listener);
  ++stats_.syn_cookies_accepted;
  s.conn->open_from_cookie(**syn, now);
  s.conn->receive(in.segment, now);
  after_activity(s.id, now);
  return true;
}

void Host::tick(Instant now) {
  now = advance(now);
  ipv4_.tick(now);
  if (ipv6_) {
    ipv6_->tick(now, [this](std::string_view datagram) {
      ++stats_.icmp_errors_sent;
      emit(datagram);
    });
  }
  time_wait_.expire(now);
  for (const SocketId id : timers_.take_due(now, sockets_)) {
    if (Socket* s = find(id); s != nullptr && s->conn) {
      s->conn->tick(now);
      after_activity(id, now);
    }
  }
  events_.dispatch();
}

void Host::on_send_failed(std::string_view datagram, Instant now) {
  now = advance(now);
  ++stats_.send_failures;
  const auto parsed = parse_datagram(datagram);
  if (!parsed) {
    return;  // not TCP: ICMP, or nothing to resend
  }
  // We wrote it: its source is our side.
  const auto id = sockets_.connection(parsed->tuple.reversed());
  if (!id) {
    return;
  }
  Socket* s = find(*id);
  if (s->conn->on_send_failed(parsed->segment.seqno, now)) {
    ++stats_.send_failures_resent;
    timers_.schedule(*s, s->conn->next_deadline());
  }
}

void Host::release_acks(Instant now) {
  now = advance(now);
  holding_acks_ = false;
  for (const SocketId id : held_acks_) {
    Socket* s = find(id);
    if (s != nullptr && s->conn && s->conn->acks_held()) {
      s->conn->release_acks(now);
      after_activity(id, now);
    }
  }
  held_acks_.clear();
  events_.dispatch();
}

std::optional<Instant> Host::next_deadline() const {
  std::optional<Instant> next = timers_.next_deadline(sockets_);
  for (const auto t : {ipv4_.next_deadline(), time_wait_.next_deadline(),
                       ipv6_ ? ipv6_->next_deadline() : std::nullopt}) {
    if (t && (!next || *t < *next)) {
      next = t;
    }
  }
  return next;
}

Expected<SocketId, SocketError> Host::connect(const IpAddress& remote, uint16_t port, Instant now) {
  now = advance(now);
  if (!remote.is_unicast() || port == 0) {
    return make_unexpected(SocketError::BadAddress);
  }
  if (remote.is_v6() && !config_.ipv6) {
    return make_unexpected(SocketError::NoAddressOfFamily);
  }
  if (sockets_.size() >= config_.max_sockets) {
    return make_unexpected(SocketError::TooManySockets);
  }
  const IpAddress local = remote.is_v6() ? IpAddress(*config_.ipv6) : IpAddress(config_.address);
  const auto local_port = ports_.allocate(local, remote, port, [&](uint16_t candidate) {
    const FourTuple tuple{local, candidate, remote, port};
    return sockets_.listening(candidate) || sockets_.connection(tuple) ||
           time_wait_.contains(tuple);
  });
  if (!local_port) {
    return make_unexpected(SocketError::NoPortsFree);
  }
  Socket& s = make_socket(FourTuple{local, *local_port, remote, port}, 0, now);
  const SocketId id = s.id;
  s.conn->connect(now);
  after_activity(id, now);
  events_.dispatch();
  return id;
}

Expected<SocketId, SocketError> Host::listen(uint16_t port, size_t backlog) {
  if (port == 0) {
    return make_unexpected(SocketError::BadAddress);
  }
  if (sockets_.listening(port)) {
    return make_unexpected(SocketError::AddressInUse);
  }
  if (sockets_.size() >= config_.max_sockets) {
    return make_unexpected(SocketError::TooManySockets);
  }
  const SocketId id = sockets_.allocate_id();
  auto socket = std::make_unique<Socket>();
  socket->id = id;
  socket->tuple = FourTuple{config_.address, port, {}, 0};
  socket->listener = ListenQueue{port, backlog == 0 ? config_.default_backlog : backlog, 0, {}, {}};
  sockets_.add(std::move(socket));
  return id;
}

std::string_view Host::peek(SocketId id) const {
  const Socket* s = find_open(id);
  if (s == nullptr || !s->conn) {
    return {};
  }
  return s->conn->inbound().peek();
}

void Host::consume(SocketId id, size_t n, Instant now) {
  now = advance(now);
  Socket* s = find_open(id);
  if (s == nullptr || !s->conn) {
    return;
  }
  s->conn->inbound().pop(n);
  s->conn->tick(now);  // a window update may be due
  after_activity(id, now);
  events_.dispatch();
}

size_t Host::read(SocketId id, char* out, size_t n, Instant now) {
  now = advance(now);
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
    events_.dispatch();
  }
  return done;
}

size_t Host::write(SocketId id, std::string_view data, Instant now) {
  now = advance(now);
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
  events_.dispatch();
  return n;
}

stream::WriteRegion Host::write_region(SocketId id, size_t max) {
  Socket* s = find_open(id);
  if (s == nullptr || !s->conn || s->app_closed) {
    return {};
  }
  return s->conn->outbound().write_region(std::min<uint64_t>(s->conn->writable_bytes(), max));
}

size_t Host::commit_write(SocketId id, size_t n, Instant now) {
  now = advance(now);
  Socket* s = find_open(id);
  if (s == nullptr || !s->conn || s->app_closed || !s->conn->outbound().commit_region(n)) {
    return 0;
  }
  s->seen_writable = s->conn->writable_bytes();
  s->conn->tick(now);
  after_activity(id, now);
  events_.dispatch();
  return n;
}

void Host::shutdown_write(SocketId id, Instant now) {
  now = advance(now);
  Socket* s = find_open(id);
  if (s == nullptr || !s->conn) {
    return;
  }
  s->conn->shutdown_write(now);
  after_activity(id, now);
  events_.dispatch();
}

void Host::close(SocketId id, Instant now) {
  now = advance(now);
  Socket* s = find_open(id);
  if (s == nullptr) {
    return;
  }
  if (s->listener) {
    // Connections nobody will accept: reset them.
    for (const SocketId child : sockets_.children(id)) {
      abort(child, now);
    }
    sockets_.release(id);
    events_.dispatch();
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
  events_.dispatch();
}

void Host::abort(SocketId id, Instant now) {
  now = advance(now);
  Socket* s = find(id);
  if (s == nullptr) {
    return;
  }
  if (s->conn && !s->conn->closed()) {
    s->conn->abort(now);
  }
  sockets_.release(id);
  events_.dispatch();
}

std::optional<SocketInfo> Host::info(SocketId id) const {
  const Socket* s = find_open(id);
  return s == nullptr ? std::nullopt : std::optional<SocketInfo>(socket_info(*s));
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
