#pragma once

// The text form of an ImpairmentConfig, for command-line flags and logs:
//
//   loss=1%,delay=20ms,jitter=5ms,rate=10mbit
//   burst=0.01/0.25            (Gilbert-Elliott: good->bad / bad->good [/ k / h])
//
// Keys (comma-separated, any order, each at most once):
//   loss, duplicate, corrupt, reorder   probability: 0.05 or 5%
//   delay, jitter, reorder-delay        duration with unit: ns, us, ms, s
//   rate                                bit, kbit, mbit, gbit (per second, powers of 1000)
//   rate-queue                          bytes, optional k or m suffix (powers of 1024)
//   hold                                packets held at most
//   burst                               p/r[/k/h]: good->bad, bad->good,
//                                       loss in good (default 0), in bad (default 1)
// An empty string is the identity. parse_impairment never throws; the error
// names the offending item.

#include <string>
#include <string_view>

#include "io/impairment.hh"
#include "util/expected.hh"

namespace tinytcp::io {

Expected<ImpairmentConfig, std::string> parse_impairment(std::string_view spec);
// The canonical text of `config` (parse_impairment reads it back unchanged).
std::string format_impairment(const ImpairmentConfig& config);

}  // namespace tinytcp::io
