#pragma once

// ACK coalescing on the way out: in a batch of outgoing IPv4 and IPv6 datagrams (what
// a stack sent during one pass of the event loop), a pure TCP ACK is left out
// when the later pure ACKs of the same connection that stay in the batch
// carry everything it said: the newest has a cumulative ACK at least as high,
// and each SACK block is below that, inside a block of the newest ACK, or
// inside blocks of two other kept ACKs. Only the newest window, SACK blocks
// and timestamp echo reach the peer, as if the stack had waited until the end
// of the pass to acknowledge; Linux does the same on receive with GRO and its
// compressed SACKs (tcp_comp_sack_nr).
//
// The newest ACK's blocks are the ones the next ACKs repeat, so it alone
// suffices for them. During heavy loss older blocks rotate out of the three
// or four that fit in an ACK; one of those is named only by ACKs of this
// batch, any of which the network may lose, so two must name it: of ACKs
// listing A; B,A; C,B,A; D,C,B; E,D,C only the first goes.
//
// Never removed: a duplicate ACK without SACK (the peer counts those for fast
// retransmit, RFC 5681 §3.2), a D-SACK (RFC 2883: the peer undoes spurious
// retransmissions with it), and datagrams that are anything else (data, SYN,
// FIN, RST, not TCP, IPv4 options, IPv6 extension headers). The two
// families are never mixed: an IPv4 and an IPv6 connection are different
// flows.
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
