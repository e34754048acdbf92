// Host::write_region / commit_write: the application fills the free send
// buffer in place (tt-serve preads a file straight into it) instead of
// handing write() a copy. Same bounds, events and FIN as write().

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "unit/stack/two_hosts.hh"
#include "util/random.hh"

namespace tinytcp::stack {
namespace {

class HostWriteRegionTest : public TwoHosts {
 protected:
  // Writes up to `max` bytes of `data` through the region;
  // returns what was queued.
  size_t write_in_place(SocketId id, std::string_view data, size_t max) {
    const stream::WriteRegion r = b_.write_region(id, std::min(max, data.size()));
    const size_t n = static_cast<size_t>(r.size());
    if (n == 0) {
      return 0;
    }
    const size_t a = static_cast<size_t>(r.first_size);
    std::memcpy(r.first, data.data(), std::min(n, a));
    if (n > a) {
      std::memcpy(r.second, data.data() + a, n - a);
    }
    return b_.commit_write(id, n, now_);
  }
};

TEST_F(HostWriteRegionTest, RegionIsWhatWriteWouldTake) {
  const auto [client_id, server_id] = connect_pair();
  const SocketId client = client_id;
  const SocketId server = server_id;
  ASSERT_NE(server, 0u);
  const uint64_t writable = b_.info(client)->writable_bytes;
  ASSERT_GT(writable, 0u);
  EXPECT_EQ(b_.write_region(client, 100).size(), 100u);
  EXPECT_EQ(b_.write_region(client, 10'000'000).size(), writable);
  const std::string data = Rng(seed_from_env("TINYTCP_SEED", 3)).bytes(writable);
  EXPECT_EQ(write_in_place(client, data, data.size()), writable);
  EXPECT_EQ(b_.info(client)->writable_bytes, 0u);
  EXPECT_EQ(b_.write_region(client, 100).size(), 0u);  // full
  EXPECT_EQ(b_.write(client, "x", now_), 0u);
}

TEST_F(HostWriteRegionTest, CommitBeyondTheRegionOrAfterAnotherCallIsRefused) {
  const auto [client_id, server_id] = connect_pair();
  const SocketId client = client_id;
  const SocketId server = server_id;
  ASSERT_NE(server, 0u);
  const stream::WriteRegion r = b_.write_region(client, 4);
  ASSERT_EQ(r.size(), 4u);
  std::memcpy(r.first, "abcd", 4);
  EXPECT_EQ(b_.commit_write(client, 5, now_), 0u);
  EXPECT_EQ(b_.connection(client)->outbound().bytes_pushed(), 0u);
  EXPECT_EQ(b_.commit_write(client, 0, now_), 0u);  // a commit of 0 queues nothing
  b_.write_region(client, 4);
  EXPECT_EQ(b_.write(client, "xy", now_), 2u);
  EXPECT_EQ(b_.commit_write(client, 1, now_), 0u);  // write() came in between
  EXPECT_EQ(b_.connection(client)->outbound().bytes_pushed(), 2u);
  EXPECT_EQ(b_.commit_write(9999, 0, now_), 0u);  // no such socket
  EXPECT_EQ(b_.write_region(9999, 4).size(), 0u);
}

TEST_F(HostWriteRegionTest, StreamWrittenInPlaceOnWritableArrivesWholeThenFin) {
  const auto [client_id, server_id] = connect_pair();
  const SocketId client = client_id;
  const SocketId server = server_id;
  ASSERT_NE(server, 0u);
  bool writable = false;
  b_.set_event_callback(
      [&](SocketId id, SocketEvent e) { writable |= id == client && e == SocketEvent::Writable; });
  const std::string data = Rng(seed_from_env("TINYTCP_SEED", 4)).bytes(1'000'000);
  size_t written = write_in_place(client, data, 70'000);
  std::string got;
  ASSERT_TRUE(run_until(
      [&] {
        // Writes only when told, in pieces that wrap the ring.
        while (writable && written < data.size()) {
          const size_t n = write_in_place(client, std::string_view(data).substr(written), 70'000);
          written += n;
          if (n == 0) {
            writable = false;
          }
        }
        if (written == data.size() && !b_.connection(client)->outbound().is_closed()) {
          b_.shutdown_write(client, now_);
        }
        got += read_all(a_, server);
        return got.size() == data.size() && a_.info(server)->peer_finished;
      },
      60s));
  EXPECT_EQ(got, data);
  EXPECT_EQ(b_.write_region(client, 100).size(), 0u);  // after our FIN
}

TEST_F(HostWriteRegionTest, NoRegionAfterClose) {
  const auto [client_id, server_id] = connect_pair();
  const SocketId client = client_id;
  const SocketId server = server_id;
  ASSERT_NE(server, 0u);
  b_.close(client, now_);
  EXPECT_EQ(b_.write_region(client, 100).size(), 0u);
  EXPECT_EQ(b_.commit_write(client, 0, now_), 0u);
}

}  // namespace
}  // namespace tinytcp::stack
