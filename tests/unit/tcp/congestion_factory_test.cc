#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "tcp/congestion/congestion_control.hh"
#include "tcp/congestion/fixed_window.hh"
#include "tcp/tcp_config.hh"

namespace tinytcp::tcp {
namespace {

constexpr CongestionParams kParams{1000, 10};

TEST(CongestionFactoryTest, MakesEveryAlgorithmByName) {
  for (const char* name : {"reno", "newreno", "cubic", "bbr"}) {
    auto cc = make_congestion_control(name, kParams);
    ASSERT_TRUE(cc) << name;
    EXPECT_EQ((*cc)->name(), name);
    EXPECT_EQ((*cc)->cwnd(), 10000u) << "RFC 6928 initial window";
  }
}

TEST(CongestionFactoryTest, EverySpecTheHelpListsIsAccepted) {
  // The apps' --cc help prints kCongestionControlSpecs: each must work.
  std::string_view rest = kCongestionControlSpecs;
  size_t listed = 0;
  while (!rest.empty()) {
    const size_t bar = rest.find('|');
    std::string spec(rest.substr(0, bar));
    rest = bar == std::string_view::npos ? std::string_view{} : rest.substr(bar + 1);
    if (spec == "fixed:N") {
      spec = "fixed:4";
    }
    EXPECT_TRUE(make_congestion_control(spec, kParams)) << spec;
    ++listed;
  }
  EXPECT_EQ(listed, 5u);
}

TEST(CongestionFactoryTest, FileTransferUsesBbrAndEverythingElseReno) {
  auto cc = make_congestion_control(kFileTransferCongestionControl, kParams);
  ASSERT_TRUE(cc);
  EXPECT_EQ((*cc)->name(), "bbr");
  EXPECT_TRUE((*cc)->pacing_rate());
  EXPECT_EQ(TcpConfig{}.congestion_control, "reno");
}

TEST(CongestionFactoryTest, MakesAFixedWindow) {
  auto cc = make_congestion_control("fixed:4", kParams);
  ASSERT_TRUE(cc);
  EXPECT_EQ((*cc)->name(), "fixed");
  EXPECT_EQ((*cc)->cwnd(), 4000u);
}

TEST(CongestionFactoryTest, RejectsUnknownNamesWithAMessage) {
  for (const char* spec : {"", "Reno", "vegas", "BBR", "reno "}) {
    auto cc = make_congestion_control(spec, kParams);
    ASSERT_FALSE(cc) << spec;
    EXPECT_NE(cc.error().find("unknown congestion control"), std::string::npos);
    EXPECT_NE(cc.error().find("fixed:N"), std::string::npos);
  }
}

TEST(CongestionFactoryTest, RejectsBadFixedCounts) {
  for (const char* spec : {"fixed:", "fixed:0", "fixed:-1", "fixed:1x", "fixed:2000000",
                           "fixed:99999999999999999999"}) {
    auto cc = make_congestion_control(spec, kParams);
    ASSERT_FALSE(cc) << spec;
    EXPECT_NE(cc.error().find(spec), std::string::npos);
  }
}

TEST(FixedWindowTest, IgnoresEveryCongestionSignal) {
  FixedWindow cc(kParams, 5);
  AckEvent ack;
  ack.bytes_acked = 5000;
  for (int i = 0; i < 100; ++i) {
    cc.on_ack(ack);
  }
  EXPECT_EQ(cc.cwnd(), 5000u);
  cc.on_congestion_event(LossEvent{Instant{}, 5000, 5000});
  EXPECT_EQ(cc.cwnd(), 5000u);
  cc.on_rto(LossEvent{Instant{}, 5000, 5000});
  EXPECT_EQ(cc.cwnd(), 5000u);
  EXPECT_EQ(cc.on_partial_ack(ack), PartialAckResponse::RetransmitNextUnacked);
  cc.set_mss(1460);
  EXPECT_EQ(cc.cwnd(), 5u * 1460);
}

}  // namespace
}  // namespace tinytcp::tcp
