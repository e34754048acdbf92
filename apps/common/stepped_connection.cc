#include "common/stepped_connection.hh"

#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "io/system_clock.hh"

namespace tinytcp::apps {

namespace {

constexpr Duration kTickInterval = std::chrono::milliseconds(100);

class SteppedConnection : public StreamConnection {
 public:
  SteppedConnection(std::unique_ptr<StreamClient> client, std::unique_ptr<StreamEnd> end)
      : client_(std::move(client)), end_(std::move(end)) {}
  ~SteppedConnection() override {
    if (end_) {
      end_->abort();
    }
  }

  PumpOutcome pump(const PumpIo& io, Duration idle_timeout) override {
    Instant last_progress = io::monotonic_now();
    Instant last_tick = last_progress;
    uint64_t last_unacknowledged = end_->unacknowledged();
    for (;;) {
      const StepOutcome step = end_->step(io);
      if (step.end) {
        return *step.end;
      }
      const uint64_t unacknowledged = end_->unacknowledged();
      const bool progress = step.progress || unacknowledged != last_unacknowledged;
      last_unacknowledged = unacknowledged;
      const Instant now = io::monotonic_now();
      if (progress) {
        last_progress = now;
      } else if (now - last_progress > idle_timeout) {
        return {PumpResult::Timeout,
                fmt::format("no progress for {:.0f} s", to_seconds(idle_timeout))};
      }
      if (io.tick && now - last_tick >= kTickInterval) {
        io.tick();
        last_tick = now;
      }
      client_->wait(step.more_output || step.progress ? Duration::zero() : kTickInterval);
    }
  }

  void close(Duration linger, bool until_fin_acked) override {
    if (!end_) {
      return;
    }
    end_->shutdown_write();
    // Input the peer still sends is not wanted any more.
    bool peer_closed = false;
    const PumpIo discard{[] { return std::string_view(); },
                         [](size_t) {},
                         [](std::string_view) {},
                         [] { return false; },
                         {},
                         {}};
    const Instant until = io::monotonic_now() + linger;
    while (io::monotonic_now() < until && !end_->closed() && (until_fin_acked || !peer_closed)) {
      const StepOutcome step = end_->step(discard);
      if (step.end && step.end->result != PumpResult::PeerClosed) {
        break;
      }
      peer_closed = peer_closed || step.end.has_value();
      client_->wait(step.progress ? Duration::zero() : std::chrono::milliseconds(10));
    }
    end_->release();
    // A released session finishes its close on the client's loop: a few
    // more passes, bounded by the linger.
    while (io::monotonic_now() < until && !end_->closed()) {
      client_->wait(std::chrono::milliseconds(10));
    }
    end_.reset();
  }

  TransportStats stats() const override { return {}; }
  uint64_t unacknowledged() const override { return end_ ? end_->unacknowledged() : 0; }

 private:
  std::unique_ptr<StreamClient> client_;
  std::unique_ptr<StreamEnd> end_;
};

}  // namespace

std::unique_ptr<StreamConnection> connect_stepped(std::unique_ptr<StreamClient> client,
                                                  const HostPort& to, Duration /*timeout*/) {
  std::string error;
  auto end = client->connect(error);
  if (!end) {
    throw std::runtime_error(fmt::format("cannot reach {}:{}: {}", to.host, to.port, error));
  }
  return std::make_unique<SteppedConnection>(std::move(client), std::move(end));
}

}  // namespace tinytcp::apps
