#pragma once

// ACK coalescing on the way out: in a batch of outgoing IPv4 datagrams (what
// a stack sent during one pass of the event loop), a pure TCP ACK is left out
// when the later pure ACKs of the same connection that stay in the batch
// carry everything it said: the newest has a cumulative ACK at least as high,
// and each SACK block is either below that or inside a block of one of them.
// Only the newest window, SACK blocks and timestamp echo reach the peer, as if
// the stack had waited until the end of the pass to acknowledge; Linux does
// the same on receive with GRO and its compressed SACKs (tcp_comp_sack_nr).
// During heavy loss SACK blocks rotate out (three or four fit in an ACK): of
// ACKs listing A; B,A; C,B,A; D,C,B only the last two stay, which between
// them still name A to D. Never removed: a duplicate ACK without SACK (the
// peer counts those for fast retransmit, RFC 5681 §3.2), a D-SACK (RFC 2883:
// the peer undoes spurious retransmissions with it), an ACK with a SACK block
// no later kept ACK lists, and datagrams that are anything else (data, SYN,
// FIN, RST, not TCP, IPv4 options).
//
// A pure function over bytes; StackRuntime applies it before send_batch().

#include <cstddef>
#include <string_view>

namespace tinytcp::io {

// Removes the superseded ACKs from `datagrams[0, count)`, keeping the order of
// the rest, and returns how many are left. Looks at up to kMaxFlows
// connections per batch; ACKs of further ones are kept.
size_t coalesce_acks(std::string_view* datagrams, size_t count);

constexpr size_t kAckCoalescerMaxFlows = 16;

}  // namespace tinytcp::io
