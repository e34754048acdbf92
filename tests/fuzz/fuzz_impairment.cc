// The impairment stage from any bytes: the first line is parsed as an
// impairment spec (which must never crash, and must read back its own
// canonical form unchanged); the rest drives the model with pushes and clock
// steps, checking that nothing is lost or invented (every packet pushed is
// released, held or counted as dropped) and that releases never go back in time.

#include <cstddef>
#include <cstdint>
#include <string>

#include "io/impairment.hh"
#include "io/impairment_spec.hh"
#include "util/buffer.hh"
#include "util/check.hh"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tinytcp;
  using namespace tinytcp::io;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t newline = input.find('\n');
  const std::string_view spec = input.substr(0, newline);
  auto parsed = parse_impairment(spec);
  if (!parsed) {
    return 0;
  }
  const std::string canonical = format_impairment(*parsed);
  const auto again = parse_impairment(canonical);
  TINYTCP_CHECK(again && format_impairment(*again) == canonical);
  if (newline == std::string_view::npos) {
    return 0;
  }

  ImpairmentConfig config = *parsed;
  config.hold_limit_packets = std::min<size_t>(config.hold_limit_packets, 1000);
  ImpairmentModel model(config, 1);
  BufferReader in(input.substr(newline + 1));
  Instant now;
  Instant last_release;
  uint64_t released = 0;
  const PacketHandler out = [&](std::string_view) {
    TINYTCP_CHECK(now >= last_release);
    last_release = now;
    ++released;
  };
  static const std::string packet(1500, 'p');
  while (in.ok() && in.remaining() > 0) {
    const uint8_t op = in.u8();
    if (op & 1) {
      model.push(std::string_view(packet).substr(0, in.u16() % (packet.size() + 1)), now);
    } else {
      now += std::chrono::microseconds(in.u16());
      model.release(now, out);
    }
  }
  const ImpairmentStats& s = model.stats();
  TINYTCP_CHECK(s.packets_out == released);
  TINYTCP_CHECK(s.packets_in + s.duplicated ==
                s.packets_out + model.held_packets() + s.drops.total());
  return 0;
}
