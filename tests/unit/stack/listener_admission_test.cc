#include "stack/listener_admission.hh"

#include <gtest/gtest.h>

namespace tinytcp::stack {
namespace {

using namespace std::chrono_literals;
using Verdict = ListenerAdmission::SynVerdict;

const std::string kSecret = "listener-admission-test-secret!!";

InboundSegment ack_from_client() {
  InboundSegment in;
  in.tuple = FourTuple{wire::Ipv4Address::from_octets(10, 0, 0, 1), 80,
                       wire::Ipv4Address::from_octets(10, 0, 0, 2), 40000};
  in.segment.ack = true;
  in.segment.seqno = tcp::Wrap32{1001};
  in.segment.ackno = tcp::Wrap32{12345};  // no cookie of ours
  return in;
}

TEST(ListenerAdmissionTest, SynQueueThenCookiesOrDrops) {
  ListenQueue q;
  q.backlog = 2;
  const ListenerAdmission with_cookies(kSecret, true);
  const ListenerAdmission without(kSecret, false);
  EXPECT_EQ(with_cookies.on_syn(q), Verdict::Open);
  ListenerAdmission::add_half_open(q);
  ListenerAdmission::add_half_open(q);
  EXPECT_EQ(with_cookies.on_syn(q), Verdict::Cookie);  // RFC 4987 §3.6
  EXPECT_EQ(without.on_syn(q), Verdict::Drop);
}

TEST(ListenerAdmissionTest, AcksAreCookiesOnlyWhileCookiesWereSentRecently) {
  ListenQueue q;
  q.backlog = 1;
  const ListenerAdmission admission(kSecret, true);
  const Instant t0 = Instant{} + 1000s;
  EXPECT_FALSE(admission.check_cookie(q, ack_from_client(), t0));
  ListenerAdmission::cookies_sent(q, t0);
  const auto checked = admission.check_cookie(q, ack_from_client(), t0 + 1s);
  ASSERT_TRUE(checked);
  EXPECT_FALSE(*checked);  // not a cookie we made
  EXPECT_FALSE(
      admission.check_cookie(q, ack_from_client(), t0 + 2 * tcp::SynCookies::kPeriod + 1s));
}

TEST(ListenerAdmissionTest, AcceptQueueBoundedByTheBacklog) {
  ListenQueue q;
  q.backlog = 1;
  ListenerAdmission::add_half_open(q);
  ListenerAdmission::add_half_open(q);
  EXPECT_TRUE(ListenerAdmission::on_handshake_complete(q, 7));
  EXPECT_FALSE(ListenerAdmission::on_handshake_complete(q, 8));
  EXPECT_EQ(q.half_open, 0u);
  ASSERT_EQ(q.ready.size(), 1u);
  EXPECT_EQ(q.ready.front(), 7u);
}

}  // namespace
}  // namespace tinytcp::stack
