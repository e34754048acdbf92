// A close-first server churning connections through two Hosts in memory:
// b connects to a, sends a request, a answers and closes first (so a holds
// the TIME-WAIT, as a web server does), b reads and closes. Datagrams go
// through a zero-delay queue; the manual clock advances 50 us per connection,
// so TIME-WAIT (60 s) sees 20,000 connections a second of virtual time.
// items_per_second is how many connections a second the two Hosts sustain
// on one core. Counters: a's SocketLimit drops and TIME-WAIT overflows (both
// must be 0), the TIME-WAIT table at the end, and the process's RSS growth
// between 2 MSL of virtual time and the end (0 when memory is flat; only
// meaningful when the run lasts past 2 MSL: --benchmark_min_time=60).

#include <benchmark/benchmark.h>

#include <unistd.h>

#include <cstdio>
#include <deque>
#include <optional>
#include <string>
#include <utility>

#include "stack/host.hh"

namespace tinytcp::stack {
namespace {

using namespace std::chrono_literals;

const wire::Ipv4Address kServer = wire::Ipv4Address::from_octets(169, 254, 7, 1);
const wire::Ipv4Address kClient = wire::Ipv4Address::from_octets(169, 254, 7, 2);

double rss_kib() {
  long pages = 0;
  long resident = 0;
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) {
    return 0;
  }
  if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) {
    resident = 0;
  }
  std::fclose(f);
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) / 1024.0;
}

HostConfig churn_config(wire::Ipv4Address address) {
  HostConfig c;
  c.address = address;
  c.secret = "bm_host_churn-secret-0123456789";
  c.max_sockets = 64;  // a close-first server must not need a socket per TIME-WAIT
  c.tcp.receive_buffer_bytes = 16 * 1024;
  c.tcp.send_buffer_bytes = 16 * 1024;
  return c;
}

class Churn {
 public:
  Churn()
      : server_(churn_config(kServer), [this](std::string_view d) { queue(kClient, d); }),
        client_(churn_config(kClient), [this](std::string_view d) { queue(kServer, d); }),
        listener_(*server_.listen(80, 64)) {}

  // One connection, start to finish; false if it did not complete.
  bool exchange() {
    const auto c = client_.connect(kServer, 80, now_);
    if (!c) {
      return false;
    }
    deliver();
    const auto s = server_.accept(listener_);
    if (!s || client_.write(*c, "GET", now_) != 3) {
      return false;
    }
    deliver();
    char buf[16];
    if (server_.read(*s, buf, sizeof buf, now_) != 3) {
      return false;
    }
    server_.write(*s, "200 OK", now_);
    server_.close(*s, now_);  // first: the server keeps the TIME-WAIT
    deliver();
    const bool answered = client_.read(*c, buf, sizeof buf, now_) == 6;
    client_.close(*c, now_);
    deliver();
    now_ += 50us;
    server_.tick(now_);
    client_.tick(now_);
    deliver();
    return answered;
  }

  Instant now() const { return now_; }
  const Host& server() const { return server_; }

 private:
  void queue(wire::Ipv4Address to, std::string_view datagram) {
    packets_.emplace_back(to, std::string(datagram));
  }
  void deliver() {
    while (!packets_.empty()) {
      const auto [to, bytes] = std::move(packets_.front());
      packets_.pop_front();
      (to == kServer ? server_ : client_).receive_datagram(bytes, now_);
    }
  }

  Instant now_;
  std::deque<std::pair<wire::Ipv4Address, std::string>> packets_;
  Host server_;
  Host client_;
  SocketId listener_;
};

void bm_host_churn(benchmark::State& state) {
  Churn churn;
  uint64_t failed = 0;
  std::optional<double> rss_at_2msl;
  for (auto _ : state) {
    failed += churn.exchange() ? 0u : 1u;
    if (!rss_at_2msl && churn.now() - Instant{} >= 2 * tcp::TcpConfig{}.msl) {
      rss_at_2msl = rss_kib();
    }
  }
  const HostStats& stats = churn.server().stats();
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
  state.counters["failed"] = static_cast<double>(failed);
  state.counters["socket_limit_drops"] = static_cast<double>(stats.drops[HostDrop::SocketLimit]);
  state.counters["time_wait_overflow"] = static_cast<double>(stats.time_wait_overflow);
  state.counters["time_wait_reused"] = static_cast<double>(stats.time_wait_reused);
  state.counters["time_wait"] = static_cast<double>(churn.server().time_wait_count());
  state.counters["virtual_s"] = std::chrono::duration<double>(churn.now() - Instant{}).count();
  state.counters["rss_growth_kib"] = rss_at_2msl ? rss_kib() - *rss_at_2msl : -1;
}
BENCHMARK(bm_host_churn);

}  // namespace
}  // namespace tinytcp::stack
