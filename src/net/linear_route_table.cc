#include "net/linear_route_table.hh"

namespace tinytcp::net {

bool LinearRouteTable::add(const Route& route) {
  if (route.prefix_length > 32) {
    return false;
  }
  Route r = route;
  r.prefix.value &= wire::prefix_mask(r.prefix_length);
  const auto [it, inserted] = index_.try_emplace(key(r.prefix, r.prefix_length), routes_.size());
  if (inserted) {
    routes_.push_back(r);
  } else {
    routes_[it->second] = r;
  }
  return true;
}

bool LinearRouteTable::remove(wire::Ipv4Address prefix, uint8_t prefix_length) {
  if (prefix_length > 32) {
    return false;
  }
  prefix.value &= wire::prefix_mask(prefix_length);
  const auto it = index_.find(key(prefix, prefix_length));
  if (it == index_.end()) {
    return false;
  }
  const size_t i = it->second;
  index_.erase(it);
  if (i + 1 != routes_.size()) {
    routes_[i] = routes_.back();
    index_[key(routes_[i].prefix, routes_[i].prefix_length)] = i;
  }
  routes_.pop_back();
  return true;
}

const Route* LinearRouteTable::lookup(wire::Ipv4Address dst) {
  const Route* best = nullptr;
  for (const auto& r : routes_) {
    if ((dst.value & wire::prefix_mask(r.prefix_length)) == r.prefix.value &&
        (best == nullptr || r.prefix_length > best->prefix_length)) {
      best = &r;
    }
  }
  return best;
}

}  // namespace tinytcp::net
