// Bare MuJoCo stepping of an env's model: the physics-only limit that a MuJoCo env's step
// rate is compared against (env steps/s over mj_step/s divided by frame skip).
#pragma once

#include <optional>

#include "envs/env.h"

namespace rlx {

// mj_step calls per second on a fresh mjData of env's model, with random controls held for
// frame_skip steps and mj_resetData every 1000 env steps, for about `seconds`; nullopt when
// env is not a MuJoCo env.
std::optional<double> measure_mj_steps_per_s(const Env& env, double seconds, uint64_t seed);

// The env's frame skip, or nullopt when it is not a MuJoCo env.
std::optional<int> mujoco_frame_skip(const Env& env);

}  // namespace rlx
