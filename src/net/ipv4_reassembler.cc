#include "net/ipv4_reassembler.hh"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "util/buffer.hh"

namespace tinytcp::net {

const char* to_string(ReassemblyDrop d) {
  switch (d) {
    case ReassemblyDrop::TooManyDatagrams:
      return "too many datagrams in reassembly";
    case ReassemblyDrop::OutOfMemory:
      return "reassembly memory exhausted";
    case ReassemblyDrop::TooManyFragments:
      return "too many fragments";
    case ReassemblyDrop::TooBig:
      return "reassembled datagram over 65535 bytes";
    case ReassemblyDrop::BadLength:
      return "non-last fragment not a multiple of 8 bytes";
    case ReassemblyDrop::Overlap:
      return "overlapping fragment";
    case ReassemblyDrop::Inconsistent:
      return "fragment inconsistent with the datagram's end";
    case ReassemblyDrop::Duplicate:
      return "duplicate fragment";
    case ReassemblyDrop::Timeout:
      return "reassembly timeout";
    case ReassemblyDrop::kCount:
      break;
  }
  return "?";
}

void Ipv4Reassembler::drop(ReassemblyDrop why) {
  drops_.count(why);
  SPDLOG_DEBUG("reassembly: drop: {}", to_string(why));
}

void Ipv4Reassembler::erase(size_t i) {
  bytes_ -= entries_[i].data.size() + entries_[i].header.size();
  entries_[i] = std::move(entries_.back());
  entries_.pop_back();
}

std::optional<std::string_view> Ipv4Reassembler::add(const wire::Ipv4View& fragment,
                                                     std::string_view bytes, Instant now) {
  tick(now);
  const wire::Ipv4Header& h = fragment.header;
  const Key key{h.src.value, h.dst.value, h.id, h.protocol};
  const uint32_t begin = h.fragment_offset;
  const uint32_t end = begin + static_cast<uint32_t>(fragment.payload.size());
  if (h.more_fragments && (fragment.payload.empty() || fragment.payload.size() % 8 != 0)) {
    drop(ReassemblyDrop::BadLength);
    return std::nullopt;
  }
  if (end + h.header_length > wire::Ipv4Header::kMaxTotalLength) {
    drop(ReassemblyDrop::TooBig);
    return std::nullopt;
  }
  size_t i = 0;
  while (i < entries_.size() && !(entries_[i].key == key)) {
    ++i;
  }
  if (i == entries_.size()) {
    if (entries_.size() >= config_.max_datagrams) {
      drop(ReassemblyDrop::TooManyDatagrams);
      return std::nullopt;
    }
    entries_.emplace_back();
    entries_.back().key = key;
    entries_.back().started = now;
  }
  Entry& e = entries_[i];
  // RFC 791: the last fragment fixes the length; nothing may lie past it.
  const bool last = !h.more_fragments;
  const uint32_t held_end = e.ranges.empty() ? 0 : e.ranges.back().second;
  if ((e.end && (end > *e.end || (last && end != *e.end))) || (last && end < held_end)) {
    drop(ReassemblyDrop::Inconsistent);
    erase(i);
    return std::nullopt;
  }
  // Where the new range goes, and RFC 5722's overlap test.
  const auto pos = std::lower_bound(e.ranges.begin(), e.ranges.end(), std::make_pair(begin, end));
  if (pos != e.ranges.end() && pos->first == begin && pos->second == end) {
    drop(ReassemblyDrop::Duplicate);
    return std::nullopt;
  }
  if ((pos != e.ranges.end() && pos->first < end) ||
      (pos != e.ranges.begin() && std::prev(pos)->second > begin)) {
    drop(ReassemblyDrop::Overlap);
    erase(i);
    return std::nullopt;
  }
  if (e.ranges.size() >= config_.max_fragments) {
    drop(ReassemblyDrop::TooManyFragments);
    erase(i);
    return std::nullopt;
  }
  const size_t grow =
      (end > e.data.size() ? end - e.data.size() : 0) + (begin == 0 ? h.header_length : 0);
  if (bytes_ + grow > config_.max_bytes) {
    drop(ReassemblyDrop::OutOfMemory);
    erase(i);
    return std::nullopt;
  }
  bytes_ += grow;
  if (end > e.data.size()) {
    e.data.resize(end);
  }
  std::copy(fragment.payload.begin(), fragment.payload.end(), e.data.begin() + begin);
  e.ranges.insert(pos, {begin, end});
  if (begin == 0) {
    e.header.assign(bytes.substr(0, h.header_length));
  }
  if (last) {
    e.end = end;
  }
  // Coalescing is unnecessary for the check: complete means the ranges tile
  // [0, end) without gaps.
  if (!e.end || e.header.empty()) {
    return std::nullopt;
  }
  uint32_t covered = 0;
  for (const auto& r : e.ranges) {
    if (r.first != covered) {
      return std::nullopt;
    }
    covered = r.second;
  }
  if (covered != *e.end) {
    return std::nullopt;
  }
  // The reassembled header: the first fragment's, with the whole length and
  // the fragment fields cleared, and a fresh checksum.
  out_.assign(e.header);
  out_.append(e.data, 0, *e.end);
  const uint16_t total = static_cast<uint16_t>(out_.size());
  out_[2] = static_cast<char>(total >> 8);
  out_[3] = static_cast<char>(total);
  out_[6] = static_cast<char>(out_[6] & 0x40);  // keep DF, clear MF and offset
  out_[7] = 0;
  out_[10] = 0;
  out_[11] = 0;
  const uint16_t checksum =
      wire::ipv4_header_checksum(std::string_view(out_).substr(0, e.header.size()));
  out_[10] = static_cast<char>(checksum >> 8);
  out_[11] = static_cast<char>(checksum);
  erase(i);
  ++reassembled_;
  return std::string_view(out_);
}

void Ipv4Reassembler::tick(Instant now) {
  for (size_t i = 0; i < entries_.size();) {
    if (entries_[i].started + config_.timeout <= now) {
      drop(ReassemblyDrop::Timeout);
      erase(i);
    } else {
      ++i;
    }
  }
}

std::optional<Instant> Ipv4Reassembler::next_deadline() const {
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
