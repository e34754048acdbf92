#include "tt-perf/perf_channel.hh"

#include <utility>

namespace tinytcp::apps {

namespace {

// Consumed bytes at the front of the outbox are dropped once there are this many.
constexpr size_t kCompactAt = 1 << 20;

}  // namespace

PerfChannel::PerfChannel(std::unique_ptr<StreamEnd> stream, const PerfHeader& header,
                         OnInput on_input)
    : stream_(std::move(stream)), on_input_(std::move(on_input)), outbox_(header.serialize()) {}

PerfChannel::~PerfChannel() {
  if (stream_) {
    stream_->abort();
  }
}

bool PerfChannel::step() {
  if (!stream_ || ended_) {
    return false;
  }
  const StepOutcome out = stream_->step(PumpIo{
      [this] { return std::string_view(outbox_).substr(head_); },
      [this](size_t n) {
        head_ += n;
        sent_ += n;
        if (head_ == outbox_.size()) {
          outbox_.clear();
          head_ = 0;
        } else if (head_ >= kCompactAt) {
          outbox_.erase(0, head_);
          head_ = 0;
        }
      },
      [this](std::string_view in) {
        received_ += in.size();
        on_input_(in);
      },
      [] { return false; },
      {},
      {},
  });
  if (finish_ && !shut_ && queued() == 0) {
    stream_->shutdown_write();
    shut_ = true;
  }
  if (out.end) {
    ended_ = out.end;
  }
  return out.progress || out.more_output;
}

void PerfChannel::release() {
  if (stream_) {
    stream_->release();
    stream_.reset();
  }
}

void PerfChannel::abort() {
  if (stream_) {
    stream_->abort();
    stream_.reset();
  }
}

}  // namespace tinytcp::apps
