#include "stack/address_fold.hh"

#include "util/hash.hh"

namespace tinytcp::stack {

namespace {

SipHash::Key derive_key(const std::string& secret) {
  const auto digest = hmac_sha256(secret, "address fold");
  SipHash::Key key{};
  for (size_t i = 0; i < key.size(); ++i) {
    key[i] = digest[i];
  }
  return key;
}

}  // namespace

AddressFold::AddressFold(const std::string& secret) : hash_(derive_key(secret)) {}

uint32_t AddressFold::fold_v6(const IpAddress& a) const {
  const wire::Ipv6Address v6 = a.v6();
  const std::string_view bytes(reinterpret_cast<const char*>(v6.bytes.data()), v6.bytes.size());
  return static_cast<uint32_t>(hash_(bytes));
}

}  // namespace tinytcp::stack
