#include "stack/ip_input_outcome.hh"

#include <spdlog/spdlog.h>

namespace tinytcp::stack {

IpInputOutcome tcp_outcome(Expected<InboundSegment, InboundError> segment) {
  IpInputOutcome out;
  if (!segment) {
    out.drop =
        segment.error() == InboundError::BadAddress ? HostDrop::BadAddress : HostDrop::BadTcp;
    SPDLOG_DEBUG("host: drop TCP: {}", to_string(segment.error()));
    return out;
  }
  out.segment = std::move(*segment);
  return out;
}

}  // namespace tinytcp::stack
