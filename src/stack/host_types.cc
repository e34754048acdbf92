#include "stack/host_types.hh"

namespace tinytcp::stack {

const char* to_string(SocketError e) {
  switch (e) {
    case SocketError::NotFound:
      return "no such socket";
    case SocketError::AddressInUse:
      return "address in use";
    case SocketError::NoPortsFree:
      return "no ephemeral port free";
    case SocketError::TooManySockets:
      return "too many sockets";
    case SocketError::NotListener:
      return "not a listening socket";
    case SocketError::BadAddress:
      return "bad address";
    case SocketError::NoAddressOfFamily:
      return "no local address of that family";
    case SocketError::kCount:
      break;
  }
  return "unknown";
}

const char* to_string(HostDrop d) {
  switch (d) {
    case HostDrop::BadIpv4:
      return "bad IPv4";
    case HostDrop::NotForUs:
      return "not for our address";
    case HostDrop::BadTcp:
      return "bad TCP";
    case HostDrop::BadAddress:
      return "non-unicast address";
    case HostDrop::BadIcmp:
      return "bad ICMP";
    case HostDrop::IcmpStale:
      return "ICMP frag-needed or packet too big for no data in flight";
    case HostDrop::IcmpIgnored:
      return "ICMP ignored";
    case HostDrop::NoConnection:
      return "no connection (reset sent)";
    case HostDrop::SynBacklogFull:
      return "SYN backlog full";
    case HostDrop::BadCookie:
      return "ACK with a bad SYN cookie (reset sent)";
    case HostDrop::AcceptQueueFull:
      return "accept queue full";
    case HostDrop::SocketLimit:
      return "socket limit";
    case HostDrop::BadIpv6:
      return "bad IPv6";
    case HostDrop::BadIpv6Chain:
      return "IPv6 extension headers refused";
    case HostDrop::NoNextHeader:
      return "IPv6 no next header";
    case HostDrop::Ndp:
      return "neighbor discovery (not the host's)";
    case HostDrop::kCount:
      break;
  }
  return "unknown";
}

const char* to_string(SocketEvent e) {
  switch (e) {
    case SocketEvent::Connected:
      return "connected";
    case SocketEvent::Acceptable:
      return "acceptable";
    case SocketEvent::Readable:
      return "readable";
    case SocketEvent::Writable:
      return "writable";
    case SocketEvent::Closed:
      return "closed";
  }
  return "unknown";
}

}  // namespace tinytcp::stack
