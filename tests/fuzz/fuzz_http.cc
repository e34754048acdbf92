// Any bytes into the HTTP/1.1 parser, as a response and as a request, in two
// pieces: it must finish or fail, never crash or buffer without bound, and
// the head callback runs at most once and before any body byte.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "proto/http.hh"
#include "util/check.hh"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using tinytcp::proto::HttpParser;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t split = size > 0 ? data[0] % (size + 1) : 0;
  for (const auto kind : {HttpParser::Kind::Response, HttpParser::Kind::Request}) {
    HttpParser parser(kind);
    uint64_t body = 0;
    int heads = 0;
    const auto head = [&] {
      TINYTCP_CHECK(body == 0);
      ++heads;
    };
    const auto sink = [&](std::string_view b) { body += b.size(); };
    size_t used = parser.feed(input.substr(0, split), head, sink);
    if (used == split) {
      used += parser.feed(input.substr(split), head, sink);
    }
    TINYTCP_CHECK(heads <= 1);
    parser.finish();
    TINYTCP_CHECK(parser.done() || parser.failed());
    TINYTCP_CHECK(used <= size);
    TINYTCP_CHECK(body <= size);
  }
  return 0;
}
