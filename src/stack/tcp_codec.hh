#pragma once

// The codec between the tcp/ layer's abstract TcpSegment and the wire/ layer's
// TcpHeader: field by field, options included. Ports and addresses are not part
// of a TcpSegment (the Host's demultiplexer owns them), so they come in here.
// Neither function copies the payload: views alias the caller's bytes.

#include <cstdint>
#include <string_view>

#include "tcp/tcp_segment.hh"
#include "util/buffer.hh"
#include "wire/tcp_header.hh"

namespace tinytcp::stack {

// A parsed segment as the tcp/ layer sees it; the payload aliases view.payload.
tcp::TcpSegment to_segment(const wire::TcpView& view);
tcp::TcpSegment to_segment(const wire::TcpHeader& header, std::string_view payload);

// The wire header of `segment` between the given ports (checksum left 0:
// serialize_tcp() computes it).
wire::TcpHeader to_header(const tcp::TcpSegment& segment, uint16_t src_port, uint16_t dst_port);

// to_header() + serialize_tcp().
bool serialize_segment(const tcp::TcpSegment& segment, uint16_t src_port, uint16_t dst_port,
                       uint32_t src_ip, uint32_t dst_ip, BufferWriter& out);

}  // namespace tinytcp::stack
