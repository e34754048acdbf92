#include "net/icmpv6_responder.hh"

#include <algorithm>
#include <optional>

#include <spdlog/spdlog.h>

#include "util/buffer.hh"
#include "util/check.hh"
#include "wire/ipv6_chain.hh"

namespace tinytcp::net {

using wire::Icmpv6Message;
using wire::Ipv6Address;
using wire::Ipv6Header;
namespace icmpv6 = wire::icmpv6;

const char* to_string(Icmpv6Suppressed s) {
  switch (s) {
    case Icmpv6Suppressed::RateLimited:
      return "ICMPv6 error rate limit";
    case Icmpv6Suppressed::AboutIcmpv6Error:
      return "no ICMPv6 error about an ICMPv6 error";
    case Icmpv6Suppressed::AboutRedirect:
      return "no ICMPv6 error about a redirect";
    case Icmpv6Suppressed::AboutMulticast:
      return "no ICMPv6 error about a packet to multicast";
    case Icmpv6Suppressed::AboutLinkMulticast:
      return "no ICMPv6 error about a link-layer multicast or broadcast";
    case Icmpv6Suppressed::AboutNonUnicastSource:
      return "no ICMPv6 error to a non-unicast source";
    case Icmpv6Suppressed::EchoFromNonUnicast:
      return "no echo reply to a non-unicast source";
    case Icmpv6Suppressed::kCount:
      break;
  }
  return "?";
}

namespace {

// §2.4(e.6): the source must name one node. The loopback address never comes
// from a link (RFC 4291 §2.5.3).
bool is_unicast_source(const Ipv6Address& a) {
  return !a.is_unspecified() && !a.is_multicast() && !a.is_loopback();
}

// The ICMPv6 type of the invoking packet, or nullopt if it is not ICMPv6 or
// its upper layer cannot be found (a broken chain, a later fragment): then it
// cannot be an error we would answer in a loop. -1 when it is ICMPv6 with no
// type byte.
std::optional<int> invoking_icmpv6_type(const wire::Ipv6View& original) {
  auto chain = wire::parse_ipv6_chain(original);
  if (chain && chain->fragment) {
    if (chain->fragment->offset != 0) {
      return std::nullopt;
    }
    chain = wire::continue_ipv6_chain(*chain, original.payload);
  }
  if (!chain || chain->fragment || chain->protocol != wire::ipv6::kIcmpv6) {
    return std::nullopt;
  }
  if (chain->offset >= original.payload.size()) {
    return -1;
  }
  return static_cast<uint8_t>(original.payload[chain->offset]);
}

constexpr size_t kBufferSize = Ipv6Header::kSize + 0xffff;

}  // namespace

Icmpv6Responder::Icmpv6Responder(const Config& config)
    : config_(config), errors_(config.errors_per_second, config.burst) {}

std::string_view Icmpv6Responder::build(const Ipv6Address& src, const Ipv6Address& dst,
                                        const Icmpv6Message& message) {
  const size_t payload = Icmpv6Message::kHeaderSize + message.data.size();
  TINYTCP_DCHECK(Ipv6Header::kSize + payload <= kBufferSize);
  if (!buffer_) {
    buffer_.reset(new char[kBufferSize]);
  }
  Ipv6Header h;
  h.payload_length = static_cast<uint16_t>(payload);
  h.next_header = wire::ipv6::kIcmpv6;
  h.hop_limit = config_.hop_limit;
  h.src = src;
  h.dst = dst;
  BufferWriter w(buffer_.get(), kBufferSize);
  serialize(h, w);
  serialize(message, src, dst, w);
  TINYTCP_DCHECK(w.ok());
  return w.written();
}

std::string_view Icmpv6Responder::echo_reply(const wire::Ipv6View& request,
                                             const Icmpv6Message& echo, const Ipv6Address& src) {
  TINYTCP_DCHECK(is_unicast_source(src));
  if (!is_unicast_source(request.header.src)) {
    stats_.suppressed.count(Icmpv6Suppressed::EchoFromNonUnicast);
    SPDLOG_DEBUG("icmpv6: {}", to_string(Icmpv6Suppressed::EchoFromNonUnicast));
    return {};
  }
  ++stats_.echo_replies;
  // RFC 4443 §4.2: the reply carries the request's identifier, sequence and data.
  return build(
      src, request.header.src,
      Icmpv6Message::echo(icmpv6::kEchoReply, echo.echo_id(), echo.echo_sequence(), echo.data));
}

bool Icmpv6Responder::may_send_error(uint8_t type, uint8_t code, const wire::Ipv6View& original,
                                     bool link_multicast, Instant now) {
  const Ipv6Header& h = original.header;
  const auto suppress = [this](Icmpv6Suppressed why) {
    stats_.suppressed.count(why);
    SPDLOG_DEBUG("icmpv6: suppressed: {}", to_string(why));
    return false;
  };
  if (!is_unicast_source(h.src)) {
    return suppress(Icmpv6Suppressed::AboutNonUnicastSource);
  }
  const auto invoking = invoking_icmpv6_type(original);
  if (invoking && *invoking < 128) {
    return suppress(Icmpv6Suppressed::AboutIcmpv6Error);
  }
  if (invoking && *invoking == icmpv6::kRedirect) {
    return suppress(Icmpv6Suppressed::AboutRedirect);
  }
  // §2.4(e.3-e.5) and their two exceptions.
  const bool excepted = type == icmpv6::kPacketTooBig ||
                        (type == icmpv6::kParameterProblem && code == icmpv6::kUnrecognizedOption);
  if (!excepted && h.dst.is_multicast()) {
    return suppress(Icmpv6Suppressed::AboutMulticast);
  }
  if (!excepted && link_multicast) {
    return suppress(Icmpv6Suppressed::AboutLinkMulticast);
  }
  if (!errors_.take(now)) {
    return suppress(Icmpv6Suppressed::RateLimited);
  }
  return true;
}

std::string_view Icmpv6Responder::error(uint8_t type, uint8_t code, uint32_t rest,
                                        const wire::Ipv6View& original,
                                        std::string_view original_bytes, const Ipv6Address& src,
                                        Instant now, bool link_multicast) {
  TINYTCP_DCHECK(type < 128);
  TINYTCP_DCHECK(is_unicast_source(src));
  if (!may_send_error(type, code, original, link_multicast, now)) {
    return {};
  }
  ++stats_.errors;
  // Not past the invoking packet's own end (Ethernet padding), nor past
  // §2.4(c)'s limit, which Icmpv6Message::error applies.
  const size_t length =
      std::min(original_bytes.size(), Ipv6Header::kSize + original.payload.size());
  return build(src, original.header.src,
               Icmpv6Message::error(type, code, rest, original_bytes.substr(0, length)));
}

}  // namespace tinytcp::net
