#include "wire/ethernet.hh"

namespace tinytcp::wire {

const char* to_string(EthernetError e) {
  switch (e) {
    case EthernetError::Truncated:
      return "truncated";
    case EthernetError::LengthNotType:
      return "802.3 length field, not an EtherType";
    case EthernetError::kCount:
      break;
  }
  return "?";
}

void read_mac(BufferReader& in, MacAddress& mac) {
  for (auto& b : mac.bytes) {
    b = in.u8();
  }
}

void write_mac(BufferWriter& out, const MacAddress& mac) {
  for (const auto b : mac.bytes) {
    out.u8(b);
  }
}

Expected<EthernetView, EthernetError> parse_ethernet(std::string_view frame) {
  BufferReader in(frame);
  EthernetView view;
  read_mac(in, view.header.dst);
  read_mac(in, view.header.src);
  view.header.type = in.u16();
  if (!in.ok()) {
    return make_unexpected(EthernetError::Truncated);
  }
  // IEEE 802.3 §3.2.6: values up to 1500 are a length, 0x0600 and up a type.
  if (view.header.type < 0x0600) {
    return make_unexpected(EthernetError::LengthNotType);
  }
  view.payload = in.rest();
  return view;
}

void serialize(const EthernetHeader& header, BufferWriter& out) {
  write_mac(out, header.dst);
  write_mac(out, header.src);
  out.u16(header.type);
}

}  // namespace tinytcp::wire
