#include "stack/time_wait_handler.hh"

#include <spdlog/spdlog.h>

namespace tinytcp::stack {

TimeWaitHandler::TimeWaitHandler(size_t capacity, Duration lifetime, Duration ack_interval)
    : table_(capacity), lifetime_(lifetime), ack_interval_(ack_interval) {}

void TimeWaitHandler::enter(const FourTuple& tuple, const std::optional<tcp::TimeWait>& tw,
                            HostStats& stats) {
  if (tw && table_.insert(tuple, *tw)) {
    ++stats.time_wait_entered;
  } else {
    ++stats.time_wait_overflow;
    SPDLOG_DEBUG("host: TIME-WAIT table full; {} closes without it", tuple);
  }
}

TimeWaitHandler::Answer TimeWaitHandler::receive(const InboundSegment& in, Instant now,
                                                 HostStats& stats) {
  tcp::TimeWait& tw = *table_.find(in.tuple);
  const tcp::TimeWaitVerdict v =
      tcp::time_wait_receive(tw, in.segment, now, lifetime_, ack_interval_);
  Answer answer;
  switch (v.action) {
    case tcp::TimeWaitAction::Ignore:
      break;
    case tcp::TimeWaitAction::Ack:
      ++stats.time_wait_acks;
      answer.ack = v.ack;
      break;
    case tcp::TimeWaitAction::Close:
      ++stats.time_wait_reset;
      table_.erase(in.tuple);
      break;
    case tcp::TimeWaitAction::NewConnection:
      ++stats.time_wait_reused;
      table_.erase(in.tuple);
      answer.taken = false;
      answer.isn = v.isn;
      break;
  }
  return answer;
}

}  // namespace tinytcp::stack
