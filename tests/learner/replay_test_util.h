// Helpers for the replay tests: hand-made fragments and a sink that keeps transitions.
#pragma once

#include <cstdint>
#include <vector>

#include "core/sample_batch.h"
#include "learner/replay_nstep.h"

namespace rlx_test {

// One env's column of a hand-made fragment with O = 1 (each observation one float).
struct EnvColumn {
  std::vector<float> obs;               // [T]
  std::vector<float> rewards;           // [T]
  std::vector<int> terminated_at;       // steps that terminated
  std::vector<int> truncated_at;        // steps that were truncated
  std::vector<float> final_obs;         // one per episode end, in time order
  float bootstrap_obs = 0.0f;
};

// A time-major fragment of K = envs.size() envs, O = 1, actions a = 10 * k + t.
inline rlx::SampleBatch make_fragment(const std::vector<EnvColumn>& envs, uint64_t worker_id = 1) {
  const auto k_envs = static_cast<int32_t>(envs.size());
  const auto steps = static_cast<int32_t>(envs.front().obs.size());
  rlx::SampleBatch batch;
  batch.resize(steps, k_envs, 1, 0, false);
  batch.worker_id = worker_id;
  std::vector<size_t> ended(envs.size(), 0);
  for (int32_t t = 0; t < steps; ++t) {
    for (int32_t k = 0; k < k_envs; ++k) {
      const EnvColumn& env = envs[static_cast<size_t>(k)];
      const auto f = static_cast<size_t>(t * k_envs + k);
      batch.obs[f] = env.obs[static_cast<size_t>(t)];
      batch.action_indices[f] = 10 * k + t;
      batch.rewards[f] = env.rewards[static_cast<size_t>(t)];
      for (int s : env.terminated_at) batch.terminated[f] = batch.terminated[f] || s == t;
      for (int s : env.truncated_at) batch.truncated[f] = batch.truncated[f] || s == t;
      if (batch.terminated[f] || batch.truncated[f]) {
        batch.final_obs_index.push_back(static_cast<int32_t>(f));
        batch.final_obs.push_back(env.final_obs.at(ended[static_cast<size_t>(k)]++));
      }
    }
  }
  for (int32_t k = 0; k < k_envs; ++k) batch.bootstrap_obs[static_cast<size_t>(k)] = envs[static_cast<size_t>(k)].bootstrap_obs;
  return batch;
}

// A transition with its observations copied (O = 1).
struct Kept {
  float obs = 0.0f;
  int64_t action = 0;
  float reward = 0.0f;
  float next_obs = 0.0f;
  bool terminated = false;
  float discount = 0.0f;
};

struct KeepingSink {
  std::vector<Kept> kept;
  rlx::TransitionSink sink() {
    return [this](const rlx::Transition& t) { kept.push_back({t.obs[0], t.action, t.reward, t.next_obs[0], t.terminated, t.discount}); };
  }
};

}  // namespace rlx_test
