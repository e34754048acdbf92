#pragma once

// Drives a sans-I/O protocol endpoint (proto::FileSender/FileReceiver) over a
// connected stream socket: poll, write its output, feed it input, stop when it
// is done, when the peer closes, on an error, or after an idle timeout. Any
// transport that hands the app an fd (kernel TCP, or tinytcp's blocking facade
// over a socket pair) runs through the same loop.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "util/time.hh"

namespace tinytcp::apps {

struct PumpIo {
  std::function<std::string_view()> output;
  std::function<void(size_t)> consume;
  // The bytes are valid only during the call (a shared read buffer).
  std::function<void(std::string_view)> input;
  std::function<bool()> done;
  // While false, input is left in the stream (back-pressure: the endpoint's
  // replies are not leaving). Unset: input is always wanted.
  std::function<bool()> wants_input;
  std::function<void()> tick;  // called at least every 100 ms (progress)
  // Optional: the output as up to `max` pieces in order into `pieces`,
  // returning how many (a robust session's frame headers and the replay
  // buffer's bytes): a kernel stream sends them with one sendmsg. Unset:
  // output() alone.
  std::function<size_t(std::string_view* pieces, size_t max)> output_pieces = {};
};

enum class PumpResult { Done, PeerClosed, Timeout, Error };

struct PumpOutcome {
  PumpResult result = PumpResult::Done;
  std::string error;
};

PumpOutcome pump(int fd, const PumpIo& io, Duration idle_timeout);

// A one-line progress bar on stderr, redrawn at most 10 times a second, only
// when stderr is a terminal.
class Progress {
 public:
  explicit Progress(std::string label);
  void update(uint64_t done, uint64_t total, uint64_t retransmits);
  void clear();

 private:
  std::string label_;
  bool enabled_;
  int64_t start_ns_;
  int64_t last_draw_ns_ = 0;
  bool drawn_ = false;
};

// Monotonic seconds since an arbitrary origin, for summaries.
double monotonic_seconds();
std::string human_bytes(uint64_t bytes);

}  // namespace tinytcp::apps
