// PluginCounter-v0: the trivial env the test plugins register (obs = steps taken so far).
#pragma once

#include <memory>

#include "envs/plugin.h"

namespace rlx_test_plugins {

class CounterEnv : public rlx::Env {
 public:
  CounterEnv() : Env(default_spec()) {}

  // Box(1) observation in [0, 10], Discrete(2) actions, reward = action, 10 steps.
  static rlx::EnvSpec default_spec() {
    rlx::EnvSpec spec;
    spec.id = "PluginCounter-v0";
    spec.observation_space = rlx::Space::box({1}, 0.0f, 10.0f);
    spec.action_space = rlx::Space::discrete(2);
    spec.max_episode_steps = 10;
    return spec;
  }

 protected:
  void reset_episode(rlx::Rng&, rlx::ObsSpan obs) override {
    count_ = 0;
    obs[0] = 0.0f;
  }
  rlx::StepResult step_episode(const rlx::Action& action, rlx::ObsSpan obs) override {
    obs[0] = static_cast<float>(++count_);
    rlx::StepResult result;
    result.reward = static_cast<double>(action.index);
    return result;
  }

 private:
  int count_ = 0;
};

// A factory for the registry.
inline std::unique_ptr<rlx::Env> make_counter_env() { return std::make_unique<CounterEnv>(); }

}  // namespace rlx_test_plugins
