#include "net/ipv6_reassembler.hh"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "util/buffer.hh"
#include "util/check.hh"
#include "wire/icmpv6.hh"

namespace tinytcp::net {
namespace {

constexpr size_t kMaxPayloadLength = 65535;

// The fixed header of `datagram` followed by its payload's first `length` bytes.
void copy_front(const wire::Ipv6View& datagram, size_t length, std::string& out) {
  out.resize(wire::Ipv6Header::kSize);
  BufferWriter w(out.data(), out.size());
  serialize(datagram.header, w);
  out.append(datagram.payload.substr(0, length));
}

// Sets the payload length and the Next Header field at `field` of a datagram
// in `bytes` that has lost its Fragment header.
void fix_header(std::string& bytes, size_t field, uint8_t next_header) {
  const size_t payload_length = bytes.size() - wire::Ipv6Header::kSize;
  bytes[4] = static_cast<char>(payload_length >> 8);
  bytes[5] = static_cast<char>(payload_length);
  bytes[field] = static_cast<char>(next_header);
}

}  // namespace

const char* to_string(Ipv6ReassemblyDrop d) {
  switch (d) {
    case Ipv6ReassemblyDrop::TooManyDatagrams:
      return "too many datagrams in reassembly";
    case Ipv6ReassemblyDrop::OutOfMemory:
      return "reassembly memory exhausted";
    case Ipv6ReassemblyDrop::TooManyFragments:
      return "too many fragments";
    case Ipv6ReassemblyDrop::TooBig:
      return "reassembled payload over 65535 bytes";
    case Ipv6ReassemblyDrop::BadLength:
      return "non-last fragment empty or not a multiple of 8 bytes";
    case Ipv6ReassemblyDrop::IncompleteChain:
      return "first fragment without the whole header chain";
    case Ipv6ReassemblyDrop::Overlap:
      return "overlapping fragment";
    case Ipv6ReassemblyDrop::Abandoned:
      return "fragment of a datagram dropped for overlap";
    case Ipv6ReassemblyDrop::Inconsistent:
      return "fragment inconsistent with the datagram's end";
    case Ipv6ReassemblyDrop::Duplicate:
      return "duplicate fragment";
    case Ipv6ReassemblyDrop::Timeout:
      return "reassembly timeout";
    case Ipv6ReassemblyDrop::kCount:
      break;
  }
  return "?";
}

Ipv6Reassembler::Outcome Ipv6Reassembler::drop(Ipv6ReassemblyDrop why) {
  drops_.count(why);
  SPDLOG_DEBUG("ipv6 reassembly: drop: {}", to_string(why));
  return Outcome{std::nullopt, why};
}

void Ipv6Reassembler::erase(size_t i) {
  bytes_ -= entries_[i].data.size() + entries_[i].head.size();
  entries_[i] = std::move(entries_.back());
  entries_.pop_back();
}

void Ipv6Reassembler::kill(size_t i) {
  Entry& e = entries_[i];
  bytes_ -= e.data.size() + e.head.size();
  e.dead = true;
  std::string().swap(e.data);
  std::string().swap(e.head);
  e.ranges.clear();
  e.ranges.shrink_to_fit();
}

Ipv6Reassembler::Outcome Ipv6Reassembler::atomic(const wire::Ipv6View& datagram,
                                                 const wire::Ipv6Chain& chain) {
  // RFC 6946 §4: processed in isolation from any other fragments.
  copy_front(datagram, chain.fragment_header_offset, out_);
  out_.append(datagram.payload.substr(chain.offset));
  fix_header(out_, chain.next_header_field, chain.fragment->next_header);
  ++atomic_;
  return Outcome{std::string_view(out_), std::nullopt};
}

Ipv6Reassembler::Outcome Ipv6Reassembler::add(const wire::Ipv6View& datagram,
                                              const wire::Ipv6Chain& chain, Instant now) {
  TINYTCP_DCHECK(chain.fragment.has_value());
  if (!chain.fragment) {
    return Outcome{};
  }
  tick(now);
  const wire::Ipv6FragmentHeader& f = *chain.fragment;
  if (f.is_atomic()) {
    return atomic(datagram, chain);
  }
  const std::string_view piece = datagram.payload.substr(chain.offset);
  if (f.more_fragments && (piece.empty() || piece.size() % 8 != 0)) {
    return drop(Ipv6ReassemblyDrop::BadLength);
  }
  const uint32_t begin = f.offset;
  const uint32_t end = begin + static_cast<uint32_t>(piece.size());
  if (chain.fragment_header_offset + end > kMaxPayloadLength) {
    return drop(Ipv6ReassemblyDrop::TooBig);
  }
  const Key key{datagram.header.src, datagram.header.dst, f.identification};
  size_t i = 0;
  while (i < entries_.size() && !(entries_[i].key == key)) {
    ++i;
  }
  const bool found = i < entries_.size();
  if (found && entries_[i].dead) {
    return drop(Ipv6ReassemblyDrop::Abandoned);
  }
  if (begin == 0) {
    // RFC 7112 §5: the first fragment holds every header up to and including
    // the upper-layer header. Other chain errors show after reassembly.
    const auto rest = wire::continue_ipv6_chain(chain, datagram.payload);
    const bool incomplete =
        rest ? rest->fragment.has_value() || datagram.payload.size() - rest->offset <
                                                 wire::ipv6_upper_layer_min_size(rest->protocol)
             : rest.error().error == wire::Ipv6ChainError::Truncated;
    if (incomplete) {
      if (found) {
        erase(i);
      }
      return drop(Ipv6ReassemblyDrop::IncompleteChain);
    }
  }
  if (!found) {
    if (entries_.size() >= config_.max_datagrams) {
      return drop(Ipv6ReassemblyDrop::TooManyDatagrams);
    }
    entries_.emplace_back();
    entries_.back().key = key;
    entries_.back().started = now;
  }
  Entry& e = entries_[i];
  const bool last = !f.more_fragments;
  const uint32_t held_end = e.ranges.empty() ? 0 : e.ranges.back().second;
  if ((e.end && (end > *e.end || (last && end != *e.end))) || (last && end < held_end)) {
    erase(i);
    return drop(Ipv6ReassemblyDrop::Inconsistent);
  }
  const auto pos = std::lower_bound(e.ranges.begin(), e.ranges.end(), std::make_pair(begin, end));
  if (pos != e.ranges.end() && pos->first == begin && pos->second == end) {
    return drop(Ipv6ReassemblyDrop::Duplicate);
  }
  if ((pos != e.ranges.end() && pos->first < end) ||
      (pos != e.ranges.begin() && std::prev(pos)->second > begin)) {
    kill(i);
    return drop(Ipv6ReassemblyDrop::Overlap);
  }
  if (e.ranges.size() >= config_.max_fragments) {
    erase(i);
    return drop(Ipv6ReassemblyDrop::TooManyFragments);
  }
  const size_t head_size = wire::Ipv6Header::kSize + chain.offset;
  const size_t grow =
      (end > e.data.size() ? end - e.data.size() : 0) + (begin == 0 ? head_size : 0);
  if (bytes_ + grow > config_.max_bytes) {
    erase(i);
    return drop(Ipv6ReassemblyDrop::OutOfMemory);
  }
  bytes_ += grow;
  if (end > e.data.size()) {
    e.data.resize(end);
  }
  std::copy(piece.begin(), piece.end(), e.data.begin() + begin);
  e.ranges.insert(pos, {begin, end});
  if (begin == 0) {
    // The per-fragment headers and the Fragment header itself (for a quote).
    copy_front(datagram, chain.offset, e.head);
    e.next_header_field = chain.next_header_field;
  }
  if (last) {
    e.end = end;
  }
  if (!e.end || e.head.empty()) {
    return Outcome{};
  }
  uint32_t covered = 0;
  for (const auto& r : e.ranges) {
    if (r.first != covered) {
      return Outcome{};
    }
    covered = r.second;
  }
  if (covered != *e.end) {
    return Outcome{};
  }
  // RFC 8200 §4.5: the per-fragment headers of the offset-0 fragment, the
  // Next Header of its Fragment header, then the fragmentable part.
  const size_t fragment_header = e.head.size() - wire::Ipv6FragmentHeader::kSize;
  const auto next_header = static_cast<uint8_t>(e.head[fragment_header]);
  if (fragment_header - wire::Ipv6Header::kSize + *e.end > kMaxPayloadLength) {
    erase(i);
    return drop(Ipv6ReassemblyDrop::TooBig);
  }
  out_.assign(e.head, 0, fragment_header);
  out_.append(e.data, 0, *e.end);
  fix_header(out_, e.next_header_field, next_header);
  erase(i);
  ++reassembled_;
  return Outcome{std::string_view(out_), std::nullopt};
}

void Ipv6Reassembler::tick(Instant now, const TimeoutSink& on_timeout) {
  for (size_t i = 0; i < entries_.size();) {
    Entry& e = entries_[i];
    if (e.started + config_.timeout > now) {
      ++i;
      continue;
    }
    if (!e.dead) {
      drops_.count(Ipv6ReassemblyDrop::Timeout);
      SPDLOG_DEBUG("ipv6 reassembly: drop: {}", to_string(Ipv6ReassemblyDrop::Timeout));
      // §4.5: Time Exceeded only if the offset-0 fragment arrived.
      if (on_timeout && !e.head.empty()) {
        out_.assign(e.head);
        out_.append(e.data, 0, e.ranges.front().second);
        on_timeout(std::string_view(out_).substr(0, wire::icmpv6::kMaxQuote));
      }
    }
    erase(i);
  }
}

std::optional<Instant> Ipv6Reassembler::next_deadline() const {
  std::optional<Instant> earliest;
  for (const auto& e : entries_) {
    const Instant t = e.started + config_.timeout;
    if (!earliest || t < *earliest) {
      earliest = t;
    }
  }
  return earliest;
}

}  // namespace tinytcp::net
