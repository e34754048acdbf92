#pragma once

// RouteTrie: longest-prefix match on a multibit trie with strides 16, 8, 8 and
// bitmap-compressed nodes (the node layout of Poptrie, Asai & Ohara,
// SIGCOMM 2015, at stride 8 split into four 64-slot groups).
//
// Lookup is at most three dependent reads plus the leaf: a direct table of
// 2^16 entries indexed by the top 16 bits (256 KiB, which stays in L2); an
// entry is either a leaf (the best route for that /16) or a level-2 node,
// whose slot for the next 8 bits is either a leaf or a level-3 node for the
// last 8 bits. A node is four 32-byte groups of 64 slots; a group holds a
// bitmap of slots that have children and a bitmap of where runs of equal
// leaves start, and a popcount turns a slot into an index in the dense child
// array and the run list. Up to three runs are stored in the group itself, so
// most lookups end with the group's cache line. Leaves are pushed down (each
// holds the best route covering its slot), so a lookup never backtracks.
// Memory: 1.2 MiB at 10^4 random routes, 39 MiB at 10^6 (a plain 16-8-8
// table with 1 KiB nodes would need ~300 MiB there).
//
// Why this and not a path-compressed binary trie: measured with bm_net.cc on
// the 2-vCPU dev box (docs/net.md), random addresses, prefix lengths uniform
// in 1..32 plus a default route: this trie 127 M lookups/s at 10^4 routes and
// 16 M/s at 10^6; a path-compressed trie 11 M/s and 1.5 M/s. The
// path-compressed walk makes ~15-20 dependent reads; this one at most 3.
//
// Updates: routes live in a table keyed by (prefix, length) and in per-/16
// lists; add() and remove() only mark what changed (a /16 block, or the
// short-prefix table for lengths <= 16), and the next lookup (or commit())
// recompiles just the dirty blocks. Replaced nodes are left as garbage and
// the arrays are compacted when garbage outgrows live data, so the cost of an
// update is amortised O(routes in its /16), plus O(2^16) when a prefix of 16
// bits or fewer changes.
//
// IPv6 (issue 20): the trie is a template on its key family
// (net/route_trie_key.hh). Below the same 2^16 direct table, an IPv6 lookup
// walks stride-8 nodes down to bit 128 (at most 14); the walk is one loop
// whose trip count is a constant of the family, so for IPv4 it unrolls to the
// 16-8-8 code above (callgrind: docs/ipv6.md). RouteTrie is the IPv4
// instantiation, a RouteTable; Ipv6RouteTrie the IPv6 one.

#include <array>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "net/route_table.hh"
#include "net/route_trie_key.hh"

namespace tinytcp::net {

template <typename K>
struct TrieLookup;

// For IPv4 the trie is itself the RouteTable (K::Base): its add, remove,
// lookup and size override the interface's with the same signatures, so a
// lookup needs no adjustment of `this` on the way in.
template <typename K>
class BasicRouteTrie : public K::Base {
 public:
  using Address = typename K::Address;
  using Param = typename K::Param;
  using RouteType = typename K::Route;

  BasicRouteTrie();

  // Adds the route, replacing one with the same prefix and length; host bits
  // are cleared. False if the prefix length is over K::kBits. (For IPv4 these
  // four override RouteTable's, which `override` cannot say in a template
  // whose IPv6 base has no virtual functions.)
  bool add(const RouteType& route);  // NOLINT(modernize-use-override)
  // Removes the route for exactly this prefix and length; false if absent.
  bool remove(Param prefix, uint8_t prefix_length);  // NOLINT(modernize-use-override)
  // The route with the longest prefix that matches `dst`, or nullptr; valid
  // until the next add() or remove().
  const RouteType* lookup(Param dst) {  // NOLINT(modernize-use-override)
    if (dirty_) {
      commit();
    }
    const uint32_t leaf = find_leaf(dst);
    return leaf == 0 ? nullptr : &slots_[leaf - 1].route;
  }
  size_t size() const { return size_; }  // NOLINT(modernize-use-override)

  // Recompiles what add() and remove() changed (lookup does it on demand).
  void commit();

  // Bytes held by the compiled lookup structure, for docs and tests.
  size_t compiled_bytes() const;

 private:
  static constexpr uint32_t kNodeBit = 0x80000000u;
  static constexpr size_t kBlocks = 1u << 16;

  // A group of up to kInlineLeaves runs keeps their leaves in the group
  // itself and costs no read of leaves_; otherwise leaf[0] holds
  // kExternalLeaves | the index in leaves_ of its first run. Groups are 32
  // bytes and 32-byte aligned, so a group never straddles a cache line.
  static constexpr uint32_t kExternalLeaves = 0x80000000u;
  static constexpr uint32_t kInlineLeaves = 3;

  struct alignas(32) Group {  // 64 slots of a stride-8 node
    uint64_t children = 0;    // bit s: slot s has a child node
    uint64_t runs = 0;        // bit s: a run of equal leaves starts at slot s
    uint32_t child_base = 0;
    uint32_t leaf[kInlineLeaves] = {};
  };
  friend struct TrieLookup<K>;
  struct Slot {
    RouteType route;
    uint32_t list_pos = 0;  // index in short_ids_ or block_ids_[block]
    bool used = false;
  };
  struct Extent {
    uint32_t nodes = 0;
    uint32_t leaves = 0;
  };

  // The leaf (route id + 1, or 0) for address `a`. Two copies of one body:
  // one compiled with the POPCNT instruction, used when the CPU has it (every
  // x86-64 since 2008), and a portable one; the baseline x86-64 target would
  // otherwise make each popcount a library call.
  uint32_t find_leaf(Param a) const {
    return has_popcnt_ ? find_leaf_popcnt(a) : find_leaf_generic(a);
  }
  uint32_t find_leaf_popcnt(Param a) const;
  uint32_t find_leaf_generic(Param a) const;

  std::vector<uint32_t>& list_for(const RouteType& r);
  void mark_block(uint32_t block);
  void rebuild_short_table();
  void compile_block(uint32_t block);
  // Fills the allocated node `node`, the 8 bits from bit `depth`, from `ids`
  // (the routes under it longer than `depth`, lengths ascending), where
  // `inherited` is the best shorter route; allocates and fills its children.
  void build_node(uint32_t node, unsigned depth, const std::vector<uint32_t>& ids,
                  uint32_t inherited);
  // Writes node `node` from 256 leaves and child flags; children start at
  // node index `child_base`.
  void emit_node(uint32_t node, const uint32_t* leaf, const bool* child, uint32_t child_base);

  std::vector<Slot> slots_;  // route id = index; leaf value = id + 1
  std::vector<uint32_t> free_ids_;
  std::unordered_map<typename K::MapKey, uint32_t, typename K::MapHash> by_key_;
  std::vector<uint32_t> short_ids_;               // routes of length <= 16
  std::vector<std::vector<uint32_t>> block_ids_;  // routes of length > 16, per /16
  size_t size_ = 0;

  // The compiled structure.
  std::vector<uint32_t> level1_;
  std::vector<uint32_t> short_best_;  // best route of length <= 16 per /16
  std::vector<Group> groups_;
  std::vector<uint32_t> leaves_;
  std::vector<Extent> extents_;  // per block, to account garbage
  size_t garbage_nodes_ = 0;
  size_t garbage_leaves_ = 0;

  bool has_popcnt_ = false;
  bool dirty_ = false;
  bool short_dirty_ = false;
  std::vector<uint32_t> dirty_blocks_;
  std::vector<bool> block_dirty_;
};

// Specialized per family in route_trie.cc (see there why).
template <>
uint32_t BasicRouteTrie<Ipv4TrieKey>::find_leaf_popcnt(Param a) const;
template <>
uint32_t BasicRouteTrie<Ipv4TrieKey>::find_leaf_generic(Param a) const;
template <>
uint32_t BasicRouteTrie<Ipv6TrieKey>::find_leaf_popcnt(Param a) const;
template <>
uint32_t BasicRouteTrie<Ipv6TrieKey>::find_leaf_generic(Param a) const;

// The rest is defined and instantiated in route_trie.cc for both families.
// No `extern template` here: it would keep lookup() from being inlined where
// the Router calls it (one call more per lookup, measured).

// The IPv4 trie, as the Router's RouteTable.
class RouteTrie final : public BasicRouteTrie<Ipv4TrieKey> {};

using Ipv6RouteTrie = BasicRouteTrie<Ipv6TrieKey>;

}  // namespace tinytcp::net
