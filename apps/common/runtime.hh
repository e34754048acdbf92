#pragma once

// The runtime layer (src/runtime: StackRuntime, BlockingStack, PeerRuntime)
// under the names the apps were written with (apps::StackRuntime, ...). The
// runtime moved out of apps/common for issue 19; new code names it
// runtime::StackRuntime and includes "runtime/..." directly.

#include "runtime/blocking_stack.hh"
#include "runtime/peer_runtime.hh"
#include "runtime/stack_runtime.hh"

namespace tinytcp::apps {

using runtime::BlockingStack;
using runtime::BlockingStackStats;
using runtime::PeerRuntime;
using runtime::PeerRuntimeOptions;
using runtime::PeerRuntimeStats;
using runtime::RuntimeOptions;
using runtime::RuntimeStats;
using runtime::StackRuntime;

}  // namespace tinytcp::apps
