#include "tt-perf/perf_report.hh"

#include <fmt/format.h>

namespace tinytcp::apps {

namespace {

double micros(Duration d) {
  return to_seconds(d) * 1e6;
}

}  // namespace

double PerfReport::transactions_per_second() const {
  return seconds > 0 ? static_cast<double>(transactions) / seconds : 0;
}

double PerfReport::bits_per_second() const {
  const uint64_t bytes = bytes_delivered != 0 ? bytes_delivered : bytes_received;
  return seconds > 0 ? static_cast<double>(bytes) * 8 / seconds : 0;
}

nlohmann::json PerfReport::to_json() const {
  nlohmann::json j;
  j["mode"] = mode;
  j["transport"] = transport;
  j["cc"] = cc.empty() ? "default" : cc;
  j["sack"] = sack;
  j["robust"] = robust;
  j["connections"] = connections;
  j["seconds"] = seconds;
  j["bytes_sent"] = bytes_sent;
  j["bytes_received"] = bytes_received;
  j["bytes_delivered"] = bytes_delivered;
  j["transactions"] = transactions;
  j["transactions_per_second"] = transactions_per_second();
  j["bits_per_second"] = bits_per_second();
  if (latency) {
    j["latency_us"] = {{"count", latency->count},     {"mean", micros(latency->mean)},
                       {"p50", micros(latency->p50)}, {"p90", micros(latency->p90)},
                       {"p99", micros(latency->p99)}, {"max", micros(latency->max)}};
  }
  j["packets"] = {{"sent", packets.sent},
                  {"received", packets.received},
                  {"retransmits", packets.retransmits},
                  {"method", packet_method}};
  if (verified) {
    j["verified"] = *verified;
  }
  if (!sha256.empty()) {
    j["sha256"] = sha256;
  }
  j["errors"] = errors;
  if (!error.empty()) {
    j["error"] = error;
  }
  return j;
}

std::string PerfReport::to_text() const {
  std::string line = fmt::format("{} over {}: {:.3f} s", mode, transport, seconds);
  if (mode == "stream" || mode == "messages") {
    line += fmt::format(", {} bytes delivered, {:.1f} Mbit/s", bytes_delivered,
                        bits_per_second() / 1e6);
  }
  if (transactions != 0) {
    line += fmt::format(", {} {} ({:.1f}/s)", transactions,
                        mode == "rr" || mode == "crr" ? "transactions" : "messages",
                        transactions_per_second());
  }
  if (latency && latency->count != 0) {
    line += fmt::format(", latency us p50 {:.0f} p90 {:.0f} p99 {:.0f} max {:.0f}",
                        micros(latency->p50), micros(latency->p90), micros(latency->p99),
                        micros(latency->max));
  }
  line += fmt::format(", packets sent {} received {}", packets.sent, packets.received);
  if (verified) {
    line += *verified ? ", verified" : ", VERIFICATION FAILED";
  }
  if (errors != 0) {
    line += fmt::format(", {} errors (first: {})", errors, error);
  }
  return line;
}

}  // namespace tinytcp::apps
