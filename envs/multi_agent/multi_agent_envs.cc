#include "envs/multi_agent/multi_agent_envs.h"

#include "envs/multi_agent/connect_four.h"
#include "envs/multi_agent/multi_agent_cart_pole.h"
#include "envs/multi_agent/simple_spread.h"

namespace rlx {

void register_multi_agent_envs(EnvRegistrar& registrar) {
  registrar.add_multi_agent(MultiAgentCartPoleEnv::default_spec(), [] { return std::make_unique<MultiAgentCartPoleEnv>(); });
  register_simple_spread(registrar);
  registrar.add_multi_agent(ConnectFourEnv::default_spec(), [] { return std::make_unique<ConnectFourEnv>(); });
}

}  // namespace rlx
