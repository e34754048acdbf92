#include "stack/socket_timers.hh"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace tinytcp::stack {
namespace {

using namespace std::chrono_literals;

class SocketTimersTest : public ::testing::Test {
 protected:
  HostSocket& add(FourTuple tuple) {
    auto s = std::make_unique<HostSocket>();
    s->id = table.allocate_id();
    s->tuple = tuple;
    return table.add(std::move(s));
  }
  static FourTuple tuple(uint16_t port) {
    return FourTuple{wire::Ipv4Address::from_octets(10, 0, 0, 1), port,
                     wire::Ipv4Address::from_octets(10, 0, 0, 2), 80};
  }

  SocketTable table;
  SocketTimers timers;
  const Instant t0 = Instant{} + 1s;
};

TEST_F(SocketTimersTest, DueSocketsComeEarliestFirstAndAreDisarmed) {
  HostSocket& a = add(tuple(1000));
  HostSocket& b = add(tuple(1001));
  timers.schedule(a, t0 + 20ms);
  timers.schedule(b, t0 + 10ms);
  EXPECT_EQ(timers.next_deadline(table), t0 + 10ms);
  EXPECT_TRUE(timers.take_due(t0 + 5ms, table).empty());
  EXPECT_EQ(timers.take_due(t0 + 20ms, table), (std::vector<SocketId>{b.id, a.id}));
  EXPECT_FALSE(a.scheduled);
  EXPECT_FALSE(timers.next_deadline(table));
}

TEST_F(SocketTimersTest, MovedOrCancelledDeadlinesAreSkipped) {
  HostSocket& a = add(tuple(1000));
  timers.schedule(a, t0 + 10ms);
  timers.schedule(a, t0 + 30ms);  // moved later: the first entry is stale
  EXPECT_EQ(timers.next_deadline(table), t0 + 30ms);
  EXPECT_TRUE(timers.take_due(t0 + 20ms, table).empty());
  timers.schedule(a, std::nullopt);  // no timer
  EXPECT_TRUE(timers.take_due(t0 + 40ms, table).empty());
}

TEST_F(SocketTimersTest, ReleasedSocketsAreSkipped) {
  HostSocket& a = add(tuple(1000));
  const SocketId id = a.id;
  timers.schedule(a, t0 + 10ms);
  table.release(id);
  EXPECT_FALSE(timers.next_deadline(table));
  EXPECT_TRUE(timers.take_due(t0 + 20ms, table).empty());
}

}  // namespace
}  // namespace tinytcp::stack
