#pragma once

// What a tt-perf client run is asked to do (the flags of its modes).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/kernel_tcp.hh"
#include "common/value_range.hh"
#include "util/time.hh"

namespace tinytcp::apps {

struct ClientOptions {
  std::string mode;  // stream | rr | crr | echo | messages
  HostPort to;
  Duration duration = std::chrono::seconds(5);  // stream, rr, crr
  size_t parallel = 1;                          // connections at once
  uint64_t bytes = 0;                           // stream: stop after this many (0: --time)
  uint64_t count = 20000;                       // messages: how many
  uint64_t message_size = 1460;                 // messages: bytes each
  uint64_t messages = 1000;                     // echo: how many
  SizeRange size{200, 399};                     // echo: bytes of each message
  DurationRange gap{std::chrono::milliseconds(2), std::chrono::milliseconds(19)};  // echo
  uint32_t request_bytes = 64;                                                     // crr (rr: 1)
  uint32_t reply_bytes = 8192;                                                     // crr (rr: 1)
  uint64_t seed = 1;
  // The run fails when nothing moves for this long.
  Duration idle_timeout = std::chrono::seconds(30);
};

}  // namespace tinytcp::apps
