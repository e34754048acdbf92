#pragma once

// The output port of a NetworkInterface: where finished Ethernet frames go.
// The io/ layer plugs a TAP device in here, tests a recording sink, the
// simulated network a link to another interface. `frame` is valid only for
// the duration of the call: copy it to keep it.

#include <string_view>

namespace tinytcp::net {

class FrameSink {
 public:
  virtual ~FrameSink() = default;
  virtual void send_frame(std::string_view frame) = 0;
};

}  // namespace tinytcp::net
