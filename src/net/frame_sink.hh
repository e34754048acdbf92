#pragma once

// The output port of a NetworkInterface: where finished Ethernet frames go.
// The io/ layer plugs a TAP device in here, tests a recording sink, the
// simulated network a link to another interface. `frame` is valid only for
// the duration of the call: copy it to keep it.
//
// A NetworkInterface configured with `offload` also hands over frames with a
// LinkOffload (a TCP GSO super-frame, or a checksum left to the device); only
// sinks of such interfaces get send_offloaded_frame(), and they override it.

#include <string_view>

#include "net/link_offload.hh"

namespace tinytcp::net {

class FrameSink {
 public:
  virtual ~FrameSink() = default;
  virtual void send_frame(std::string_view frame) = 0;
  // The default is for sinks that never offload: the frame as it is.
  virtual void send_offloaded_frame(std::string_view frame, const LinkOffload& /*offload*/) {
    send_frame(frame);
  }
};

}  // namespace tinytcp::net
