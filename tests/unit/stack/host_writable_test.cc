// Writable events and the send buffer's low-water mark: as Linux's
// sk_stream_is_writeable(), a sender with a full buffer hears Writable when
// the free space is at least half of what is still queued (a third of the
// buffer when it was full), not after every ACK. An app that fills the buffer
// on each Writable then writes (and reads its source) in large pieces instead
// of one or two segments' worth per ACK, and no Writable is ever withheld for
// good: once everything is acknowledged the free space counts as enough.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "unit/stack/two_hosts.hh"
#include "util/random.hh"

namespace tinytcp::stack {
namespace {

struct WritableSeen {
  uint64_t writable = 0;
  uint64_t queued = 0;  // bytes in the send buffer (unsent and unacknowledged)
};

class HostWritableTest : public TwoHosts {
 protected:
  // Records the client's free space and queued bytes at each Writable.
  void watch(SocketId client) {
    b_.set_event_callback([this, client](SocketId id, SocketEvent e) {
      b_events_.emplace_back(id, e);
      if (id == client && e == SocketEvent::Writable) {
        const tcp::TcpConnection& c = *b_.connection(client);
        seen_.push_back({c.writable_bytes(), c.outbound().bytes_buffered()});
      }
    });
  }
  std::vector<WritableSeen> seen_;
};

TEST_F(HostWritableTest, FullBufferHearsWritableOnlyWhenHalfTheQueuedIsFree) {
  const auto [client_id, server_id] = connect_pair();
  const SocketId client = client_id;
  const SocketId server = server_id;
  watch(client);
  const std::string data = Rng(seed_from_env("TINYTCP_SEED", 7)).bytes(64 * 1024);
  ASSERT_EQ(b_.write(client, data, now_), data.size());  // the 64 KiB buffer, full
  std::string got;
  ASSERT_TRUE(run_until(
      [&] {
        got += read_all(a_, server);
        return got.size() == data.size() && b_.connection(client)->outbound().bytes_buffered() == 0;
      },
      10s));
  EXPECT_EQ(got, data);
  ASSERT_FALSE(seen_.empty());  // never withheld for good
  for (const WritableSeen& w : seen_) {
    EXPECT_GE(2 * w.writable, w.queued)
        << "Writable with " << w.writable << " bytes free and " << w.queued << " queued";
  }
  // The first comes with a third of the buffer free, not one ACK's worth.
  EXPECT_GE(3 * seen_.front().writable, 64u * 1024);
}

TEST_F(HostWritableTest, AppThatWritesOnWritableStillMovesTheWholeStream) {
  const auto [client_id, server_id] = connect_pair();
  const SocketId client = client_id;
  const SocketId server = server_id;
  watch(client);
  const std::string data = Rng(seed_from_env("TINYTCP_SEED", 8)).bytes(1'000'000);
  size_t written = b_.write(client, data, now_);
  std::string got;
  size_t writes = 1;
  ASSERT_TRUE(run_until(
      [&] {
        // Writes only when told: a stalled Writable would stop the stream.
        if (!seen_.empty() && written < data.size()) {
          seen_.clear();
          written += b_.write(client, std::string_view(data).substr(written), now_);
          ++writes;
        }
        got += read_all(a_, server);
        return got.size() == data.size();
      },
      60s));
  EXPECT_EQ(got, data);
  // Pieces of at least a third of the 64 KiB buffer (the last may be smaller).
  EXPECT_LE(writes, data.size() / (64 * 1024 / 3) + 2);
}

}  // namespace
}  // namespace tinytcp::stack
