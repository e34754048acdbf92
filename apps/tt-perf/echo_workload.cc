#include "tt-perf/echo_workload.hh"

#include <deque>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "common/latency_samples.hh"
#include "tt-perf/perf_channel.hh"
#include "util/hash.hh"
#include "util/random.hh"

namespace tinytcp::apps {

namespace {

constexpr Duration kMaxWait = std::chrono::milliseconds(50);

struct InFlight {
  uint64_t end = 0;  // the echoed byte count at which this message is back
  PerfClock::time_point sent;
};

}  // namespace

PerfReport EchoWorkload::run(StreamClient& client, const std::atomic<bool>& stop) {
  PerfReport report;
  report.mode = options_.mode;
  Rng rng(options_.seed);
  LatencySamples latencies(LatencySamples::kMaxSamples, options_.seed);
  Sha256 sent_hash;
  Sha256 echo_hash;
  uint64_t echoed = 0;
  std::deque<InFlight> in_flight;
  auto end = PerfClock::now();

  std::string error;
  auto stream = client.connect(error);
  if (!stream) {
    throw std::runtime_error(error);
  }
  report.connections = 1;
  PerfHeader header;
  header.mode = PerfMode::Echo;
  PerfChannel channel(std::move(stream), header, [&](std::string_view in) {
    echo_hash.update(in);
    echoed += in.size();
    const auto now = PerfClock::now();
    while (!in_flight.empty() && in_flight.front().end <= echoed) {
      latencies.add(std::chrono::duration_cast<Duration>(now - in_flight.front().sent));
      in_flight.pop_front();
      ++report.transactions;
      end = now;
    }
  });

  const auto start = PerfClock::now();
  auto next_send = start;
  uint64_t queued = 0;
  uint64_t messages_sent = 0;
  auto last_progress = start;
  while (!stop.load(std::memory_order_relaxed)) {
    auto now = PerfClock::now();
    if (messages_sent < options_.messages && now >= next_send) {
      const std::string message = rng.bytes(static_cast<size_t>(options_.size.draw(rng)));
      sent_hash.update(message);
      channel.send(message);
      queued += message.size();
      in_flight.push_back(InFlight{queued, now});
      ++messages_sent;
      // The gap runs from this send, as the original's sleep between sends.
      next_send = now + options_.gap.draw(rng);
    }
    const bool progress = channel.step();
    if (messages_sent == options_.messages && in_flight.empty()) {
      break;
    }
    if (const auto& ended = channel.ended()) {
      ++report.errors;
      report.error = ended->error.empty() ? "the server closed early" : ended->error;
      break;
    }
    now = PerfClock::now();
    if (progress) {
      last_progress = now;
    } else if (now - last_progress > options_.idle_timeout &&
               (in_flight.size() != 0 || messages_sent == options_.messages)) {
      ++report.errors;
      report.error = "no progress for the idle timeout";
      break;
    }
    const bool more = messages_sent < options_.messages;
    client.wait(progress ? Duration::zero() : (more ? wait_until(next_send, kMaxWait) : kMaxWait));
  }
  if (messages_sent < options_.messages || !in_flight.empty()) {
    report_interrupted(report, fmt::format("{} of {} messages sent, {} not yet echoed",
                                           messages_sent, options_.messages, in_flight.size()));
  }
  // Closed only once every echo is back: a relay without half-close (kcptun)
  // ends both directions at our FIN.
  channel.release();
  report.seconds = to_seconds(std::chrono::duration_cast<Duration>(end - start));
  report.bytes_sent = queued;
  report.bytes_received = echoed;
  report.latency = latencies.summary();
  report.sha256 = to_hex(sent_hash.finish());
  report.verified =
      report.errors == 0 && echoed == queued && to_hex(echo_hash.finish()) == report.sha256;
  return report;
}

}  // namespace tinytcp::apps
