// MultiAgentCartPole: N independent CartPole-v1s, one per agent (RLlib's MultiAgentCartPole).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "envs/classic/cart_pole.h"
#include "envs/multi_agent/multi_agent_env.h"

namespace rlx {

// Agent i ("agent_i") balances its own pole: it observes its CartPole's 4 floats, pushes left (0)
// or right (1) and earns 1 per step until its pole falls (terminated) or 500 steps pass
// (truncated). Agents whose poles fell wait for the others; the episode ends when every agent has
// ended, so an episode's summed return is at most 500 * N.
class MultiAgentCartPoleEnv final : public MultiAgentEnv {
 public:
  static constexpr int kDefaultAgents = 4;
  static constexpr const char* kDefaultId = "MultiAgentCartPole-v0";

  // Throws std::invalid_argument unless num_agents >= 1. `id` names the registered variant
  // (MultiAgentCartPole-v0 has 4 agents, MultiAgentCartPole2-v0 has 2).
  explicit MultiAgentCartPoleEnv(int num_agents = kDefaultAgents, std::string id = kDefaultId);

  // The spec for num_agents agents "agent_0" ... under `id`, reward threshold 475 * N.
  static MultiAgentEnvSpec default_spec(int num_agents = kDefaultAgents, std::string id = kDefaultId);

 protected:
  // Resets every CartPole from a seed drawn from rng, so the episode follows from the env's seed.
  void reset_episode(Rng& rng, MultiAgentOutput& out) override;
  void step_episode(const std::vector<AgentAction>& actions, MultiAgentOutput& out) override;

 private:
  std::vector<std::unique_ptr<CartPoleEnv>> poles_;
};

}  // namespace rlx
