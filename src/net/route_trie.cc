#include "net/route_trie.hh"

#include <algorithm>

#include "util/check.hh"

namespace tinytcp::net {

// The lookup walk, shared by the POPCNT and the portable copy.
struct TrieLookup {
  __attribute__((always_inline)) static inline uint32_t find(const RouteTrie& t, uint32_t a) {
    using Group = RouteTrie::Group;
    const uint32_t e = t.level1_[a >> 16];
    if ((e & RouteTrie::kNodeBit) == 0) {
      return e;
    }
    uint32_t s = (a >> 8) & 0xff;
    const Group* g = &t.groups_[((e & ~RouteTrie::kNodeBit) << 2) | (s >> 6)];
    uint64_t bit = uint64_t{1} << (s & 63);
    if ((g->children & bit) != 0) {
      const uint32_t child =
          g->child_base + static_cast<uint32_t>(__builtin_popcountll(g->children & (bit - 1)));
      s = a & 0xff;
      g = &t.groups_[(child << 2) | (s >> 6)];
      bit = uint64_t{1} << (s & 63);
    }
    const auto rank = static_cast<uint32_t>(__builtin_popcountll(g->runs & ((bit << 1) - 1))) - 1;
    const uint32_t first = g->leaf[0];
    if ((first & RouteTrie::kExternalLeaves) == 0) {
      return g->leaf[rank];
    }
    return t.leaves_[(first & ~RouteTrie::kExternalLeaves) + rank];
  }
};

__attribute__((target("popcnt"))) uint32_t RouteTrie::find_leaf_popcnt(uint32_t a) const {
  return TrieLookup::find(*this, a);
}

uint32_t RouteTrie::find_leaf_generic(uint32_t a) const {
  return TrieLookup::find(*this, a);
}

RouteTrie::RouteTrie()
    : block_ids_(kBlocks),
      level1_(kBlocks, 0),
      short_best_(kBlocks, 0),
      extents_(kBlocks),
      block_dirty_(kBlocks, false) {
  __builtin_cpu_init();
  has_popcnt_ = __builtin_cpu_supports("popcnt") != 0;
}

std::vector<uint32_t>& RouteTrie::list_for(const Route& r) {
  return r.prefix_length <= 16 ? short_ids_ : block_ids_[r.prefix.value >> 16];
}

void RouteTrie::mark_block(uint32_t block) {
  dirty_ = true;
  if (!block_dirty_[block]) {
    block_dirty_[block] = true;
    dirty_blocks_.push_back(block);
  }
}

bool RouteTrie::add(const Route& route) {
  if (route.prefix_length > 32) {
    return false;
  }
  Route r = route;
  r.prefix.value &= wire::prefix_mask(r.prefix_length);
  const auto [it, inserted] = by_key_.try_emplace(key(r.prefix.value, r.prefix_length), 0);
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
    mark_block(r.prefix.value >> 16);
  }
  return true;
}

bool RouteTrie::remove(wire::Ipv4Address prefix, uint8_t prefix_length) {
  if (prefix_length > 32) {
    return false;
  }
  prefix.value &= wire::prefix_mask(prefix_length);
  const auto it = by_key_.find(key(prefix.value, prefix_length));
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
    mark_block(prefix.value >> 16);
  }
  return true;
}

void RouteTrie::rebuild_short_table() {
  std::vector<uint32_t> best(kBlocks, 0);
  // Paint shorter prefixes first so longer ones overwrite them.
  std::vector<uint32_t> ids = short_ids_;
  std::sort(ids.begin(), ids.end(), [this](uint32_t a, uint32_t b) {
    return slots_[a].route.prefix_length < slots_[b].route.prefix_length;
  });
  for (const uint32_t id : ids) {
    const Route& r = slots_[id].route;
    const uint32_t first = r.prefix.value >> 16;
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

void RouteTrie::emit_node(uint32_t node, const uint32_t* leaf, const bool* child,
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

void RouteTrie::compile_block(uint32_t block) {
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
  // By (slot of level 2, length): level-2 painting wants lengths ascending;
  // level-3 painting wants each slot's routes together, lengths ascending.
  std::sort(ids.begin(), ids.end(), [this](uint32_t a, uint32_t b) {
    const Route& x = slots_[a].route;
    const Route& y = slots_[b].route;
    return x.prefix_length < y.prefix_length;
  });
  std::array<uint32_t, 256> leaf2;
  std::array<bool, 256> child2{};
  leaf2.fill(inherited);
  std::vector<uint32_t> deep;  // length > 24, still in ascending length
  for (const uint32_t id : ids) {
    const Route& r = slots_[id].route;
    const uint32_t slot = (r.prefix.value >> 8) & 0xff;
    if (r.prefix_length <= 24) {
      const uint32_t count = 1u << (24 - r.prefix_length);
      std::fill(leaf2.begin() + slot, leaf2.begin() + slot + count, id + 1);
    } else {
      child2[slot] = true;
      deep.push_back(id);
    }
  }
  std::stable_sort(deep.begin(), deep.end(), [this](uint32_t a, uint32_t b) {
    return ((slots_[a].route.prefix.value >> 8) & 0xff) <
           ((slots_[b].route.prefix.value >> 8) & 0xff);
  });
  uint32_t children = 0;
  for (const bool c : child2) {
    children += c ? 1 : 0;
  }
  const uint32_t node = static_cast<uint32_t>(groups_.size() / 4);
  const size_t leaves_before = leaves_.size();
  groups_.resize(groups_.size() + 4 * size_t{1 + children});
  emit_node(node, leaf2.data(), child2.data(), node + 1);
  std::array<uint32_t, 256> leaf3;
  const std::array<bool, 256> no_children{};
  uint32_t child = node + 1;
  size_t d = 0;
  for (uint32_t slot = 0; slot < 256; ++slot) {
    if (!child2[slot]) {
      continue;
    }
    leaf3.fill(leaf2[slot]);
    for (; d < deep.size() && ((slots_[deep[d]].route.prefix.value >> 8) & 0xff) == slot; ++d) {
      const Route& r = slots_[deep[d]].route;
      const uint32_t first = r.prefix.value & 0xff;
      const uint32_t count = 1u << (32 - r.prefix_length);
      std::fill(leaf3.begin() + first, leaf3.begin() + first + count, deep[d] + 1);
    }
    emit_node(child, leaf3.data(), no_children.data(), 0);
    ++child;
  }
  TINYTCP_DCHECK(d == deep.size());
  extent.nodes = 1 + children;
  extent.leaves = static_cast<uint32_t>(leaves_.size() - leaves_before);
  level1_[block] = kNodeBit | node;
}

void RouteTrie::commit() {
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

size_t RouteTrie::compiled_bytes() const {
  return level1_.size() * sizeof(uint32_t) + groups_.size() * sizeof(Group) +
         leaves_.size() * sizeof(uint32_t);
}

}  // namespace tinytcp::net
