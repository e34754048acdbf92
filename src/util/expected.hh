#pragma once

// A value or a typed error, for parsers and other fallible calls that must not
// throw (C++17 has no std::expected). Errors are cheap enums in practice.

#include <type_traits>
#include <utility>
#include <variant>

#include "util/check.hh"

namespace tinytcp {

template <typename E>
struct Unexpected {
  E error;
};

template <typename E>
constexpr Unexpected<std::decay_t<E>> make_unexpected(E&& e) {
  return Unexpected<std::decay_t<E>>{std::forward<E>(e)};
}

template <typename T, typename E>
class Expected {
 public:
  Expected(const T& value)
      : storage_(std::in_place_index<0>, value) {}  // NOLINT(google-explicit-constructor)
  Expected(T&& value)
      : storage_(std::in_place_index<0>, std::move(value)) {
  }  // NOLINT(google-explicit-constructor)
  template <typename G>
  Expected(Unexpected<G> e)  // NOLINT(google-explicit-constructor)
      : storage_(std::in_place_index<1>, E(std::move(e.error))) {}

  bool has_value() const { return storage_.index() == 0; }
  explicit operator bool() const { return has_value(); }

  T& value() & {
    TINYTCP_CHECK(has_value());
    return std::get<0>(storage_);
  }
  const T& value() const& {
    TINYTCP_CHECK(has_value());
    return std::get<0>(storage_);
  }
  T&& value() && {
    TINYTCP_CHECK(has_value());
    return std::get<0>(std::move(storage_));
  }
  const E& error() const {
    TINYTCP_CHECK(!has_value());
    return std::get<1>(storage_);
  }

  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, E> storage_;
};

}  // namespace tinytcp
