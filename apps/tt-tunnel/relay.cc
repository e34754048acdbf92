#include "tt-tunnel/relay.hh"

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

void PlainRelay::fail(RelayStatus& status, std::string why) {
  status.error = std::move(why);
  sockets_.close(app_, true);
  carrier_->abort();
  done_ = true;
}

RelayStatus PlainRelay::step() {
  RelayStatus status;
  if (done_) {
    status.finished = true;
    return status;
  }
  const StepOutcome a = app_.stream->step(PumpIo{
      [this] { return to_app_.view(); },
      [this](size_t n) {
        to_app_.pop(n);
        to_app_total_ += n;
      },
      [this](std::string_view in) { to_carrier_.push(in); },
      [] { return false; },
      [this] { return !app_eof_ && !to_carrier_.full(); },
      {},
  });
  status.progress = a.progress;
  if (a.end && a.end->result == PumpResult::PeerClosed) {
    app_eof_ = true;
  } else if (a.end) {
    fail(status, "the program's connection: " + a.end->error);
    return status;
  }
  const StepOutcome c = carrier_->step(PumpIo{
      [this] { return to_carrier_.view(); },
      [this](size_t n) {
        to_carrier_.pop(n);
        to_carrier_total_ += n;
      },
      [this](std::string_view in) { to_app_.push(in); },
      [] { return false; },
      [this] { return !carrier_eof_ && !to_app_.full(); },
      {},
  });
  status.progress = status.progress || c.progress;
  if (c.end && c.end->result == PumpResult::PeerClosed) {
    carrier_eof_ = true;
  } else if (c.end) {
    fail(status, "the tunnel connection: " + c.end->error);
    return status;
  }
  if (app_eof_ && to_carrier_.size() == 0 && !carrier_shut_) {
    carrier_->shutdown_write();
    carrier_shut_ = true;
  }
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

// ---------------------------------------------------------------- session

SessionRelay::~SessionRelay() {
  sockets_.close(app_, !app_shut_);
}

void SessionRelay::abort() {
  sockets_.close(app_, true);
}

RelayStatus SessionRelay::step(session::Session& session) {
  RelayStatus status;
  if (app_.fd >= 0) {
    const StepOutcome a = app_.stream->step(PumpIo{
        [&session] { return session.readable(); },
        [&session](size_t n) { session.consume(n); },
        [this](std::string_view in) { to_session_.push(in); },
        [] { return false; },
        [this] { return !app_eof_ && !to_session_.full(); },
        {},
    });
    status.progress = a.progress;
    if (a.end && a.end->result == PumpResult::PeerClosed) {
      app_eof_ = true;
    } else if (a.end) {
      // The program reset its connection: the session ends as if it closed
      // (what it wrote before still arrives).
      status.error = "the program's connection: " + a.end->error;
      sockets_.close(app_, true);
      app_eof_ = true;
    }
  }
  while (to_session_.size() > 0) {
    const size_t n = session.write(to_session_.view());
    if (n == 0) {
      break;
    }
    to_session_.pop(n);
    status.progress = true;
  }
  if (app_eof_ && to_session_.size() == 0 && !session_shut_) {
    session.shutdown_write();
    session_shut_ = true;
  }
  if (app_.fd >= 0 && session.peer_finished() && !app_shut_) {
    app_.stream->shutdown_write();
    app_shut_ = true;
  }
  if (session.state() == session::Session::State::Failed) {
    status.error = session.error();
    sockets_.close(app_, true);
    status.finished = true;
  } else if (session.finished() && (app_shut_ || app_.fd < 0)) {
    sockets_.close(app_, false);
    status.finished = true;
  }
  return status;
}

}  // namespace tinytcp::apps
