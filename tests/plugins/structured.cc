// A plugin registering two envs with a structured observation (a Dict of a uint8 grid and a
// Discrete level) and masked MultiDiscrete actions: PluginGrid-v0 (for `rlx envs info`'s layout)
// and PluginMaskedGrid-v0 (a task PPO learns in a few thousand steps, for
// tests/cli/plugin_learning_test.cc).
#include <memory>
#include <stdexcept>
#include <string>

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

// PluginGrid-v0's spaces as PluginMaskedGrid-v0: 10 steps, a threshold of 9 (random legal play: 5).
rlx::EnvSpec masked_grid_spec() {
  rlx::EnvSpec spec = grid_spec();
  spec.id = "PluginMaskedGrid-v0";
  spec.reward_threshold = 9.0;
  return spec;
}

// Each step draws a level L in {1, 2, 3}, lights one cell of the grid's channel 0 (the target) and
// one of channel 1 (noise), and masks one of the two wrong values of the action's first element.
// Action (a, b): 0.5 for a == L - 1 plus 0.5 for b == the target's row; a masked a pays -10 and ends
// the episode. Only a policy reading the level and the grid scores 1 a step.
class MaskedGridEnv : public rlx::Env {
 public:
  MaskedGridEnv() : Env(masked_grid_spec()) {}

 protected:
  void reset_episode(rlx::Rng& rng, rlx::ObsSpan obs) override {
    deal(rng);
    write(obs);
  }
  rlx::StepResult step_episode(const rlx::Action& action, rlx::ObsSpan obs) override {
    const int64_t a = action.indices[0], b = action.indices[1];
    if (a < 0 || a > 2 || b < 0 || b > 1) {
      throw std::invalid_argument("PluginMaskedGrid-v0 action must be in [0, 2] x [0, 1], got (" + std::to_string(a) + ", " +
                                  std::to_string(b) + ")");
    }
    if (a == masked_) {
      write(obs);
      return {kIllegalReward, true, false};
    }
    const double reward = 0.5 * (a == level_ - 1) + 0.5 * (b == target_ / 2);
    deal(rng());
    write(obs);
    return {reward, false, false};
  }

 private:
  static constexpr double kIllegalReward = -10.0;

  void deal(rlx::Rng& rng) {
    level_ = 1 + static_cast<int>(rng.uniform_int(3));
    target_ = static_cast<int>(rng.uniform_int(4));
    noise_ = static_cast<int>(rng.uniform_int(4));
    masked_ = (level_ - 1 + 1 + static_cast<int>(rng.uniform_int(2))) % 3;  // never the rewarded value
  }
  // The grid is (row, column, channel): cell c = 2 * row + column at bytes 2c (target) and 2c + 1 (noise).
  void write(rlx::ObsSpan obs) const {
    for (int c = 0; c < 4; ++c) {
      obs.bytes()[2 * c] = c == target_;
      obs.bytes()[2 * c + 1] = c == noise_;
    }
    obs[0] = static_cast<float>(level_);
    for (int v = 0; v < 3; ++v) obs.action_mask()[v] = v != masked_;
    obs.action_mask()[3] = 1;
    obs.action_mask()[4] = 1;
  }

  int level_ = 1, target_ = 0, noise_ = 0, masked_ = 1;
};

}  // namespace

RLX_ENV_PLUGIN(registrar) {
  registrar.add(grid_spec(), [] { return std::make_unique<GridEnv>(); });
  registrar.add(masked_grid_spec(), [] { return std::make_unique<MaskedGridEnv>(); });
}
