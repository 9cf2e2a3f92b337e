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

// The bytes with_bytes() gives an observation of float value x: its low and high byte, then a
// two-action mask that allows action 0 for odd x and action 1 for even x.
constexpr int64_t kObsBytes = 4;
inline std::vector<uint8_t> obs_bytes_of(float x) {
  const auto v = static_cast<int32_t>(x);
  const auto odd = static_cast<uint8_t>(v % 2 != 0);
  return {static_cast<uint8_t>(v & 0xff), static_cast<uint8_t>((v >> 8) & 0xff), odd, static_cast<uint8_t>(1 - odd)};
}

// The fragment with kObsBytes bytes per observation, each derived from its float by obs_bytes_of.
inline rlx::SampleBatch with_bytes(rlx::SampleBatch batch) {
  batch.obs_byte_size = kObsBytes;
  auto fill = [](const std::vector<float>& floats, std::vector<uint8_t>& bytes) {
    bytes.clear();
    for (float x : floats) {
      const std::vector<uint8_t> b = obs_bytes_of(x);
      bytes.insert(bytes.end(), b.begin(), b.end());
    }
  };
  fill(batch.obs, batch.obs_u8);
  fill(batch.bootstrap_obs, batch.bootstrap_obs_u8);
  fill(batch.final_obs, batch.final_obs_u8);
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

// A transition's observation bytes, copied.
struct KeptBytes {
  std::vector<uint8_t> obs, next_obs;
};

// Keeps every transition; with bytes_per_obs > 0, that many bytes of each observation too.
struct KeepingSink {
  std::vector<Kept> kept;
  std::vector<KeptBytes> bytes;  // one per kept transition when bytes_per_obs > 0
  int64_t bytes_per_obs = 0;
  rlx::TransitionSink sink() {
    return [this](const rlx::Transition& t) {
      kept.push_back({t.obs[0], t.action, t.reward, t.next_obs[0], t.terminated, t.discount});
      if (bytes_per_obs > 0) {
        bytes.push_back({std::vector<uint8_t>(t.obs_u8, t.obs_u8 + bytes_per_obs),
                         std::vector<uint8_t>(t.next_obs_u8, t.next_obs_u8 + bytes_per_obs)});
      }
    };
  }
};

}  // namespace rlx_test
