// tinyrouter's command line (common/router_flags.hh): interfaces, routes,
// impairments, and the table they make.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/router_flags.hh"

namespace tinytcp::apps {
namespace {

using wire::Ipv4Address;

InterfaceSpec iface(const char* text) {
  auto spec = parse_interface_spec(text);
  EXPECT_TRUE(spec) << text;
  return spec ? *spec : InterfaceSpec{};
}

TEST(RouterFlagsTest, ParsesAnInterface) {
  const InterfaceSpec s = iface("tap0=10.0.0.1/24");
  EXPECT_EQ(s.name, "tap0");
  EXPECT_EQ(s.address, Ipv4Address::from_octets(10, 0, 0, 1));
  EXPECT_EQ(s.prefix_length, 24);
}

TEST(RouterFlagsTest, RejectsBadInterfaces) {
  for (const char* bad :
       {"tap0", "=10.0.0.1/24", "tap0=10.0.0.1", "tap0=10.0.0.1/33", "tap0=10.0.0.1/",
        "tap0=10.0.0/24", "tap0=10.0.0.0/24", "tap0=10.0.0.255/24", "tap0=10.0.0.1/31",
        "tap0=10.0.0.1/0", "averyveryverylongname=10.0.0.1/24", "ta p0=10.0.0.1/24",
        "tap0=10.0.0.1/24x", "tap:0=10.0.0.1/24"}) {
    const auto r = parse_interface_spec(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().rfind("--if ", 0), 0U) << r.error();
  }
}

TEST(RouterFlagsTest, ParsesRoutesAndDefault) {
  const auto r = parse_route_spec("10.0.2.0/24=10.0.1.2");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->prefix, Ipv4Address::from_octets(10, 0, 2, 0));
  EXPECT_EQ(r->prefix_length, 24);
  EXPECT_EQ(r->gateway, Ipv4Address::from_octets(10, 0, 1, 2));
  const auto d = parse_route_spec("default=10.0.0.254");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->prefix_length, 0);
  EXPECT_TRUE(d->prefix.is_zero());
}

TEST(RouterFlagsTest, RejectsBadRoutes) {
  for (const char* bad : {"10.0.2.0/24", "10.0.2.1/24=10.0.1.2", "10.0.2.0/24=gw",
                          "10.0.2.0=10.0.1.2", "=10.0.1.2", "10.0.2.0/24="}) {
    const auto r = parse_route_spec(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().rfind("--route ", 0), 0U);
  }
}

TEST(RouterFlagsTest, ParsesAnImpairmentPerInterface) {
  const auto i = parse_interface_impairment("tap1:loss=30%");
  ASSERT_TRUE(i);
  EXPECT_EQ(i->name, "tap1");
  EXPECT_DOUBLE_EQ(i->config.loss, 0.3);
  EXPECT_FALSE(parse_interface_impairment("loss=30%"));
  EXPECT_FALSE(parse_interface_impairment("tap1:loss=lots"));
  EXPECT_FALSE(parse_interface_impairment(":loss=1%"));
}

TEST(RouterFlagsTest, PlansConnectedRoutesThenGatewayRoutesOnTheirInterface) {
  const std::vector<InterfaceSpec> ifs{iface("tap0=10.0.0.1/24"), iface("tap1=10.0.1.1/24")};
  const auto plan = plan_routes(
      ifs, {*parse_route_spec("10.0.2.0/24=10.0.1.2"), *parse_route_spec("default=10.0.0.254")});
  ASSERT_TRUE(plan) << plan.error();
  ASSERT_EQ(plan->size(), 4U);
  EXPECT_EQ((*plan)[0].prefix, Ipv4Address::from_octets(10, 0, 0, 0));
  EXPECT_EQ((*plan)[0].prefix_length, 24);
  EXPECT_EQ((*plan)[0].interface, 0U);
  EXPECT_FALSE((*plan)[0].next_hop);
  EXPECT_EQ((*plan)[1].interface, 1U);
  EXPECT_EQ((*plan)[2].interface, 1U);
  EXPECT_EQ((*plan)[2].next_hop, Ipv4Address::from_octets(10, 0, 1, 2));
  EXPECT_EQ((*plan)[3].interface, 0U);
  EXPECT_EQ((*plan)[3].prefix_length, 0);
}

TEST(RouterFlagsTest, RefusesInconsistentPlans) {
  const auto plan = [](std::vector<const char*> ifs, std::vector<const char*> routes) {
    std::vector<InterfaceSpec> i;
    for (const char* t : ifs) {
      i.push_back(iface(t));
    }
    std::vector<RouteSpec> r;
    for (const char* t : routes) {
      r.push_back(*parse_route_spec(t));
    }
    return plan_routes(i, r);
  };
  EXPECT_FALSE(plan({"tap0=10.0.0.1/24", "tap0=10.0.1.1/24"}, {}));    // name twice
  EXPECT_FALSE(plan({"tap0=10.0.0.1/24", "tap1=10.0.0.2/24"}, {}));    // same network
  EXPECT_FALSE(plan({"tap0=10.0.0.1/16", "tap1=10.0.1.1/24"}, {}));    // overlap
  EXPECT_FALSE(plan({"tap0=10.0.0.1/24"}, {"10.0.2.0/24=10.9.0.1"}));  // gateway off-link
  EXPECT_FALSE(plan({"tap0=10.0.0.1/24"}, {"10.0.2.0/24=10.0.0.1"}));  // gateway is us
  EXPECT_TRUE(plan({"tap0=10.0.0.1/24", "tap1=10.0.1.1/24"}, {"10.0.2.0/24=10.0.0.7"}));
}

}  // namespace
}  // namespace tinytcp::apps
