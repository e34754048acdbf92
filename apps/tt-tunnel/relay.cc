#include "tt-tunnel/relay.hh"

#include <cerrno>
#include <cstring>
#include <utility>

namespace tinytcp::apps {

void ByteQueue::pop(size_t n) {
  head_ += n;
  if (head_ == bytes_.size()) {
    bytes_.clear();
    head_ = 0;
  } else if (head_ >= kRelayBuffer) {
    bytes_.erase(0, head_);
    head_ = 0;
  }
}

// ---------------------------------------------------------------- plain

PlainRelay::~PlainRelay() {
  if (!done_) {
    sockets_.close(app_, true);
    if (carrier_) {
      carrier_->abort();
    }
  }
}

StreamEnd::AbortCause abort_cause_of(const std::string& error) {
  // StepOutcome carries no errno (only its strerror text).
  const auto says = [&error](int code) {
    return error.find(std::strerror(code)) != std::string::npos;
  };
  if (says(ECONNREFUSED)) {
    return StreamEnd::AbortCause::Refused;
  }
  if (says(EHOSTUNREACH) || says(ENETUNREACH) || says(ETIMEDOUT) || says(EHOSTDOWN)) {
    return StreamEnd::AbortCause::Unreachable;
  }
  return StreamEnd::AbortCause::Reset;
}

void PlainRelay::fail(RelayStatus& status, std::string why, StreamEnd::AbortCause cause) {
  status.error = std::move(why);
  status.finished = true;      // counted as broken now, not as finished next pass
  sockets_.close(app_, true);  // RST: SO_LINGER 0
  carrier_->abort_because(cause);
  if (const session::SessionStats* stats = carrier_->session_stats()) {
    session_stats_ = *stats;
  }
  done_ = true;
}

bool PlainRelay::step_app(RelayStatus& status) {
  // A carrier that keeps its bytes anyway (a robust session: replay buffer,
  // receive ring) takes the program's bytes straight in and gives its own to
  // the program's socket in place: no copy through the relay's queues.
  const StepOutcome a = app_.stream->step(PumpIo{
      [this] { return to_app_.size() > 0 ? to_app_.view() : carrier_->received(); },
      [this](size_t n) {
        if (to_app_.size() > 0) {
          to_app_.pop(n);
        } else {
          carrier_->consume_received(n);
        }
        to_app_total_ += n;
      },
      [this](std::string_view in) {
        if (to_carrier_.size() == 0 && !carrier_shut_) {
          const size_t n = carrier_->offer(in);
          to_carrier_total_ += n;
          in.remove_prefix(n);
        }
        to_carrier_.push(in);
      },
      [] { return false; },
      [this] { return !app_eof_ && !to_carrier_.full(); },
      {},
  });
  status.progress = status.progress || a.progress;
  if (a.end && a.end->result == PumpResult::PeerClosed) {
    app_eof_ = true;
  } else if (a.end) {
    fail(status, "the program's connection: " + a.end->error, abort_cause_of(a.end->error));
    return false;
  }
  return true;
}

void PlainRelay::shut_carrier_if_done() {
  if (app_eof_ && to_carrier_.size() == 0 && !carrier_shut_) {
    carrier_->shutdown_write();
    carrier_shut_ = true;
  }
}

RelayStatus PlainRelay::step() {
  RelayStatus status;
  if (done_) {
    status.finished = true;
    return status;
  }
  if (!step_app(status)) {
    return status;
  }
  // The program's EOF before the carrier writes: a robust carrier's FIN then
  // goes in the same write as the data before it.
  shut_carrier_if_done();
  const StepOutcome c = carrier_->step(PumpIo{
      [this] { return to_carrier_.view(); },
      [this](size_t n) {
        to_carrier_.pop(n);
        to_carrier_total_ += n;
      },
      [this](std::string_view in) { to_app_.push(in); },
      [] { return false; },
      [this] { return !carrier_eof_ && !to_app_.full() && !carrier_->shows_input(); },
      {},
  });
  status.progress = status.progress || c.progress;
  if (const session::SessionStats* stats = carrier_->session_stats()) {
    session_stats_ = *stats;
  }
  if (c.end && c.end->result == PumpResult::PeerClosed) {
    carrier_eof_ = true;
  } else if (c.end) {
    fail(status, "the tunnel connection: " + c.end->error, StreamEnd::AbortCause::Application);
    return status;
  }
  // What the carrier brought goes to the program in this pass, not after
  // another wait (request/response: one loop pass less per reply).
  if (c.progress && !app_shut_ && (to_app_.size() > 0 || !carrier_->received().empty()) &&
      !step_app(status)) {
    return status;
  }
  shut_carrier_if_done();
  if (carrier_eof_ && to_app_.size() == 0 && !app_shut_) {
    app_.stream->shutdown_write();
    app_shut_ = true;
  }
  if (carrier_shut_ && app_shut_ && carrier_->closed()) {
    sockets_.close(app_, false);
    carrier_->release();
    done_ = true;
    status.finished = true;
  }
  return status;
}

}  // namespace tinytcp::apps
