#include "receive_session.hh"

#include <cstdio>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/posix_file.hh"
#include "common/transfer_driver.hh"
#include "io/system_clock.hh"
#include "util/printable.hh"

namespace tinytcp::apps {

namespace {

using State = proto::FileReceiver::State;

constexpr const char* kInterrupted = "interrupted; partial file kept for resume";

std::unique_ptr<PosixFileSink> make_sink(const SessionSettings& settings) {
  auto sink =
      std::make_unique<PosixFileSink>(settings.output, settings.policy.force, settings.direct_io);
  // An OFFER of a deep path creates every directory on the way: bounded per
  // session like its entries.
  sink->set_max_new_directories(settings.policy.max_files);
  return sink;
}

}  // namespace

ReceiveSession::ReceiveSession(std::unique_ptr<StreamEnd> stream, const SessionSettings& settings,
                               NameClaims& claims, StreamServer& server)
    : stream_(std::move(stream)),
      server_(server),
      settings_(settings),
      peer_(stream_->peer()),
      sink_(claims, make_sink(settings), stream_->peer_address()),
      receiver_(sink_, settings.policy, &hash_, &runner_),
      started_(monotonic_seconds()),
      last_progress_(started_) {
  server_.watch(runner_.wakeup_fd(), io::EventLoop::kReadable);
}

ReceiveSession::~ReceiveSession() {
  server_.unwatch(runner_.wakeup_fd());
  if (phase_ != Phase::Done) {
    stream_->abort();
  }
}

std::optional<Duration> ReceiveSession::time_until_ready() const {
  return phase_ == Phase::Running ? receiver_.time_until_ready() : std::nullopt;
}

uint64_t ReceiveSession::current_size() const {
  return receiver_.files().empty() ? 0 : receiver_.files().back().size;
}

bool ReceiveSession::step(double now) {
  if (phase_ == Phase::Done) {
    return false;
  }
  if (sink_.taken_over() && phase_ == Phase::Running) {
    abort("taken over by a newer session from the same sender");
    return true;
  }
  if (phase_ == Phase::Closing) {
    if (stream_->closed() || now >= close_deadline_) {
      stream_->release();
      phase_ = Phase::Done;
      return true;
    }
    return false;
  }
  const size_t held_before = receiver_.output().size();
  receiver_.poll(io::monotonic_now());
  PumpIo io;
  io.wants_input = [this] { return receiver_.wants_input(); };
  io.output = [this] { return receiver_.output(); };
  io.consume = [this](size_t n) { receiver_.consume_output(n); };
  io.input = [this](std::string_view d) { receiver_.on_input(d); };
  io.done = [this] {
    return (receiver_.state() == State::Closed || receiver_.state() == State::Failed) &&
           receiver_.output().empty();
  };
  const StepOutcome step = stream_->step(io);
  // A hash of the whole file (a resume, a confirmation) is progress too.
  if (step.progress || receiver_.hashing() || receiver_.output().size() != held_before) {
    last_progress_ = now;
  }
  if (step.end) {
    finish(step.end, now);
  } else if (now - last_progress_ > to_seconds(settings_.idle_timeout)) {
    finish(PumpOutcome{PumpResult::Timeout,
                       fmt::format("no progress for {:.0f} s", to_seconds(settings_.idle_timeout))},
           now);
  }
  return step.progress || step.more_output;
}

void ReceiveSession::finish(std::optional<PumpOutcome> outcome, double now) {
  ended_ = now;
  if (outcome && outcome->result == PumpResult::Done) {
    outcome.reset();
  }
  outcome_ = std::move(outcome);
  if (outcome_ &&
      (outcome_->result == PumpResult::Timeout || outcome_->result == PumpResult::Error)) {
    stream_->abort();
    phase_ = Phase::Done;
    return;
  }
  // The sender waits for our RESULT, and then for the end of the stream:
  // linger until our FIN is acknowledged (bounded), so a lost FIN is
  // retransmitted by us instead of leaving the sender to wait out its own
  // linger against a receiver that has gone.
  stream_->shutdown_write();
  close_deadline_ = now + to_seconds(std::min(settings_.idle_timeout, settings_.close_linger));
  phase_ = Phase::Closing;
}

void ReceiveSession::abort(const std::string& why) {
  if (phase_ == Phase::Done) {
    return;
  }
  if (phase_ == Phase::Running) {
    ended_ = monotonic_seconds();
    outcome_ = PumpOutcome{PumpResult::Error, why};
  }
  stream_->abort();
  phase_ = Phase::Done;
}

bool ReceiveSession::ok() const {
  bool all = !receiver_.files().empty() && receiver_.state() == State::Closed;
  for (const auto& f : receiver_.files()) {
    all = all && f.ok;
  }
  return all;
}

void ReceiveSession::report(bool json) const {
  const double seconds = (ended_ > 0 ? ended_ : monotonic_seconds()) - started_;
  for (const auto& f : receiver_.files()) {
    if (f.directory && f.ok) {
      continue;  // the session summary counts them
    }
    if (json) {
      nlohmann::json j;
      j["file"] = printable(f.name);  // a name from the network: maybe not UTF-8
      j["peer"] = peer_;
      j["size"] = f.size;
      j["resumed_from"] = f.resumed_from;
      j["bytes_received"] = f.bytes_received;
      j["seconds"] = seconds;
      j["verified"] = f.ok;
      j["sha256"] = to_hex(f.sha256);
      if (f.already_present) {
        j["already_present"] = true;
      }
      if (!f.ok) {
        j["error"] = f.error.empty() ? kInterrupted : printable(f.error);
      }
      std::cout << j.dump() << std::endl;
    } else if (f.ok) {
      std::cout << fmt::format(
                       "{}: {} bytes, {} (sha256={}){}, from {}\n", printable(f.name), f.size,
                       f.already_present ? "already present and identical" : "integrity verified",
                       to_hex(f.sha256),
                       f.resumed_from > 0 && !f.already_present
                           ? fmt::format(", resumed at {}", f.resumed_from)
                           : "",
                       peer_)
                << std::flush;
    } else {
      std::fprintf(stderr, "file-recv: %s (from %s): %s\n", printable(f.name).c_str(),
                   peer_.c_str(), f.error.empty() ? kInterrupted : printable(f.error).c_str());
    }
  }
  // A session summary when the session was more than one file (counted over
  // every offer: the records of the oldest are dropped past 1024).
  const auto t = receiver_.totals();
  const bool tree = t.entries > 1 || (t.entries == 1 && t.directories == 1);
  if (tree) {
    const double mbps = seconds > 0 ? static_cast<double>(t.bytes_received) / seconds / 1e6 : 0;
    if (json) {
      nlohmann::json j;
      j["session"] = true;
      j["peer"] = peer_;
      j["files"] = t.files;
      j["already_present"] = t.present;
      j["directories"] = t.directories;
      j["bytes"] = t.bytes;
      j["bytes_received"] = t.bytes_received;
      j["seconds"] = seconds;
      j["throughput_MBps"] = mbps;
      j["failed"] = t.failed;
      j["verified"] = ok();
      if (receiver_.records_dropped() > 0) {
        j["records_dropped"] = receiver_.records_dropped();
      }
      std::cout << j.dump() << std::endl;
    } else {
      std::cout << fmt::format(
                       "session from {}: {} files ({} already present), {} directories, {} bytes "
                       "({} received) in {:.3f} s, {:.1f} MB/s{}{}{}\n",
                       peer_, t.files, t.present, t.directories, t.bytes, t.bytes_received, seconds,
                       mbps, t.failed > 0 ? fmt::format(", {} failed", t.failed) : "",
                       receiver_.records_dropped() > 0
                           ? fmt::format(" ({} earlier entries not listed)",
                                         receiver_.records_dropped())
                           : "",
                       receiver_.state() == State::Closed
                           ? ""
                           : ", session ended before the sender said goodbye")
                << std::flush;
    }
  }
  if (receiver_.state() == State::Failed && !receiver_.error().empty()) {
    std::fprintf(stderr, "file-recv: session from %s: %s\n", peer_.c_str(),
                 printable(receiver_.error()).c_str());
  }
  if (outcome_ &&
      (outcome_->result == PumpResult::Timeout || outcome_->result == PumpResult::Error)) {
    std::fprintf(stderr, "file-recv: session from %s ended: %s\n", peer_.c_str(),
                 printable(outcome_->error).c_str());
  }
}

}  // namespace tinytcp::apps
