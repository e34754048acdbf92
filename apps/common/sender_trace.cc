#include "common/sender_trace.hh"

#include <chrono>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

namespace tinytcp::apps {

SenderTrace::SenderTrace(const std::string& path) : file_(std::fopen(path.c_str(), "w")) {
  if (file_ == nullptr) {
    throw std::runtime_error(fmt::format("--trace {}: cannot create the file", path));
  }
  std::fputs("time_s,cwnd,ssthresh,srtt_ms,rto_ms,bytes_in_flight,retransmits\n", file_);
}

SenderTrace::~SenderTrace() {
  std::fclose(file_);
}

void SenderTrace::row(Instant now, const tcp::SenderState& s, uint64_t retransmits) {
  if (!origin_) {
    origin_ = now;
  }
  if (s.ssthresh == last_ssthresh_ && now - last_row_ < std::chrono::milliseconds(1)) {
    return;
  }
  last_row_ = now;
  last_ssthresh_ = s.ssthresh;
  std::fprintf(file_, "%.6f,%llu,%llu,%.3f,%.3f,%llu,%llu\n", to_seconds(now - *origin_),
               static_cast<unsigned long long>(s.cwnd), static_cast<unsigned long long>(s.ssthresh),
               to_seconds(s.srtt) * 1e3, to_seconds(s.rto) * 1e3,
               static_cast<unsigned long long>(s.bytes_in_flight),
               static_cast<unsigned long long>(retransmits));
}

void SenderTrace::attach(std::shared_ptr<SenderTrace> trace, stack::Host& host,
                         stack::SocketId id) {
  stack::Host* h = &host;  // the callback lives inside the host
  host.set_trace(id, [trace = std::move(trace), h, id](Instant now, const tcp::SenderState& s) {
    const auto* c = h->connection(id);
    trace->row(now, s, c != nullptr ? c->sender_stats().retransmitted_segments : 0);
  });
}

}  // namespace tinytcp::apps
