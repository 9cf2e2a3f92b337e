// A plugin registering a multi-agent env, PluginTurns-v0: "first" and "second" take turns
// counting up; the mover earns 1; every agent is cut off after 6 env steps.
#include <memory>
#include <vector>

#include "envs/plugin.h"

namespace {

class TurnsEnv final : public rlx::MultiAgentEnv {
 public:
  TurnsEnv() : MultiAgentEnv(spec()) {}

  static rlx::MultiAgentEnvSpec spec() {
    rlx::MultiAgentEnvSpec spec;
    spec.id = "PluginTurns-v0";
    for (const char* id : {"first", "second"}) spec.agents.push_back({id, rlx::Space::box({1}, 0, 100), rlx::Space::discrete(2), false});
    spec.max_episode_steps = 6;
    return spec;
  }

 protected:
  void reset_episode(rlx::Rng&, rlx::MultiAgentOutput& out) override { out.observe(0)[0] = 0.0f; }
  void step_episode(const std::vector<rlx::AgentAction>& actions, rlx::MultiAgentOutput& out) override {
    const int mover = actions.front().agent;
    out.add_reward(mover, 1.0);
    out.observe(1 - mover)[0] = static_cast<float>(elapsed_steps() + 1);
  }
};

}  // namespace

RLX_ENV_PLUGIN(registrar) {
  registrar.add_multi_agent(TurnsEnv::spec(), [] { return std::make_unique<TurnsEnv>(); });
}
