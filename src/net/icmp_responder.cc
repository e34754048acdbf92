#include "net/icmp_responder.hh"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "util/buffer.hh"
#include "util/check.hh"

namespace tinytcp::net {

using wire::IcmpMessage;
using wire::Ipv4Address;
using wire::Ipv4Header;

const char* to_string(IcmpSuppressed s) {
  switch (s) {
    case IcmpSuppressed::RateLimited:
      return "ICMP error rate limit";
    case IcmpSuppressed::AboutIcmpError:
      return "no ICMP error about an ICMP error";
    case IcmpSuppressed::AboutFragment:
      return "no ICMP error about a non-first fragment";
    case IcmpSuppressed::AboutNonUnicast:
      return "no ICMP error about non-unicast traffic";
    case IcmpSuppressed::kCount:
      break;
  }
  return "?";
}

IcmpResponder::IcmpResponder(const Config& config)
    : config_(config), errors_(config.errors_per_second, config.burst) {}

std::string_view IcmpResponder::build(Ipv4Address src, Ipv4Address dst,
                                      const IcmpMessage& message) {
  const size_t total = Ipv4Header::kMinSize + IcmpMessage::kHeaderSize + message.data.size();
  TINYTCP_DCHECK(total <= Ipv4Header::kMaxTotalLength);
  if (!buffer_) {
    buffer_.reset(new char[Ipv4Header::kMaxTotalLength]);
  }
  Ipv4Header h;
  h.total_length = static_cast<uint16_t>(total);
  h.id = next_id_++;
  h.ttl = config_.ttl;
  h.protocol = static_cast<uint8_t>(wire::IpProtocol::kIcmp);
  h.src = src;
  h.dst = dst;
  BufferWriter w(buffer_.get(), Ipv4Header::kMaxTotalLength);
  serialize(h, w);
  serialize(message, w);
  TINYTCP_DCHECK(w.ok());
  return w.written();
}

std::string_view IcmpResponder::echo_reply(const wire::Ipv4View& request, const IcmpMessage& echo,
                                           Ipv4Address src) {
  ++stats_.echo_replies;
  // RFC 792: the reply carries the request's identifier, sequence and data.
  return build(
      src, request.header.src,
      IcmpMessage::echo(wire::icmp::kEchoReply, echo.echo_id(), echo.echo_sequence(), echo.data));
}

bool IcmpResponder::may_send_error(const wire::Ipv4View& original, bool link_multicast,
                                   Instant now) {
  const Ipv4Header& h = original.header;
  const auto suppress = [this](IcmpSuppressed why) {
    stats_.suppressed.count(why);
    SPDLOG_DEBUG("icmp: suppressed: {}", to_string(why));
    return false;
  };
  if (h.fragment_offset != 0) {
    return suppress(IcmpSuppressed::AboutFragment);
  }
  if (link_multicast || h.dst.is_limited_broadcast() || h.dst.is_multicast() || h.src.is_zero() ||
      h.src.is_limited_broadcast() || h.src.is_multicast() || h.src.is_loopback()) {
    return suppress(IcmpSuppressed::AboutNonUnicast);
  }
  if (h.protocol == static_cast<uint8_t>(wire::IpProtocol::kIcmp)) {
    // RFC 1812 §4.3.2.7: an ICMP error is never sent about an ICMP error;
    // only queries (echo and the like) may provoke one.
    const auto type = original.payload.empty() ? wire::icmp::kDestinationUnreachable
                                               : static_cast<uint8_t>(original.payload[0]);
    if (type != wire::icmp::kEchoRequest && type != wire::icmp::kEchoReply) {
      return suppress(IcmpSuppressed::AboutIcmpError);
    }
  }
  if (!errors_.take(now)) {
    return suppress(IcmpSuppressed::RateLimited);
  }
  return true;
}

std::string_view IcmpResponder::error(uint8_t type, uint8_t code, uint32_t rest,
                                      const wire::Ipv4View& original,
                                      std::string_view original_bytes, Ipv4Address src, Instant now,
                                      bool link_multicast) {
  if (!may_send_error(original, link_multicast, now)) {
    return {};
  }
  ++stats_.errors;
  const size_t room = kMaxErrorDatagram - Ipv4Header::kMinSize - IcmpMessage::kHeaderSize;
  const size_t quoted =
      std::min<size_t>({room, original.header.total_length, original_bytes.size()});
  IcmpMessage m;
  m.type = type;
  m.code = code;
  m.rest = rest;
  m.data = original_bytes.substr(0, quoted);
  return build(src, original.header.src, m);
}

}  // namespace tinytcp::net
