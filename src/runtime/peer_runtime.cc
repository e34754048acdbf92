#include "runtime/peer_runtime.hh"

#include <algorithm>
#include <array>
#include <stdexcept>

#include "io/ack_coalescer.hh"
#include "util/check.hh"

namespace tinytcp::runtime {

namespace {

// Datagrams read per readiness callback before the loop looks at timers.
constexpr size_t kMaxReceivePerPass = 1024;

stack::PeerKey to_key(const io::UdpEndpoint& e) {
  if (e.ipv6) {
    return stack::PeerKey{wire::Ipv6Address{e.address6}, e.port};
  }
  return stack::PeerKey{wire::Ipv4Address{e.address}, e.port};
}

io::UdpEndpoint to_endpoint(const stack::PeerKey& key) {
  if (key.address.is_v6()) {
    return io::UdpEndpoint::v6(key.address.v6().bytes, key.port);
  }
  return io::UdpEndpoint{key.address.v4().value, key.port};
}

// A held datagram's peer rides in front of it: the family (4 or 6), the 16
// bytes of an IPv6 address (an IPv4 one in the first 4), the port.
constexpr size_t kTagBytes = 19;

void tag(std::string& out, const io::UdpEndpoint& to, std::string_view datagram) {
  out.resize(kTagBytes + datagram.size());
  out[0] = static_cast<char>(to.ipv6 ? 6 : 4);
  for (size_t i = 0; i < 16; ++i) {
    out[1 + i] = static_cast<char>(to.ipv6 ? to.address6[i]
                                   : i < 4 ? static_cast<uint8_t>(to.address >> (24 - 8 * i))
                                           : 0);
  }
  out[17] = static_cast<char>(to.port >> 8);
  out[18] = static_cast<char>(to.port);
  std::copy(datagram.begin(), datagram.end(), out.begin() + kTagBytes);
}

io::UdpEndpoint untag(std::string_view tagged) {
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(tagged[i]); };
  const auto port = static_cast<uint16_t>(byte(17) << 8 | byte(18));
  if (byte(0) == 6) {
    std::array<uint8_t, 16> address{};
    for (size_t i = 0; i < 16; ++i) {
      address[i] = byte(1 + i);
    }
    return io::UdpEndpoint::v6(address, port);
  }
  return io::UdpEndpoint{static_cast<uint32_t>(byte(1)) << 24 |
                             static_cast<uint32_t>(byte(2)) << 16 |
                             static_cast<uint32_t>(byte(3)) << 8 | byte(4),
                         port};
}

}  // namespace

PeerRuntime::PeerRuntime(PeerRuntimeOptions options)
    : options_(std::move(options)),
      socket_(options_.socket),
      peers_(options_.peers,
             [this](stack::PeerId, const stack::PeerKey& to, std::string_view datagram) {
               in_host_output_ = true;
               queue(to, datagram);
               in_host_output_ = false;
             }) {
  if (!options_.pcap.empty()) {
    pcap_ = std::make_unique<io::PcapWriter>(options_.pcap, io::LinkType::kRawIp);
  }
  for (const auto* config : {&options_.impair_in, &options_.impair_out}) {
    if (*config && (*config)->corrupt > 0) {
      throw std::runtime_error("impairment: corrupt is not available on a many-peer receiver");
    }
  }
  if (options_.impair_in && !options_.impair_in->is_identity()) {
    impair_in_ = std::make_unique<io::ImpairmentModel>(*options_.impair_in, options_.seed);
  }
  if (options_.impair_out && !options_.impair_out->is_identity()) {
    impair_out_ = std::make_unique<io::ImpairmentModel>(*options_.impair_out, options_.seed + 1);
  }
  if (impair_in_ || impair_out_) {
    impair_source_ = loop_.add_deadline_source(
        [this] {
          std::optional<Instant> next;
          for (const auto* m : {impair_in_.get(), impair_out_.get()}) {
            if (const auto due = m != nullptr ? m->next_deadline() : std::nullopt;
                due && (!next || *due < *next)) {
              next = due;
            }
          }
          return next;
        },
        [this](Instant now) { release_impaired(now); });
  }
  batch_.resize(kMaxBatchBytes);
  queued_.reserve(kMaxBatchDatagrams);
  loop_.add_fd(socket_.fd(), io::EventLoop::kReadable, [this](uint32_t) { on_readable(); });
  peers_source_ = loop_.add_deadline_source([this] { return peers_.next_deadline(); },
                                            [this](Instant now) { peers_.tick(now); });
  socket_.set_send_failure_handler([this](std::string_view packet) { on_refused(packet); });
  flush_source_ = loop_.add_before_wait([this] {
    flush();
    report_refused();
  });
}

PeerRuntime::~PeerRuntime() {
  flush();
  socket_.set_send_failure_handler(nullptr);
  loop_.remove_before_wait(flush_source_);
  loop_.remove_deadline_source(peers_source_);
  if (impair_source_ != 0) {
    loop_.remove_deadline_source(impair_source_);
  }
  loop_.remove_fd(socket_.fd());
}

void PeerRuntime::on_readable() {
  const Instant now = loop_.now();
  socket_.receive_batch(
      [this, now](const io::UdpEndpoint& from, std::string_view packet) {
        if (impair_in_) {
          tag(tagged_, from, packet);
          impair_in_->push(tagged_, now);
          return;
        }
        if (pcap_) {
          pcap_->write(packet);
        }
        peers_.receive(to_key(from), packet, now);
      },
      kMaxReceivePerPass);
  if (impair_in_) {
    release_impaired(now);
  }
}

void PeerRuntime::release_impaired(Instant now) {
  release_inbound(now);
  release_outbound(now);
}

void PeerRuntime::release_inbound(Instant now) {
  TINYTCP_DCHECK(!in_host_output_);
  if (impair_in_) {
    impair_in_->release(now, [this, now](std::string_view tagged) {
      if (pcap_) {
        pcap_->write(tagged.substr(kTagBytes));
      }
      peers_.receive(to_key(untag(tagged)), tagged.substr(kTagBytes), now);
    });
  }
}

void PeerRuntime::release_outbound(Instant now) {
  if (impair_out_) {
    released_.clear();
    if (impair_out_->release_into(now, released_) > 0) {
      views_.clear();
      endpoints_.clear();
      for (const auto tagged : released_) {
        views_.push_back(tagged.substr(kTagBytes));
        endpoints_.push_back(untag(tagged));
      }
      send_views();
    }
  }
}

void PeerRuntime::send_views() {
  if (pcap_) {
    for (const auto view : views_) {
      pcap_->write(view);
    }
  }
  ++stats_.batches;
  refused_cursor_ = 0;
  socket_.send_batch(views_.data(), endpoints_.data(), views_.size());
}

void PeerRuntime::on_refused(std::string_view packet) {
  if (refused_.size() >= kMaxRefused) {
    ++stats_.refused_unreported;
    return;
  }
  // The socket hands back views_ entries themselves, in order.
  for (size_t n = 0; n < views_.size(); ++n) {
    const size_t i = (refused_cursor_ + n) % views_.size();
    if (views_[i].data() == packet.data()) {
      refused_cursor_ = i + 1;
      refused_.emplace_back(to_key(endpoints_[i]), std::string(packet));
      return;
    }
  }
  ++stats_.refused_unreported;
}

void PeerRuntime::report_refused() {
  if (refused_.empty()) {
    return;
  }
  std::vector<std::pair<stack::PeerKey, std::string>> refused;
  refused.swap(refused_);
  for (const auto& [to, datagram] : refused) {
    peers_.on_send_failed(to, datagram, loop_.now());
    ++stats_.refused_resent;
  }
}

void PeerRuntime::queue(const stack::PeerKey& to, std::string_view datagram) {
  if (queued_.size() == kMaxBatchDatagrams || batch_bytes_ + datagram.size() > batch_.size()) {
    flush();
  }
  if (datagram.size() > batch_.size()) {
    return;  // never: a datagram is at most 64 KiB
  }
  std::copy(datagram.begin(), datagram.end(),
            batch_.begin() + static_cast<ptrdiff_t>(batch_bytes_));
  queued_.push_back(Queued{to, batch_bytes_, datagram.size()});
  batch_bytes_ += datagram.size();
}

void PeerRuntime::flush() {
  if (queued_.empty()) {
    return;
  }
  // Each peer's datagrams together, in the order its Host sent them: ACKs
  // are coalesced within one peer only (two peers' connections may have the
  // same inner 4-tuple), and GSO runs need one destination.
  std::stable_sort(queued_.begin(), queued_.end(),
                   [](const Queued& a, const Queued& b) { return a.to < b.to; });
  views_.clear();
  endpoints_.clear();
  stats_.datagrams += queued_.size();
  for (size_t start = 0; start < queued_.size();) {
    size_t end = start;
    const size_t first_view = views_.size();
    while (end < queued_.size() && queued_[end].to == queued_[start].to) {
      views_.emplace_back(batch_.data() + queued_[end].offset, queued_[end].size);
      ++end;
    }
    size_t count = end - start;
    if (options_.coalesce_acks) {
      const size_t kept = io::coalesce_acks(views_.data() + first_view, count);
      stats_.acks_coalesced += count - kept;
      count = kept;
      views_.resize(first_view + count);
    }
    endpoints_.insert(endpoints_.end(), count, to_endpoint(queued_[start].to));
    start = end;
  }
  queued_.clear();
  batch_bytes_ = 0;
  if (impair_out_) {
    const Instant now = loop_.now();
    for (size_t i = 0; i < views_.size(); ++i) {
      tag(tagged_, endpoints_[i], views_[i]);
      impair_out_->push(tagged_, now);
    }
    // Outbound only: flush() also runs inside a Host's output (a full batch).
    release_outbound(now);
    return;
  }
  send_views();
}

}  // namespace tinytcp::runtime
