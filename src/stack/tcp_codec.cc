#include "stack/tcp_codec.hh"

#include <algorithm>

namespace tinytcp::stack {

tcp::TcpSegment to_segment(const wire::TcpView& view) {
  return to_segment(view.header, view.payload);
}

tcp::TcpSegment to_segment(const wire::TcpHeader& h, std::string_view payload) {
  tcp::TcpSegment s;
  s.seqno = tcp::Wrap32{h.seqno};
  s.ackno = tcp::Wrap32{h.ackno};
  s.syn = h.syn;
  s.ack = h.ack;
  s.fin = h.fin;
  s.rst = h.rst;
  s.psh = h.psh;
  s.urg = h.urg;
  s.window = h.window;
  s.urgent_pointer = h.urgent_pointer;
  s.options.mss = h.mss;
  s.options.window_scale = h.window_scale;
  s.options.sack_permitted = h.sack_permitted;
  if (h.timestamps) {
    s.options.timestamps = tcp::Timestamps{h.timestamps->value, h.timestamps->echo_reply};
  }
  s.options.sack_count =
      static_cast<uint8_t>(std::min<size_t>(h.sack_count, tcp::TcpOptions::kMaxSackBlocks));
  for (size_t i = 0; i < s.options.sack_count; ++i) {
    s.options.sack[i] = tcp::SackBlock{tcp::Wrap32{h.sack[i].left}, tcp::Wrap32{h.sack[i].right}};
  }
  s.payload = payload;
  return s;
}

wire::TcpHeader to_header(const tcp::TcpSegment& s, uint16_t src_port, uint16_t dst_port) {
  wire::TcpHeader h;
  h.src_port = src_port;
  h.dst_port = dst_port;
  h.seqno = s.seqno.raw();
  h.ackno = s.ackno.raw();
  h.syn = s.syn;
  h.ack = s.ack;
  h.fin = s.fin;
  h.rst = s.rst;
  h.psh = s.psh;
  h.urg = s.urg;
  h.window = s.window;
  h.urgent_pointer = s.urgent_pointer;
  h.mss = s.options.mss;
  h.window_scale = s.options.window_scale;
  h.sack_permitted = s.options.sack_permitted;
  if (s.options.timestamps) {
    h.timestamps =
        wire::TcpTimestampOption{s.options.timestamps->value, s.options.timestamps->echo_reply};
  }
  h.sack_count =
      static_cast<uint8_t>(std::min<size_t>(s.options.sack_count, wire::TcpHeader::kMaxSackBlocks));
  for (size_t i = 0; i < h.sack_count; ++i) {
    h.sack[i] = wire::TcpSackBlock{s.options.sack[i].left.raw(), s.options.sack[i].right.raw()};
  }
  return h;
}

bool serialize_segment(const tcp::TcpSegment& segment, uint16_t src_port, uint16_t dst_port,
                       uint32_t src_ip, uint32_t dst_ip, BufferWriter& out) {
  return wire::serialize_tcp(to_header(segment, src_port, dst_port), segment.payload, src_ip,
                             dst_ip, out);
}

}  // namespace tinytcp::stack
