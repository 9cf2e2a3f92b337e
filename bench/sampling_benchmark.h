// Local sampling speed: the same VectorEnv stepping as measure_env_stepping plus the same
// batched policy inference a rollout worker runs, in one process, no transport. Reported by
// `rlx bench sampling` as local_steps_per_s, beside raw stepping (bench/stepping_benchmark.h).
#pragma once

#include <cstdint>
#include <string>

#include "envs/registry.h"
#include "models/model_spec.h"

namespace rlx {

// What one local sampling measurement saw.
struct LocalSamplingMeasurement {
  int64_t env_steps = 0;          // T * K per fragment, over all timed fragments
  int64_t fragments = 0;
  int64_t episodes = 0;
  int64_t inference_calls = 0;    // one per step of K envs
  double seconds = 0.0;           // wall time of the timed fragments
  double inference_seconds = 0.0; // part of it spent in RolloutPolicy::act
  int64_t num_parameters = 0;     // size of the flat weight vector
  double cpu_seconds = 0.0;       // CPU time of this thread in the timed fragments

  // CPU microseconds per env step (steady under a shared machine, unlike the wall-time rate).
  double cpu_us_per_step() const { return env_steps > 0 ? 1e6 * cpu_seconds / env_steps : 0.0; }

  double env_steps_per_s() const { return seconds > 0 ? env_steps / seconds : 0.0; }
  // Mean cost of one batched inference call (all K envs), in microseconds.
  double inference_us_per_call() const { return inference_calls > 0 ? 1e6 * inference_seconds / inference_calls : 0.0; }
};

// Collects fragments of fragment_length steps from num_envs envs with an ActorCriticPolicy
// (sampling, as PPO workers do) for about `seconds` (at least one fragment, after one untimed
// warm-up fragment). The observation space (float or byte, obs_size its flat size), action mask
// and action space come from the env; hidden sizes, activation and
// trunk sharing from policy_config. Runs the torch-free inference kernel on this thread, as a
// worker does. Throws std::invalid_argument on bad sizes.
LocalSamplingMeasurement measure_local_sampling(const EnvFactory& factory, int num_envs, int fragment_length,
                                                const ModelSpec& policy_config, double seconds, uint64_t seed);

// Same for a registered env id (global_env_registry()).
LocalSamplingMeasurement measure_local_sampling(const std::string& env_id, int num_envs, int fragment_length,
                                                const ModelSpec& policy_config, double seconds, uint64_t seed);

}  // namespace rlx
