// Two whole Hosts, each with an IPv4 and an IPv6 address, over a seeded
// lossy, reordering link on a manual clock: a transfer between their IPv6
// addresses arrives byte-exact within bounded virtual time, as a table over
// loss rates (issue 20). TINYTCP_SEED=<n> replays a run.

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "stack/host.hh"
#include "util/random.hh"
#include "wire/ipv6.hh"

namespace tinytcp::sim {
namespace {

using namespace std::chrono_literals;
using stack::Host;
using stack::HostConfig;
using stack::IpAddress;
using stack::SocketId;

const wire::Ipv6Address kServer6 = *wire::Ipv6Address::parse("fd00:144::1");
const wire::Ipv6Address kClient6 = *wire::Ipv6Address::parse("fd00:144::2");

HostConfig config(uint8_t last, const wire::Ipv6Address& v6) {
  HostConfig c;
  c.address = wire::Ipv4Address::from_octets(169, 254, 144, last);
  c.ipv6 = v6;
  c.secret = "sim-ipv6-secret-0123456789";
  return c;
}

std::string drops(const Host& h) {
  std::string out;
  for (size_t i = 0; i < static_cast<size_t>(stack::HostDrop::kCount); ++i) {
    const auto d = static_cast<stack::HostDrop>(i);
    if (h.stats().drops[d] > 0) {
      out += std::string(stack::to_string(d)) + "=" + std::to_string(h.stats().drops[d]) + " ";
    }
  }
  return out;
}

struct Outcome {
  std::string error;  // empty: the transfer arrived intact in time
  Duration took{};
  uint64_t dropped = 0;
};

// Sends `size` bytes from the client to the server over IPv6 with `loss` on
// both directions, 10 ms one way plus up to 10 ms (reordering). The client
// writes once ESTABLISHED: shutdown_write() in SYN-SENT deletes the TCB
// (RFC 9293 §3.10.4, as Linux).
Outcome transfer(double loss, size_t size, uint64_t seed) {
  Rng rng(seed);
  Instant now;
  std::multimap<Instant, std::pair<int, std::string>> link;  // arrival -> (to, bytes)
  Outcome out;
  auto send = [&](int to, std::string_view d) {
    if (rng.chance(loss)) {
      ++out.dropped;
      return;
    }
    const auto extra = std::chrono::microseconds(rng.uniform(0, 10'000));
    link.emplace(now + 10ms + extra, std::make_pair(to, std::string(d)));
  };
  Host server(config(1, kServer6), [&](std::string_view d) { send(0, d); });
  Host client(config(2, kClient6), [&](std::string_view d) { send(1, d); });

  const std::string data = rng.bytes(size);
  const auto listener = server.listen(9000);
  const auto id = client.connect(IpAddress(kServer6), 9000, now);
  if (!listener || !id) {
    return {"no listener or connection", {}, 0};
  }
  std::optional<SocketId> accepted;
  std::string got;
  size_t written = 0;
  const Instant end = now + 120s;
  char buf[16384];
  while (got.size() < data.size()) {
    if (client.info(*id)->state == tcp::TcpState::Established) {
      written += client.write(*id, std::string_view(data).substr(written), now);
    }
    if (written == data.size()) {
      client.shutdown_write(*id, now);
    }
    if (!accepted) {
      accepted = server.accept(*listener);
    }
    if (accepted) {
      for (size_t n; (n = server.read(*accepted, buf, sizeof buf, now)) > 0;) {
        got.append(buf, n);
      }
    }
    std::optional<Instant> next;
    if (!link.empty()) {
      next = link.begin()->first;
    }
    for (const Host* h : {&server, &client}) {
      if (const auto d = h->next_deadline(); d && (!next || *d < *next)) {
        next = d;
      }
    }
    if (got.size() == data.size()) {
      break;
    }
    if (!next || *next > end) {
      return {"timed out with " + std::to_string(got.size()) + " bytes; server in/drops " +
                  std::to_string(server.stats().datagrams_in) + "/" +
                  std::to_string(server.stats().drops.total()) + " client in/drops " +
                  std::to_string(client.stats().datagrams_in) + "/" +
                  std::to_string(client.stats().drops.total()) + " accepted " +
                  std::to_string(accepted.has_value()) + " " + drops(server),
              now - Instant{}, 0};
    }
    now = std::max(now, *next);
    while (!link.empty() && link.begin()->first <= now) {
      auto [to, bytes] = std::move(link.begin()->second);
      link.erase(link.begin());
      (to == 1 ? server : client).receive_datagram(bytes, now);
    }
    server.tick(now);
    client.tick(now);
  }
  if (got != data) {
    return {"bytes differ", now - Instant{}, out.dropped};
  }
  if (server.info(*accepted)->tuple.family() != stack::IpFamily::V6) {
    return {"not over IPv6", now - Instant{}, out.dropped};
  }
  out.took = now - Instant{};
  return out;
}

TEST(HostIpv6TransferTest, ByteExactOverLossyLinks) {
  const uint64_t seed = seed_from_env("TINYTCP_SEED", 20261127);
  for (const double loss : {0.0, 0.01, 0.05, 0.10}) {
    const Outcome o = transfer(loss, 300'000, seed);
    EXPECT_EQ(o.error, "") << "loss " << loss << " TINYTCP_SEED=" << seed;
    if (loss > 0) {
      EXPECT_GT(o.dropped, 0u) << "loss " << loss;
    }
  }
}

}  // namespace
}  // namespace tinytcp::sim
