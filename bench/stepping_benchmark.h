// Raw environment stepping speed: the limit any sampling pipeline is measured against.
#pragma once

#include <cstdint>

#include "envs/registry.h"

namespace rlx {

// What one stepping measurement saw.
struct SteppingMeasurement {
  int64_t env_steps = 0;
  double seconds = 0.0;
  int64_t episodes = 0;
  double env_steps_per_s() const { return seconds > 0 ? env_steps / seconds : 0.0; }
};

// Steps a VectorEnv of num_envs for steps_per_env steps each with pre-drawn random actions
// (drawing them is not timed) on the calling thread, auto-resetting as training would; both parts
// of the observation (floats and bytes) are copied out every step.
SteppingMeasurement measure_env_stepping(const EnvFactory& factory, int num_envs, int64_t steps_per_env,
                                         uint64_t seed);

// Steps per env that take about `seconds` here (grown from a short trial run).
int64_t calibrate_env_steps(const EnvFactory& factory, int num_envs, double seconds, uint64_t seed);

}  // namespace rlx
