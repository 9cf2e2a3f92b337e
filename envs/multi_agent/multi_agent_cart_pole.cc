#include "envs/multi_agent/multi_agent_cart_pole.h"

#include <stdexcept>
#include <string>
#include <utility>

namespace rlx {

MultiAgentEnvSpec MultiAgentCartPoleEnv::default_spec(int num_agents, std::string id) {
  if (num_agents < 1) throw std::invalid_argument("MultiAgentCartPole needs at least 1 agent, got " + std::to_string(num_agents));
  const EnvSpec pole = CartPoleEnv::default_spec();
  MultiAgentEnvSpec spec;
  spec.id = std::move(id);
  for (int i = 0; i < num_agents; ++i) {
    spec.agents.push_back(AgentSpec{"agent_" + std::to_string(i), pole.observation_space, pole.action_space, false});
  }
  spec.reward_threshold = 475.0 * num_agents;
  return spec;
}

MultiAgentCartPoleEnv::MultiAgentCartPoleEnv(int num_agents, std::string id) : MultiAgentEnv(default_spec(num_agents, std::move(id))) {
  for (int i = 0; i < num_agents; ++i) poles_.push_back(std::make_unique<CartPoleEnv>());
}

void MultiAgentCartPoleEnv::reset_episode(Rng& rng, MultiAgentOutput& out) {
  for (size_t i = 0; i < poles_.size(); ++i) {
    const int agent = static_cast<int>(i);
    poles_[i]->reset(rng.next_u64(), out.observe(agent).data());
  }
}

void MultiAgentCartPoleEnv::step_episode(const std::vector<AgentAction>& actions, MultiAgentOutput& out) {
  for (const AgentAction& action : actions) {
    CartPoleEnv& pole = *poles_[static_cast<size_t>(action.agent)];
    const StepResult result = pole.step(action.action, out.observe(action.agent).data());
    out.add_reward(action.agent, result.reward);
    if (result.terminated) {
      out.terminate(action.agent);
    } else if (result.truncated) {
      out.truncate(action.agent);
    }
  }
}

}  // namespace rlx
