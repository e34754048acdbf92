#include "session/output_queue.hh"

#include <algorithm>

namespace tinytcp::session {

namespace {

// Sent own bytes are dropped from the front once this many have gathered.
constexpr size_t kCompactAt = 16 * 1024;

}  // namespace

void OutputQueue::push_frame(FrameType type, std::string_view body) {
  const size_t before = bytes_.size();
  append_frame(bytes_, type, body);
  const size_t n = bytes_.size() - before;
  if (!pieces_.empty() && !pieces_.back().data) {
    pieces_.back().length += n;
  } else {
    pieces_.push_back(Piece{false, 0, n});
  }
  size_ += n;
}

void OutputQueue::push_data(uint64_t position, size_t length) {
  append_frame_header(bytes_, FrameType::Data, length);
  if (!pieces_.empty() && !pieces_.back().data) {
    pieces_.back().length += kFrameHeaderBytes;
  } else {
    pieces_.push_back(Piece{false, 0, kFrameHeaderBytes});
  }
  pieces_.push_back(Piece{true, position, length});
  size_ += kFrameHeaderBytes + length;
}

std::string_view OutputQueue::view(const SessionSender& sender, const Piece& p,
                                   size_t offset) const {
  if (p.data) {
    return sender.view_at(p.at, p.length);  // shorter at the ring's wrap point
  }
  return std::string_view(bytes_).substr(offset, p.length);
}

std::string_view OutputQueue::front(const SessionSender& sender) const {
  return pieces_.empty() ? std::string_view() : view(sender, pieces_.front(), bytes_pos_);
}

size_t OutputQueue::pieces(const SessionSender& sender, std::string_view* out, size_t max) const {
  size_t n = 0;
  size_t offset = bytes_pos_;
  for (const Piece& p : pieces_) {
    if (n == max) {
      break;
    }
    const std::string_view v = view(sender, p, offset);
    if (!p.data) {
      offset += p.length;
    }
    if (v.empty()) {
      break;
    }
    out[n++] = v;
    if (v.size() < p.length) {
      break;  // the rest of this body lies past the wrap: the next call
    }
  }
  return n;
}

void OutputQueue::consume(size_t n) {
  while (n > 0 && !pieces_.empty()) {
    Piece& p = pieces_.front();
    const size_t take = std::min(n, p.length);
    if (p.data) {
      p.at += take;
    } else {
      bytes_pos_ += take;
    }
    p.length -= take;
    size_ -= take;
    n -= take;
    if (p.length == 0) {
      pieces_.pop_front();
    }
  }
  if (bytes_pos_ == bytes_.size()) {
    bytes_.clear();
    bytes_pos_ = 0;
  } else if (bytes_pos_ >= kCompactAt) {
    bytes_.erase(0, bytes_pos_);
    bytes_pos_ = 0;
  }
}

void OutputQueue::clear() {
  bytes_.clear();
  bytes_pos_ = 0;
  pieces_.clear();
  size_ = 0;
}

std::optional<uint64_t> OutputQueue::first_unsent_data() const {
  for (const Piece& p : pieces_) {
    if (p.data) {
      return p.at;
    }
  }
  return std::nullopt;
}

}  // namespace tinytcp::session
