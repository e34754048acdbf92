#include "runtime/peer_runtime.hh"

#include <algorithm>
#include <stdexcept>

#include "io/ack_coalescer.hh"
#include "util/check.hh"

namespace tinytcp::runtime {

namespace {

// Datagrams read per readiness callback before the loop looks at timers.
constexpr size_t kMaxReceivePerPass = 1024;

bool operator<(const stack::PeerKey& a, const stack::PeerKey& b) {
  return a.address != b.address ? a.address < b.address : a.port < b.port;
}

constexpr size_t kTagBytes = 6;

void tag(std::string& out, const stack::PeerKey& key, std::string_view datagram) {
  out.resize(kTagBytes + datagram.size());
  for (size_t i = 0; i < 4; ++i) {
    out[i] = static_cast<char>(key.address >> (24 - 8 * i));
  }
  out[4] = static_cast<char>(key.port >> 8);
  out[5] = static_cast<char>(key.port);
  std::copy(datagram.begin(), datagram.end(), out.begin() + kTagBytes);
}

stack::PeerKey untag(std::string_view tagged) {
  const auto byte = [&](size_t i) {
    return static_cast<uint32_t>(static_cast<uint8_t>(tagged[i]));
  };
  return stack::PeerKey{byte(0) << 24 | byte(1) << 16 | byte(2) << 8 | byte(3),
                        static_cast<uint16_t>(byte(4) << 8 | byte(5))};
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
        const stack::PeerKey key{from.address, from.port};
        if (impair_in_) {
          tag(tagged_, key, packet);
          impair_in_->push(tagged_, now);
          return;
        }
        if (pcap_) {
          pcap_->write(packet);
        }
        peers_.receive(key, packet, now);
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
      peers_.receive(untag(tagged), tagged.substr(kTagBytes), now);
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
        const auto key = untag(tagged);
        views_.push_back(tagged.substr(kTagBytes));
        endpoints_.push_back(io::UdpEndpoint{key.address, key.port});
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
      refused_.emplace_back(stack::PeerKey{endpoints_[i].address, endpoints_[i].port},
                            std::string(packet));
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
    endpoints_.insert(endpoints_.end(), count,
                      io::UdpEndpoint{queued_[start].to.address, queued_[start].to.port});
    start = end;
  }
  queued_.clear();
  batch_bytes_ = 0;
  if (impair_out_) {
    const Instant now = loop_.now();
    for (size_t i = 0; i < views_.size(); ++i) {
      tag(tagged_, stack::PeerKey{endpoints_[i].address, endpoints_[i].port}, views_[i]);
      impair_out_->push(tagged_, now);
    }
    // Outbound only: flush() also runs inside a Host's output (a full batch).
    release_outbound(now);
    return;
  }
  send_views();
}

}  // namespace tinytcp::runtime
