// Helpers shared by the MuJoCo task tests (mujoco_test.cc, mujoco_dynamics_test.cc).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "envs/mujoco/mujoco_env.h"
#include "envs/registry.h"

namespace rlx::test {

// The registered env `id` (e.g. "Hopper-v4"), with its time limit.
inline std::unique_ptr<rlx::Env> make_env(const std::string& id) { return rlx::global_env_registry().make(id); }

// A state vector for set_state: qpos0, and zero velocities (callers override entries).
inline std::vector<double> rest_state(const rlx::MujocoEnv& env) {
  const mjModel& m = env.model();
  std::vector<double> state(static_cast<size_t>(m.nq + m.nv), 0.0);
  for (int i = 0; i < m.nq; ++i) state[static_cast<size_t>(i)] = m.qpos0[i];
  return state;
}

}  // namespace rlx::test
