// A plugin registering PluginGrid-v0, an env with a structured observation: a Dict of a uint8 grid
// and a Discrete level, with masked MultiDiscrete actions (for `rlx envs info`'s layout).
#include <memory>

#include "envs/plugin.h"

namespace {

// Dict('grid': Box(0, 1, (2, 2, 2), uint8), 'level': Discrete(3, start=1)), MultiDiscrete([3 2])
// actions with a mask, 10 steps.
rlx::EnvSpec grid_spec() {
  using rlx::Space;
  rlx::EnvSpec spec;
  spec.id = "PluginGrid-v0";
  spec.observation_space =
      Space::dict({{"grid", Space::box({2, 2, 2}, 0, 1, rlx::ScalarType::kUint8)}, {"level", Space::discrete(3, 1)}});
  spec.action_space = Space::multi_discrete({3, 2});
  spec.action_mask = true;
  spec.max_episode_steps = 10;
  return spec;
}

// Lights grid cell (step mod 8), level 1 + step mod 3; every action is legal; reward 1.
class GridEnv : public rlx::Env {
 public:
  GridEnv() : Env(grid_spec()) {}

 protected:
  void reset_episode(rlx::Rng&, rlx::ObsSpan obs) override { write(obs, 0); }
  rlx::StepResult step_episode(const rlx::Action&, rlx::ObsSpan obs) override {
    write(obs, elapsed_steps() + 1);
    return {1.0, false, false};
  }

 private:
  static void write(rlx::ObsSpan obs, int step) {
    for (int64_t i = 0; i < obs.bytes().size(); ++i) obs.bytes()[i] = i == step % 8;
    obs[0] = static_cast<float>(1 + step % 3);
    for (int64_t i = 0; i < obs.action_mask().size(); ++i) obs.action_mask()[i] = 1;
  }
};

}  // namespace

RLX_ENV_PLUGIN(registrar) {
  registrar.add(grid_spec(), [] { return std::make_unique<GridEnv>(); });
}
