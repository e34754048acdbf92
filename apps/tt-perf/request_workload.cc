#include "tt-perf/request_workload.hh"

#include <memory>
#include <string>
#include <vector>

#include "common/latency_samples.hh"
#include "tt-perf/perf_channel.hh"

namespace tinytcp::apps {

namespace {

constexpr Duration kMaxWait = std::chrono::milliseconds(50);

struct Slot {
  std::unique_ptr<PerfChannel> channel;
  PerfClock::time_point started;
  uint64_t received = 0;  // of the current reply
  bool waiting = false;   // a request is out
  bool closing = false;   // rr: our FIN queued, waiting for the server's
  bool failed = false;    // its connection failed: the slot is done
};

}  // namespace

PerfReport RequestWorkload::run(StreamClient& client, const std::atomic<bool>& stop) {
  const bool crr = options_.mode == "crr";
  PerfHeader header;
  header.mode = PerfMode::Reply;
  header.request_bytes = crr ? options_.request_bytes : 1;
  header.reply_bytes = crr ? options_.reply_bytes : 1;
  const std::string request(header.request_bytes, 'q');

  PerfReport report;
  report.mode = options_.mode;
  LatencySamples latencies(LatencySamples::kMaxSamples, options_.seed);
  std::vector<Slot> slots(options_.parallel);
  const auto start = PerfClock::now();
  const auto deadline = start + options_.duration;
  auto end = start;
  auto last_progress = start;

  const auto fail = [&](Slot& s, const std::string& why) {
    ++report.errors;
    if (report.error.empty()) {
      report.error = why;
    }
    s.channel->abort();
    s.channel.reset();
    s.failed = true;
  };
  // A transaction on `s`: a new connection for crr (and rr's first).
  const auto begin = [&](Slot& s) {
    if (!s.channel) {
      std::string error;
      auto stream = client.connect(error);
      if (!stream) {
        throw std::runtime_error(error);
      }
      ++report.connections;
      s.channel = std::make_unique<PerfChannel>(
          std::move(stream), header, [&s](std::string_view in) { s.received += in.size(); });
    }
    s.started = PerfClock::now();
    s.received = 0;
    s.waiting = true;
    s.channel->send(request);
    report.bytes_sent += request.size();
  };

  size_t open = slots.size();
  while (open > 0 && !stop.load(std::memory_order_relaxed)) {
    bool progress = false;
    open = 0;
    for (auto& s : slots) {
      const bool time_left = PerfClock::now() < deadline;
      if (s.failed || (!s.channel && !time_left)) {
        continue;
      }
      ++open;
      if (!s.waiting && !s.closing) {
        if (time_left) {
          begin(s);
        } else {
          s.channel->finish();  // rr: the server closes after our FIN
          s.closing = true;
        }
      }
      progress = s.channel->step() || progress;
      if (s.waiting && s.received >= header.reply_bytes) {
        const auto now = PerfClock::now();
        latencies.add(std::chrono::duration_cast<Duration>(now - s.started));
        ++report.transactions;
        report.bytes_received += s.received;
        end = now;
        s.waiting = false;
        if (crr) {
          s.channel->release();  // graceful close; the stack finishes it
          s.channel.reset();
        }
        progress = true;
        continue;
      }
      if (const auto& ended = s.channel->ended()) {
        if (s.closing && ended->result != PumpResult::Error) {
          s.channel->release();
          s.channel.reset();
        } else {
          fail(s, ended->error.empty() ? "the server closed the connection" : ended->error);
        }
      }
    }
    const auto now = PerfClock::now();
    if (progress) {
      last_progress = now;
    } else if (now - last_progress > options_.idle_timeout) {
      ++report.errors;
      report.error = "no progress for the idle timeout";
      break;
    }
    client.wait(progress ? Duration::zero() : wait_until(deadline, kMaxWait));
  }
  report.seconds = to_seconds(std::chrono::duration_cast<Duration>(end - start));
  report.latency = latencies.summary();
  return report;
}

}  // namespace tinytcp::apps
