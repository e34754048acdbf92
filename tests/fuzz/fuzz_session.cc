// Any bytes into the session layer: into a SessionAcceptor carrier (before and
// after a real handshake) and into a client Session that has opened. Whatever
// arrives, nothing crashes, nothing buffers without bound, and a carrier the
// session gave up on stays given up on.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "session/session.hh"
#include "session/session_acceptor.hh"
#include "util/check.hh"
#include "util/random.hh"

namespace {

using namespace tinytcp;
using namespace tinytcp::session;

SessionConfig config(uint64_t seed, bool psk) {
  SessionConfig c;
  c.replay_capacity = 64 * 1024;
  c.receive_capacity = 64 * 1024;
  c.ack_interval = 4096;
  c.max_sessions = 4;
  c.max_pending_carriers = 4;
  auto rng = std::make_shared<Rng>(seed);
  c.random = [rng](size_t n) { return rng->bytes(n); };
  if (psk) {
    c.psk = "fuzz key";
  }
  return c;
}

// Output never grows past what a session may have queued.
constexpr size_t kOutputBound = 64 * 1024 + kMaxDataBody + 4096;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) {
    return 0;
  }
  const uint8_t mode = data[0];
  const size_t piece = 1 + static_cast<size_t>(mode & 0x1f) * 97;
  const bool psk = (mode & 0x20) != 0;
  const bool handshake_first = (mode & 0x40) != 0;
  const bool into_client = (mode & 0x80) != 0;
  std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);

  SessionAcceptor acceptor(config(1, psk));
  Session client(config(2, psk));
  Instant now;
  acceptor.on_carrier_accepted(1, now);
  if (handshake_first || into_client) {
    // A real client opens a session on carrier 1 first.
    client.attach_carrier(now);
    acceptor.on_carrier_input(1, client.carrier_output(), now);
    client.consume_carrier_output(client.carrier_output().size());
    client.on_carrier_input(acceptor.carrier_output(1), now);
    acceptor.consume_carrier_output(1, acceptor.carrier_output(1).size());
    client.write("hello from the client");
  }
  while (!input.empty()) {
    const auto chunk = input.substr(0, piece);
    input.remove_prefix(chunk.size());
    if (into_client) {
      client.on_carrier_input(chunk, now);
      TINYTCP_CHECK(client.carrier_output().size() <= kOutputBound);
      TINYTCP_CHECK(client.stats().bytes_received <= 64 * 1024 + client.stats().bytes_read);
      client.consume_carrier_output(client.carrier_output().size() / 2);
      while (!client.readable().empty() && (mode & 1) != 0) {
        client.consume(client.readable().size());
      }
    } else {
      acceptor.on_carrier_input(1, chunk, now);
      TINYTCP_CHECK(acceptor.carrier_output(1).size() <= kOutputBound);
      TINYTCP_CHECK(acceptor.session_count() <= 4);
      acceptor.consume_carrier_output(1, acceptor.carrier_output(1).size());
      if (Session* s = acceptor.session_of(1)) {
        s->write("reply");
        while (!s->readable().empty()) {
          s->consume(s->readable().size());
        }
      }
    }
    while (acceptor.next_event()) {
    }
    now += std::chrono::milliseconds(100);
    acceptor.tick(now);
    client.tick(now);
  }
  return 0;
}
