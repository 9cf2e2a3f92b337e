// ClassicEnv: the base of the classic-control tasks, whose physical state() is their whole
// dynamic state.
#pragma once

#include <vector>

#include "envs/env.h"

namespace rlx {

// An exact snapshot of a classic-control env is its state(), restored through set_state's hook.
class ClassicEnv : public Env {
 protected:
  using Env::Env;

  std::vector<double> exact_state() const override { return state(); }
  void restore_exact_state(const std::vector<double>& state) override {
    std::vector<float> unused(static_cast<size_t>(spec().observation_space.size()));
    set_physical_state(state, ObsSpan(unused.data(), static_cast<int64_t>(unused.size())));
  }
};

}  // namespace rlx
