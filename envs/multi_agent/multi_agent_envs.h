// The built-in multi-agent environments.
#pragma once

#include "envs/registry.h"

namespace rlx {

// Adds MultiAgentCartPole-v0 (4 agents), MultiAgentCartPole2-v0 (2 agents), SimpleSpread-v0 and
// ConnectFour-v0.
void register_multi_agent_envs(EnvRegistrar& registrar);

}  // namespace rlx
