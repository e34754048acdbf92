#include "io/impaired_adapter.hh"

#include <gtest/gtest.h>

#include "unit/io/fake_adapter.hh"

using namespace std::chrono_literals;

namespace tinytcp::io {
namespace {

class ImpairedAdapterTest : public ::testing::Test {
 protected:
  void make(const ImpairmentConfig& outbound, const ImpairmentConfig& inbound) {
    adapter_.emplace(link_, clock_, outbound, inbound, 77);
  }
  std::vector<std::string> receive() {
    std::vector<std::string> got;
    adapter_->receive_batch([&](std::string_view p) { got.emplace_back(p); });
    return got;
  }

  ManualClock clock_{Instant::from_epoch(5s)};
  testing::FakeAdapter link_;
  std::optional<ImpairedAdapter> adapter_;
};

TEST_F(ImpairedAdapterTest, IdentityPassesBothWays) {
  make({}, {});
  adapter_->send("out");
  EXPECT_EQ(link_.sent, (std::vector<std::string>{"out"}));
  link_.deliver("in");
  EXPECT_EQ(receive(), (std::vector<std::string>{"in"}));
  EXPECT_FALSE(adapter_->next_deadline());
}

TEST_F(ImpairedAdapterTest, OutboundDelayReleasedAtDeadline) {
  ImpairmentConfig out;
  out.delay = 10ms;
  make(out, {});
  adapter_->send("late");
  EXPECT_TRUE(link_.sent.empty());
  EXPECT_EQ(adapter_->next_deadline(), clock_.now() + 10ms);
  clock_.advance(9ms);
  receive();
  EXPECT_TRUE(link_.sent.empty());
  clock_.advance(1ms);
  EXPECT_TRUE(receive().empty());
  EXPECT_EQ(link_.sent, (std::vector<std::string>{"late"}));
  EXPECT_FALSE(adapter_->next_deadline());
}

TEST_F(ImpairedAdapterTest, InboundDelayOnlyDelaysInbound) {
  ImpairmentConfig in;
  in.delay = 2ms;
  make({}, in);
  adapter_->send("out");
  EXPECT_EQ(link_.sent.size(), 1u);
  link_.deliver("in");
  EXPECT_TRUE(receive().empty());
  EXPECT_EQ(adapter_->next_deadline(), clock_.now() + 2ms);
  clock_.advance(2ms);
  EXPECT_EQ(receive(), (std::vector<std::string>{"in"}));
}

TEST_F(ImpairedAdapterTest, DirectionsCountDropsSeparately) {
  ImpairmentConfig lossy;
  lossy.loss = 1.0;
  make(lossy, {});
  adapter_->send("gone");
  link_.deliver("kept");
  EXPECT_EQ(receive(), (std::vector<std::string>{"kept"}));
  EXPECT_TRUE(link_.sent.empty());
  EXPECT_EQ(adapter_->outbound().stats().drops[ImpairmentDrop::kLoss], 1u);
  EXPECT_EQ(adapter_->inbound().stats().drops[ImpairmentDrop::kLoss], 0u);
}

TEST_F(ImpairedAdapterTest, DirectionsUseDistinctSeeds) {
  make({}, {});
  EXPECT_NE(adapter_->outbound().seed(), adapter_->inbound().seed());
}

TEST_F(ImpairedAdapterTest, SendBatchReleasesDueOnesTogether) {
  ImpairmentConfig out;
  out.delay = 1ms;
  make(out, {});
  const std::string_view batch[] = {"a", "b", "c"};
  adapter_->send_batch(batch, 3);
  EXPECT_TRUE(link_.sent.empty());
  clock_.advance(1ms);
  adapter_->send("d");  // pushed after the due ones, released after them
  EXPECT_EQ(link_.sent, (std::vector<std::string>{"a", "b", "c"}));
  clock_.advance(1ms);
  receive();
  EXPECT_EQ(link_.sent, (std::vector<std::string>{"a", "b", "c", "d"}));
}

TEST_F(ImpairedAdapterTest, IdentitySendBatchPassesAtOnce) {
  make({}, {});
  const std::string_view batch[] = {"x", "y"};
  adapter_->send_batch(batch, 2);
  EXPECT_EQ(link_.sent, (std::vector<std::string>{"x", "y"}));
}

TEST_F(ImpairedAdapterTest, ForwardsLinkProperties) {
  make({}, {});
  EXPECT_EQ(adapter_->mtu(), link_.mtu());
  EXPECT_EQ(adapter_->link_type(), link_.link_type());
  EXPECT_EQ(adapter_->fd(), link_.fd());
}

// A packet the device refused for want of buffers is handed back through
// the wrapper to whoever set the handler on it (the stack).
TEST_F(ImpairedAdapterTest, RefusedPacketsReachTheHandlerSetOnTheWrapper) {
  ImpairmentConfig out;
  out.delay = 1ms;
  make(out, {});
  std::vector<std::string> refused;
  adapter_->set_send_failure_handler([&](std::string_view p) { refused.emplace_back(p); });
  link_.refuse = true;
  adapter_->send("refused");
  EXPECT_TRUE(refused.empty());  // held by the delay first
  clock_.advance(1ms);
  receive();
  EXPECT_EQ(refused, (std::vector<std::string>{"refused"}));
  EXPECT_TRUE(link_.sent.empty());
}

}  // namespace
}  // namespace tinytcp::io
