// VectorEnv: K environments stepped as one batch, with auto-reset and final observations.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "envs/registry.h"

namespace rlx {

// Actions for all K envs: `indices` [K] for Discrete spaces, `values` [K, action size] for Box.
struct ActionBatch {
  const int64_t* indices = nullptr;
  const float* values = nullptr;
};

// Caller-owned outputs of one VectorEnv::step, each with K rows.
struct VectorStepBuffers {
  float* obs = nullptr;              // [K, obs size]: next obs, or the reset obs where an episode ended
  float* rewards = nullptr;          // [K]
  uint8_t* terminated = nullptr;     // [K]
  uint8_t* truncated = nullptr;      // [K]
  float* final_obs = nullptr;        // [K, obs size]: last obs of an episode that ended (rows where done)
  double* episode_returns = nullptr; // [K]: return of an episode that ended (rows where done); optional
  int32_t* episode_lengths = nullptr;// [K]: length of an episode that ended (rows where done); optional
};

// Steps K copies of one env in lock step. When an episode ends (terminated or truncated) the
// env is reset at once, as Gymnasium 0.29's SyncVectorEnv does: obs holds the new episode's
// first observation and final_obs the finished episode's last one, for bootstrapping.
class VectorEnv {
 public:
  // Makes num_envs instances with the factory; throws std::invalid_argument if num_envs < 1.
  VectorEnv(const EnvFactory& factory, int num_envs);

  int num_envs() const { return static_cast<int>(envs_.size()); }
  const EnvSpec& spec() const { return envs_.front()->spec(); }
  int64_t obs_size() const { return obs_size_; }
  int64_t action_size() const { return action_size_; }

  // Resets every env, env i with seed + i, and writes obs [K, obs size].
  void reset(uint64_t seed, float* obs);

  // Steps every env once with its action and fills the buffers (see VectorStepBuffers).
  void step(const ActionBatch& actions, const VectorStepBuffers& out);

  // Env i, for inspection and tests.
  Env& env(int i) { return *envs_.at(static_cast<size_t>(i)); }

 private:
  std::vector<std::unique_ptr<Env>> envs_;
  std::vector<double> running_returns_;
  int64_t obs_size_ = 0;
  int64_t action_size_ = 0;
};

}  // namespace rlx
