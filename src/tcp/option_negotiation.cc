#include "tcp/option_negotiation.hh"

namespace tinytcp::tcp {

void OptionNegotiation::offer(TcpOptions& options, const TcpConfig& config, uint32_t tsval) {
  options.mss = config.mss;
  options.sack_permitted = config.sack;
  if (config.timestamps) {
    options.timestamps = Timestamps{tsval, 0};
  }
}

NegotiatedOptions OptionNegotiation::on_peer_syn(const TcpSegment& syn, const TcpConfig& config) {
  peer_syn_seen_ = true;
  peer_offered_ws_ = syn.options.window_scale.has_value();
  peer_offered_sack_ = syn.options.sack_permitted;
  peer_offered_ts_ = syn.options.timestamps.has_value();
  // RFC 7323 §1.3 / §3.2, RFC 2018 §2: an option is in use only if both
  // SYNs carried it.
  NegotiatedOptions out;
  out.window_scaling = config.window_scale && peer_offered_ws_;
  out.sack = config.sack && peer_offered_sack_;
  out.timestamps = config.timestamps && peer_offered_ts_;
  out.peer.mss = syn.options.mss.value_or(config.default_peer_mss);  // RFC 9293 §3.7.1
  out.peer.send_window_shift = out.window_scaling ? *syn.options.window_scale : 0;
  out.peer.sack = out.sack;
  out.peer.timestamps = out.timestamps;
  return out;
}

void OptionNegotiation::complete_syn(TcpSegment& syn, const TcpConfig& config,
                                     std::optional<uint8_t> window_shift) const {
  const bool passive = peer_syn_seen_;
  // RFC 7323 §1.3: a SYN-ACK carries window scale only if the SYN did.
  if (config.window_scale && (!passive || peer_offered_ws_)) {
    syn.options.window_scale = window_shift;
  }
  if (passive) {
    syn.options.sack_permitted = syn.options.sack_permitted && peer_offered_sack_;
    if (!peer_offered_ts_) {
      syn.options.timestamps.reset();  // RFC 7323 §3.2
    }
  }
}

}  // namespace tinytcp::tcp
