#include "net/route_trie.hh"

#include <algorithm>

#include "util/check.hh"

namespace tinytcp::net {

// The lookup walk, shared by the POPCNT and the portable copy. The loop runs
// at most kBits / 8 - 3 times (once for IPv4, 13 times for IPv6): below the
// last node level there are no children to test.
template <typename K>
struct TrieLookup {
  using Trie = BasicRouteTrie<K>;
  __attribute__((always_inline)) static inline uint32_t find(const Trie& t, typename K::Param a) {
    using Group = typename Trie::Group;
    const uint32_t e = t.level1_[K::top16(a)];
    if ((e & Trie::kNodeBit) == 0) {
      return e;
    }
    uint32_t s = K::byte_at(a, 16);
    const Group* g = &t.groups_[((e & ~Trie::kNodeBit) << 2) | (s >> 6)];
    uint64_t bit = uint64_t{1} << (s & 63);
    for (unsigned depth = 24; depth < K::kBits; depth += 8) {
      if ((g->children & bit) == 0) {
        break;
      }
      const uint32_t child =
          g->child_base + static_cast<uint32_t>(__builtin_popcountll(g->children & (bit - 1)));
      s = K::byte_at(a, depth);
      g = &t.groups_[(child << 2) | (s >> 6)];
      bit = uint64_t{1} << (s & 63);
    }
    const auto rank = static_cast<uint32_t>(__builtin_popcountll(g->runs & ((bit << 1) - 1))) - 1;
    const uint32_t first = g->leaf[0];
    if ((first & Trie::kExternalLeaves) == 0) {
      return g->leaf[rank];
    }
    return t.leaves_[(first & ~Trie::kExternalLeaves) + rank];
  }
};

// Explicit specializations, not a template: GCC drops a target attribute on
// a member template's definition, and the popcounts become library calls.
template <>
__attribute__((target("popcnt"))) uint32_t BasicRouteTrie<Ipv4TrieKey>::find_leaf_popcnt(
    Param a) const {
  return TrieLookup<Ipv4TrieKey>::find(*this, a);
}

template <>
uint32_t BasicRouteTrie<Ipv4TrieKey>::find_leaf_generic(Param a) const {
  return TrieLookup<Ipv4TrieKey>::find(*this, a);
}

template <>
__attribute__((target("popcnt"))) uint32_t BasicRouteTrie<Ipv6TrieKey>::find_leaf_popcnt(
    Param a) const {
  return TrieLookup<Ipv6TrieKey>::find(*this, a);
}

template <>
uint32_t BasicRouteTrie<Ipv6TrieKey>::find_leaf_generic(Param a) const {
  return TrieLookup<Ipv6TrieKey>::find(*this, a);
}

template <typename K>
BasicRouteTrie<K>::BasicRouteTrie()
    : block_ids_(kBlocks),
      level1_(kBlocks, 0),
      short_best_(kBlocks, 0),
      extents_(kBlocks),
      block_dirty_(kBlocks, false) {
  __builtin_cpu_init();
  has_popcnt_ = __builtin_cpu_supports("popcnt") != 0;
}

template <typename K>
std::vector<uint32_t>& BasicRouteTrie<K>::list_for(const RouteType& r) {
  return r.prefix_length <= 16 ? short_ids_ : block_ids_[K::top16(r.prefix)];
}

template <typename K>
void BasicRouteTrie<K>::mark_block(uint32_t block) {
  dirty_ = true;
  if (!block_dirty_[block]) {
    block_dirty_[block] = true;
    dirty_blocks_.push_back(block);
  }
}

template <typename K>
bool BasicRouteTrie<K>::add(const RouteType& route) {
  if (route.prefix_length > K::kBits) {
    return false;
  }
  RouteType r = route;
  r.prefix = K::masked(r.prefix, r.prefix_length);
  const auto [it, inserted] = by_key_.try_emplace(K::map_key(r.prefix, r.prefix_length), 0);
  if (inserted) {
    uint32_t id;
    if (!free_ids_.empty()) {
      id = free_ids_.back();
      free_ids_.pop_back();
    } else {
      id = static_cast<uint32_t>(slots_.size());
      slots_.emplace_back();
    }
    it->second = id;
    auto& list = list_for(r);
    slots_[id].list_pos = static_cast<uint32_t>(list.size());
    slots_[id].used = true;
    list.push_back(id);
    ++size_;
  }
  slots_[it->second].route = r;
  if (r.prefix_length <= 16) {
    short_dirty_ = true;
    dirty_ = true;
  } else {
    mark_block(K::top16(r.prefix));
  }
  return true;
}

template <typename K>
bool BasicRouteTrie<K>::remove(Param prefix_in, uint8_t prefix_length) {
  if (prefix_length > K::kBits) {
    return false;
  }
  const Address prefix = K::masked(prefix_in, prefix_length);
  const auto it = by_key_.find(K::map_key(prefix, prefix_length));
  if (it == by_key_.end()) {
    return false;
  }
  const uint32_t id = it->second;
  by_key_.erase(it);
  Slot& slot = slots_[id];
  auto& list = list_for(slot.route);
  const uint32_t moved = list.back();
  list[slot.list_pos] = moved;
  slots_[moved].list_pos = slot.list_pos;
  list.pop_back();
  slot.used = false;
  free_ids_.push_back(id);
  --size_;
  if (prefix_length <= 16) {
    short_dirty_ = true;
    dirty_ = true;
  } else {
    mark_block(K::top16(prefix));
  }
  return true;
}

template <typename K>
void BasicRouteTrie<K>::rebuild_short_table() {
  std::vector<uint32_t> best(kBlocks, 0);
  // Paint shorter prefixes first so longer ones overwrite them.
  std::vector<uint32_t> ids = short_ids_;
  std::sort(ids.begin(), ids.end(), [this](uint32_t a, uint32_t b) {
    return slots_[a].route.prefix_length < slots_[b].route.prefix_length;
  });
  for (const uint32_t id : ids) {
    const RouteType& r = slots_[id].route;
    const uint32_t first = K::top16(r.prefix);
    const uint32_t count = 1u << (16 - r.prefix_length);
    std::fill(best.begin() + first, best.begin() + first + count, id + 1);
  }
  for (uint32_t b = 0; b < kBlocks; ++b) {
    if (best[b] != short_best_[b]) {
      mark_block(b);
    }
  }
  short_best_.swap(best);
  short_dirty_ = false;
}

template <typename K>
void BasicRouteTrie<K>::emit_node(uint32_t node, const uint32_t* leaf, const bool* child,
                                  uint32_t child_base) {
  for (uint32_t g = 0; g < 4; ++g) {
    Group& group = groups_[(node << 2) | g];
    group = Group{};
    group.child_base = child_base;
    const size_t first_leaf = leaves_.size();
    bool have_previous = false;
    uint32_t previous = 0;
    uint32_t runs = 0;
    for (uint32_t i = 0; i < 64; ++i) {
      const uint32_t s = g * 64 + i;
      if (child[s]) {
        group.children |= uint64_t{1} << i;
        ++child_base;
        continue;
      }
      if (!have_previous || leaf[s] != previous) {
        group.runs |= uint64_t{1} << i;
        leaves_.push_back(leaf[s]);
        previous = leaf[s];
        have_previous = true;
        ++runs;
      }
    }
    if (runs <= kInlineLeaves) {
      std::copy(leaves_.begin() + static_cast<std::ptrdiff_t>(first_leaf), leaves_.end(),
                group.leaf);
      leaves_.resize(first_leaf);
    } else {
      group.leaf[0] = kExternalLeaves | static_cast<uint32_t>(first_leaf);
    }
  }
}

template <typename K>
void BasicRouteTrie<K>::compile_block(uint32_t block) {
  Extent& extent = extents_[block];
  garbage_nodes_ += extent.nodes;
  garbage_leaves_ += extent.leaves;
  extent = Extent{};
  const uint32_t inherited = short_best_[block];
  std::vector<uint32_t> ids = block_ids_[block];
  if (ids.empty()) {
    level1_[block] = inherited;
    return;
  }
  // Painting wants lengths ascending, so longer prefixes overwrite shorter.
  std::sort(ids.begin(), ids.end(), [this](uint32_t a, uint32_t b) {
    return slots_[a].route.prefix_length < slots_[b].route.prefix_length;
  });
  const auto node = static_cast<uint32_t>(groups_.size() / 4);
  const size_t leaves_before = leaves_.size();
  groups_.resize(groups_.size() + 4);
  build_node(node, 16, ids, inherited);
  extent.nodes = static_cast<uint32_t>(groups_.size() / 4 - node);
  extent.leaves = static_cast<uint32_t>(leaves_.size() - leaves_before);
  level1_[block] = kNodeBit | node;
}

template <typename K>
void BasicRouteTrie<K>::build_node(uint32_t node, unsigned depth, const std::vector<uint32_t>& ids,
                                   uint32_t inherited) {
  std::array<uint32_t, 256> leaf;
  std::array<bool, 256> child{};
  leaf.fill(inherited);
  std::vector<uint32_t> deep;  // longer than depth + 8, still in ascending length
  for (const uint32_t id : ids) {
    const RouteType& r = slots_[id].route;
    const uint32_t slot = K::byte_at(r.prefix, depth);
    if (r.prefix_length <= depth + 8) {
      const uint32_t count = 1u << (depth + 8 - r.prefix_length);
      std::fill(leaf.begin() + slot, leaf.begin() + slot + count, id + 1);
    } else {
      child[slot] = true;
      deep.push_back(id);
    }
  }
  // Each child's routes together, lengths still ascending within it.
  std::stable_sort(deep.begin(), deep.end(), [this, depth](uint32_t a, uint32_t b) {
    return K::byte_at(slots_[a].route.prefix, depth) < K::byte_at(slots_[b].route.prefix, depth);
  });
  if (deep.empty()) {  // most nodes, and every one of the last level
    emit_node(node, leaf.data(), child.data(), 0);
    return;
  }
  uint32_t children = 0;
  for (const bool c : child) {
    children += c ? 1 : 0;
  }
  // A node's children are contiguous: allocate them all before filling any,
  // since each child allocates its own children after them.
  const auto base = static_cast<uint32_t>(groups_.size() / 4);
  groups_.resize(groups_.size() + 4 * size_t{children});
  emit_node(node, leaf.data(), child.data(), base);
  std::vector<uint32_t> below;
  uint32_t next = base;
  size_t d = 0;
  for (uint32_t slot = 0; slot < 256; ++slot) {
    if (!child[slot]) {
      continue;
    }
    below.clear();
    for (; d < deep.size() && K::byte_at(slots_[deep[d]].route.prefix, depth) == slot; ++d) {
      below.push_back(deep[d]);
    }
    build_node(next, depth + 8, below, leaf[slot]);
    ++next;
  }
  TINYTCP_DCHECK(d == deep.size());
}

template <typename K>
void BasicRouteTrie<K>::commit() {
  if (short_dirty_) {
    rebuild_short_table();
  }
  const size_t live_nodes = groups_.size() / 4 - garbage_nodes_;
  if (garbage_nodes_ > 1024 && garbage_nodes_ > live_nodes) {
    // Compact: start the arrays afresh and recompile every block with nodes.
    groups_.clear();
    leaves_.clear();
    garbage_nodes_ = 0;
    garbage_leaves_ = 0;
    for (uint32_t b = 0; b < kBlocks; ++b) {
      extents_[b] = Extent{};
      if (!block_ids_[b].empty()) {
        mark_block(b);
      }
    }
  }
  for (const uint32_t b : dirty_blocks_) {
    compile_block(b);
    block_dirty_[b] = false;
  }
  dirty_blocks_.clear();
  dirty_ = false;
}

template <typename K>
size_t BasicRouteTrie<K>::compiled_bytes() const {
  return level1_.size() * sizeof(uint32_t) + groups_.size() * sizeof(Group) +
         leaves_.size() * sizeof(uint32_t);
}

template class BasicRouteTrie<Ipv4TrieKey>;
template class BasicRouteTrie<Ipv6TrieKey>;

}  // namespace tinytcp::net
