#include "tcp/option_negotiation.hh"

#include <gtest/gtest.h>

namespace tinytcp::tcp {
namespace {

TcpSegment syn_offering(bool ws, bool sack, bool ts, std::optional<uint16_t> mss) {
  TcpSegment syn;
  syn.syn = true;
  syn.options.mss = mss;
  if (ws) {
    syn.options.window_scale = 7;
  }
  syn.options.sack_permitted = sack;
  if (ts) {
    syn.options.timestamps = Timestamps{1234, 0};
  }
  return syn;
}

TEST(OptionNegotiationTest, OptionsInUseOnlyWhenBothSynsCarriedThem) {
  TcpConfig config;  // offers window scale, SACK and timestamps
  OptionNegotiation n;
  const NegotiatedOptions all = n.on_peer_syn(syn_offering(true, true, true, 1400), config);
  EXPECT_TRUE(all.window_scaling && all.sack && all.timestamps);
  EXPECT_EQ(all.peer.mss, 1400);
  EXPECT_EQ(all.peer.send_window_shift, 7);

  OptionNegotiation m;
  const NegotiatedOptions none = m.on_peer_syn(syn_offering(false, false, false, {}), config);
  EXPECT_FALSE(none.window_scaling || none.sack || none.timestamps);
  EXPECT_EQ(none.peer.send_window_shift, 0);
  EXPECT_EQ(none.peer.mss, config.default_peer_mss);  // RFC 9293 §3.7.1

  config.sack = false;
  OptionNegotiation o;
  EXPECT_FALSE(o.on_peer_syn(syn_offering(true, true, true, 1400), config).peer.sack);
}

TEST(OptionNegotiationTest, SynAckCarriesOnlyWhatTheSynOffered) {
  const TcpConfig config;
  OptionNegotiation n;
  n.on_peer_syn(syn_offering(false, false, false, 1460), config);
  TcpSegment syn_ack;
  syn_ack.syn = true;
  OptionNegotiation::offer(syn_ack.options, config, 99);
  ASSERT_TRUE(syn_ack.options.sack_permitted && syn_ack.options.timestamps);
  n.complete_syn(syn_ack, config, 8);
  EXPECT_FALSE(syn_ack.options.window_scale);  // RFC 7323 §1.3
  EXPECT_FALSE(syn_ack.options.sack_permitted);
  EXPECT_FALSE(syn_ack.options.timestamps);  // RFC 7323 §3.2
  EXPECT_EQ(syn_ack.options.mss, config.mss);
}

TEST(OptionNegotiationTest, ActiveSynOffersEverythingConfigured) {
  const TcpConfig config;
  const OptionNegotiation n;  // no peer SYN seen: our SYN opens
  TcpSegment syn;
  syn.syn = true;
  OptionNegotiation::offer(syn.options, config, 99);
  n.complete_syn(syn, config, 8);
  EXPECT_EQ(syn.options.window_scale, 8);
  EXPECT_TRUE(syn.options.sack_permitted);
  ASSERT_TRUE(syn.options.timestamps);
  EXPECT_EQ(syn.options.timestamps->value, 99u);
}

}  // namespace
}  // namespace tinytcp::tcp
