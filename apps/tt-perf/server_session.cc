#include "tt-perf/server_session.hh"

#include <algorithm>
#include <string_view>
#include <utility>

namespace tinytcp::apps {

namespace {

// What replies are made of.
const std::string kFiller(64 * 1024, 'r');

}  // namespace

ServerSession::~ServerSession() {
  if (!done_ && stream_) {
    stream_->abort();
  }
}

void ServerSession::fail(SessionResult& result, std::string why) {
  result.error = std::move(why);
  result.finished = true;
  stream_->abort();
  done_ = true;
}

void ServerSession::on_input(std::string_view in) {
  if (!header_) {
    const size_t take = std::min(in.size(), PerfHeader::kSize - head_.size());
    head_.append(in.substr(0, take));
    in.remove_prefix(take);
    const auto parsed = parse_perf_header(head_);
    if (!parsed) {
      if (parsed.error() != PerfHeaderError::Truncated) {
        bad_header_ = to_string(parsed.error());
      }
      return;
    }
    header_ = *parsed;
  }
  bytes_in_ += in.size();
  switch (header_->mode) {
    case PerfMode::Sink:
      break;
    case PerfMode::Echo:
      out_.append(in);
      break;
    case PerfMode::Reply: {
      request_progress_ += in.size();
      while (request_progress_ >= header_->request_bytes) {
        request_progress_ -= header_->request_bytes;
        pending_reply_ += header_->reply_bytes;
      }
      break;
    }
  }
}

SessionResult ServerSession::step() {
  SessionResult result;
  if (done_) {
    result.finished = true;
    return result;
  }
  const StepOutcome s = stream_->step(PumpIo{
      [this] {
        if (out_head_ < out_.size()) {
          return std::string_view(out_).substr(out_head_);
        }
        return std::string_view(kFiller).substr(0,
                                                std::min<uint64_t>(pending_reply_, kFiller.size()));
      },
      [this](size_t n) {
        bytes_out_ += n;
        if (out_head_ == out_.size()) {
          pending_reply_ -= n;
          return;
        }
        out_head_ += n;
        if (out_head_ == out_.size()) {
          out_.clear();
          out_head_ = 0;
        }
      },
      [this](std::string_view in) { on_input(in); },
      [] { return false; },
      [this] { return !bad_header_ && queued() < kMaxQueued; },
      {},
  });
  result.progress = s.progress;
  if (bad_header_) {
    fail(result, "bad header: " + *bad_header_);
    return result;
  }
  if (s.end && s.end->result == PumpResult::PeerClosed) {
    if (!peer_closed_ && header_ && header_->mode == PerfMode::Sink) {
      out_.append(serialize_count(bytes_in_));
      result.progress = true;
    }
    peer_closed_ = true;
  } else if (s.end) {
    fail(result, s.end->error);
    return result;
  }
  if (peer_closed_ && !header_) {
    fail(result, "closed before its header");
    return result;
  }
  if (peer_closed_ && queued() == 0 && !shut_) {
    stream_->shutdown_write();
    shut_ = true;
    result.progress = true;
  }
  if (shut_ && stream_->closed()) {
    stream_->release();
    done_ = true;
    result.finished = true;
  }
  return result;
}

}  // namespace tinytcp::apps
