#include "envs/multi_agent/multi_agent_envs.h"

#include <memory>
#include <string>

#include "envs/multi_agent/connect_four.h"
#include "envs/multi_agent/multi_agent_cart_pole.h"
#include "envs/multi_agent/simple_spread.h"

namespace rlx {

void register_multi_agent_envs(EnvRegistrar& registrar) {
  registrar.add_multi_agent(MultiAgentCartPoleEnv::default_spec(), [] { return std::make_unique<MultiAgentCartPoleEnv>(); });
  // RLlib's current PPO example trains 2 agents: 450 each within 400k env steps.
  const std::string two_agents = "MultiAgentCartPole2-v0";
  registrar.add_multi_agent(MultiAgentCartPoleEnv::default_spec(2, two_agents),
                            [two_agents] { return std::make_unique<MultiAgentCartPoleEnv>(2, two_agents); });
  register_simple_spread(registrar);
  registrar.add_multi_agent(ConnectFourEnv::default_spec(), [] { return std::make_unique<ConnectFourEnv>(); });
}

}  // namespace rlx
