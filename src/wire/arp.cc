#include "wire/arp.hh"

namespace tinytcp::wire {

const char* to_string(ArpError e) {
  switch (e) {
    case ArpError::Truncated:
      return "truncated";
    case ArpError::BadHardwareType:
      return "hardware type is not Ethernet";
    case ArpError::BadProtocolType:
      return "protocol type is not IPv4";
    case ArpError::BadHardwareLength:
      return "hardware address length is not 6";
    case ArpError::BadProtocolLength:
      return "protocol address length is not 4";
    case ArpError::BadOpcode:
      return "opcode is neither request nor reply";
    case ArpError::kCount:
      break;
  }
  return "?";
}

Expected<ArpMessage, ArpError> parse_arp(std::string_view payload) {
  BufferReader in(payload);
  const uint16_t hardware = in.u16();
  const uint16_t protocol = in.u16();
  const uint8_t hardware_length = in.u8();
  const uint8_t protocol_length = in.u8();
  const uint16_t opcode = in.u16();
  ArpMessage m;
  read_mac(in, m.sender_mac);
  m.sender_ip.value = in.u32();
  read_mac(in, m.target_mac);
  m.target_ip.value = in.u32();
  if (!in.ok()) {
    return make_unexpected(ArpError::Truncated);
  }
  if (hardware != ArpMessage::kHardwareEthernet) {
    return make_unexpected(ArpError::BadHardwareType);
  }
  if (protocol != static_cast<uint16_t>(EtherType::kIpv4)) {
    return make_unexpected(ArpError::BadProtocolType);
  }
  if (hardware_length != 6) {
    return make_unexpected(ArpError::BadHardwareLength);
  }
  if (protocol_length != 4) {
    return make_unexpected(ArpError::BadProtocolLength);
  }
  if (opcode != static_cast<uint16_t>(ArpOpcode::kRequest) &&
      opcode != static_cast<uint16_t>(ArpOpcode::kReply)) {
    return make_unexpected(ArpError::BadOpcode);
  }
  m.opcode = static_cast<ArpOpcode>(opcode);
  return m;
}

void serialize(const ArpMessage& m, BufferWriter& out) {
  out.u16(ArpMessage::kHardwareEthernet);
  out.u16(static_cast<uint16_t>(EtherType::kIpv4));
  out.u8(6);
  out.u8(4);
  out.u16(static_cast<uint16_t>(m.opcode));
  write_mac(out, m.sender_mac);
  out.u32(m.sender_ip.value);
  write_mac(out, m.target_mac);
  out.u32(m.target_ip.value);
}

}  // namespace tinytcp::wire
