#include "tcp/congestion/fixed_window.hh"

#include <algorithm>

namespace tinytcp::tcp {

FixedWindow::FixedWindow(const CongestionParams& params, uint32_t segments)
    : smss_(std::max<uint32_t>(1, params.smss)), segments_(std::max<uint32_t>(1, segments)) {}

void FixedWindow::set_mss(uint32_t smss) {
  smss_ = std::max<uint32_t>(1, smss);
}

}  // namespace tinytcp::tcp
