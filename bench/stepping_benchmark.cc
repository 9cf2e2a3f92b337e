#include "bench/stepping_benchmark.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <vector>

#include "envs/random_actions.h"
#include "envs/vector_env.h"

namespace rlx {

SteppingMeasurement measure_env_stepping(const EnvFactory& factory, int num_envs, int64_t steps_per_env,
                                         uint64_t seed) {
  if (steps_per_env < 1) throw std::invalid_argument("the stepping benchmark needs at least one step per env");
  VectorEnv envs(factory, num_envs);
  const Space& action_space = envs.spec().action_space;
  const int64_t k = num_envs;
  // A pool of pre-drawn action batches, cycled through so drawing costs nothing in the loop.
  constexpr int64_t kActionBatches = 256;
  Rng rng(seed);
  std::vector<int64_t> indices(action_space.is_box() ? 0 : kActionBatches * k * envs.action_indices());  // Discrete: 1 an env
  std::vector<float> values(action_space.is_box() ? kActionBatches * k * envs.action_size() : 0);
  sample_actions(action_space, rng, kActionBatches * k, indices.data(), values.data());

  std::vector<float> obs(k * envs.obs_size()), final_obs(k * envs.obs_size()), rewards(k);
  std::vector<uint8_t> obs_bytes(k * envs.obs_bytes()), final_obs_bytes(k * envs.obs_bytes());
  std::vector<uint8_t> terminated(k), truncated(k);
  VectorStepBuffers out{obs.data(), rewards.data(), terminated.data(), truncated.data(), final_obs.data()};
  out.obs_bytes = obs_bytes.data();
  out.final_obs_bytes = final_obs_bytes.data();
  envs.reset(seed, obs.data(), obs_bytes.data());

  SteppingMeasurement result;
  const auto start = std::chrono::steady_clock::now();
  for (int64_t t = 0; t < steps_per_env; ++t) {
    const int64_t batch = t % kActionBatches;
    ActionBatch actions;
    if (!action_space.is_box()) {
      actions.indices = indices.data() + batch * k * envs.action_indices();
    } else {
      actions.values = values.data() + batch * k * envs.action_size();
    }
    envs.step(actions, out);
    for (int64_t i = 0; i < k; ++i) result.episodes += terminated[i] | truncated[i];
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.env_steps = steps_per_env * k;
  return result;
}

int64_t calibrate_env_steps(const EnvFactory& factory, int num_envs, double seconds, uint64_t seed) {
  int64_t trial = 256;
  SteppingMeasurement probe = measure_env_stepping(factory, num_envs, trial, seed);
  while (probe.seconds < 0.1 && trial < (int64_t{1} << 34)) {
    trial *= 4;
    probe = measure_env_stepping(factory, num_envs, trial, seed);
  }
  return std::max<int64_t>(1, static_cast<int64_t>(trial * seconds / std::max(probe.seconds, 1e-9)));
}

}  // namespace rlx
