#include "tt-perf/bulk_workload.hh"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "tt-perf/perf_channel.hh"
#include "util/random.hh"

namespace tinytcp::apps {

namespace {

// Bytes kept queued ahead of the connection.
constexpr size_t kQueueAhead = 256 * 1024;
constexpr Duration kMaxWait = std::chrono::milliseconds(50);

struct BulkConnection {
  std::unique_ptr<PerfChannel> channel;
  std::string answer;  // the server's count, 8 bytes
  uint64_t queued_total = 0;
  bool finished = false;  // our FIN is queued
  bool done = false;      // the server answered and closed
};

// How far a run stopped before every connection's count came back got;
// written: handed to the connection, up to kQueueAhead beyond what it sent.
std::string progress(const ClientOptions& options, uint64_t written, size_t uncounted,
                     size_t connections, Duration elapsed) {
  if (options.mode == "messages") {
    return fmt::format("{} of {} messages written, not yet counted by the server",
                       written / std::max<uint64_t>(options.message_size, 1), options.count);
  }
  const std::string counts =
      fmt::format("{} of {} connections not yet counted by the server", uncounted, connections);
  if (options.bytes != 0) {
    return fmt::format("{} of {} bytes written, {}", written, options.bytes, counts);
  }
  return fmt::format("{} bytes written in {:.1f} of {:.1f} s, {}", written, to_seconds(elapsed),
                     to_seconds(options.duration), counts);
}

}  // namespace

PerfReport BulkWorkload::run(StreamClient& client, const std::atomic<bool>& stop) {
  const bool messages = options_.mode == "messages";
  const size_t parallel = messages ? 1 : options_.parallel;
  // Total bytes per connection; 0: until the time is up.
  uint64_t quota = 0;
  if (messages) {
    quota = options_.count * options_.message_size;
  } else if (options_.bytes != 0) {
    quota = (options_.bytes + parallel - 1) / parallel;
  }
  Rng rng(options_.seed);
  const std::string filler = rng.bytes(64 * 1024);

  PerfReport report;
  report.mode = options_.mode;
  const auto start = PerfClock::now();
  const auto send_until = start + options_.duration;
  std::vector<BulkConnection> connections(parallel);
  for (auto& c : connections) {
    std::string error;
    auto stream = client.connect(error);
    if (!stream) {
      throw std::runtime_error(error);
    }
    PerfHeader header;
    header.mode = PerfMode::Sink;
    c.channel = std::make_unique<PerfChannel>(std::move(stream), header,
                                              [&c](std::string_view in) { c.answer.append(in); });
    ++report.connections;
  }

  auto last_progress = PerfClock::now();
  auto end = start;
  size_t done = 0;
  while (done < connections.size() && !stop.load(std::memory_order_relaxed)) {
    const auto now = PerfClock::now();
    bool progress = false;
    for (auto& c : connections) {
      if (c.done) {
        continue;
      }
      if (!c.finished) {
        const bool out_of_time = quota == 0 && now >= send_until;
        const bool out_of_bytes = quota != 0 && c.queued_total >= quota;
        if (out_of_time || out_of_bytes) {
          c.channel->finish();
          c.finished = true;
        } else {
          while (c.channel->queued() < kQueueAhead && (quota == 0 || c.queued_total < quota)) {
            const uint64_t n = quota == 0
                                   ? filler.size()
                                   : std::min<uint64_t>(filler.size(), quota - c.queued_total);
            c.channel->send(std::string_view(filler).substr(0, n));
            c.queued_total += n;
          }
        }
      }
      progress = c.channel->step() || progress;
      if (const auto& ended = c.channel->ended()) {
        c.done = true;
        ++done;
        end = PerfClock::now();
        if (ended->result == PumpResult::Error || c.answer.size() != 8) {
          ++report.errors;
          if (report.error.empty()) {
            report.error =
                ended->result == PumpResult::Error ? ended->error : "the server did not answer";
          }
          c.channel->abort();
          continue;
        }
        report.bytes_delivered += parse_count(c.answer);
        c.channel->release();
      }
    }
    if (progress) {
      last_progress = PerfClock::now();
    } else if (PerfClock::now() - last_progress > options_.idle_timeout) {
      ++report.errors;
      report.error = "no progress for the idle timeout";
      break;
    }
    client.wait(progress ? Duration::zero() : wait_until(send_until, kMaxWait));
  }
  uint64_t sent = 0;
  for (auto& c : connections) {
    sent += c.queued_total;
  }
  if (done < connections.size()) {
    const auto elapsed = std::chrono::duration_cast<Duration>(PerfClock::now() - start);
    report_interrupted(
        report, progress(options_, sent, connections.size() - done, connections.size(), elapsed));
  }
  report.seconds = to_seconds(std::chrono::duration_cast<Duration>(end - start));
  report.bytes_sent = sent;
  report.verified = report.errors == 0 && report.bytes_delivered == sent;
  if (messages) {
    report.transactions = report.bytes_delivered / std::max<uint64_t>(options_.message_size, 1);
  }
  return report;
}

}  // namespace tinytcp::apps
