// VectorEnv: K environments stepped as one batch, with auto-reset and final observations.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "envs/registry.h"

namespace rlx {

// Actions for all K envs: `indices` [K, D] for Discrete (D = 1), MultiDiscrete and MultiBinary
// spaces (D = action_space.size()), each counted from 0 (the space's start is added on the way to
// the env); `values` [K, action size] for Box.
struct ActionBatch {
  const int64_t* indices = nullptr;
  const float* values = nullptr;
};

// Caller-owned outputs of one VectorEnv::step, each with K rows.
// Observations have two parts (core/observation_layout.h): floats [K, obs size] and bytes
// [K, obs bytes]; the byte buffers may be null when obs_bytes() is 0.
struct VectorStepBuffers {
  float* obs = nullptr;              // [K, obs size]: next obs, or the reset obs where an episode ended
  float* rewards = nullptr;          // [K]
  uint8_t* terminated = nullptr;     // [K]
  uint8_t* truncated = nullptr;      // [K]
  float* final_obs = nullptr;        // [K, obs size]: last obs of an episode that ended (rows where done)
  double* episode_returns = nullptr; // [K]: return of an episode that ended (rows where done); optional
  int32_t* episode_lengths = nullptr;// [K]: length of an episode that ended (rows where done); optional
  uint8_t* obs_bytes = nullptr;      // [K, obs bytes]: obs's bytes
  uint8_t* final_obs_bytes = nullptr;// [K, obs bytes]: final_obs's bytes
};

// What VectorEnv does when an env returns a non-finite observation or reward during a step.
enum class NonFinitePolicy {
  kError,        // throw the env's NonFiniteEnvOutput, naming the env index (the default)
  kDropEpisode,  // end that episode there and count it (see VectorEnv::step)
};

// Steps K copies of one env in lock step. When an episode ends (terminated or truncated) the
// env is reset at once, as Gymnasium 0.29's SyncVectorEnv does: obs holds the new episode's
// first observation and final_obs the finished episode's last one, for bootstrapping.
class VectorEnv {
 public:
  // Makes num_envs instances with the factory; throws std::invalid_argument if num_envs < 1.
  VectorEnv(const EnvFactory& factory, int num_envs, NonFinitePolicy non_finite = NonFinitePolicy::kError);

  int num_envs() const { return static_cast<int>(envs_.size()); }
  const EnvSpec& spec() const { return envs_.front()->spec(); }
  const ObservationLayout& observation_layout() const { return envs_.front()->observation_layout(); }
  // Floats of one observation.
  int64_t obs_size() const { return obs_size_; }
  // Bytes of one observation (its uint8 leaves and action mask).
  int64_t obs_bytes() const { return obs_bytes_; }
  // Floats of one Box action; 0 for the other action spaces.
  int64_t action_size() const { return action_size_; }
  // Indices of one action: 1 for Discrete, action_space.size() for MultiDiscrete and MultiBinary; 0 for Box.
  int64_t action_indices() const { return action_indices_; }

  // Resets every env, env i with seed + i, and writes obs [K, obs size] and obs_bytes [K, obs bytes].
  void reset(uint64_t seed, float* obs, uint8_t* obs_bytes = nullptr);

  // Steps every env once with its action and fills the buffers (see VectorStepBuffers). An env
  // that breaks its contract throws its EnvOutputError prefixed with "env i" (envs before it
  // have stepped). With NonFinitePolicy::kDropEpisode a non-finite step instead ends the episode
  // as a truncation at the last finite observation (final_obs = the observation it acted on,
  // reward 0), leaves it out of the episode returns (episode_lengths gets -1 for that row) and
  // counts it in episodes_dropped(); the env is reset as after any episode end.
  void step(const ActionBatch& actions, const VectorStepBuffers& out);

  // Episodes ended by a non-finite step under NonFinitePolicy::kDropEpisode, so far.
  int64_t episodes_dropped() const { return episodes_dropped_; }

  // Every env's snapshot and the running returns, for an exact resume; nullopt when some env
  // cannot snapshot itself (Env::snapshot).
  struct Snapshot {
    std::vector<EnvSnapshot> envs;
    std::vector<double> running_returns;
    std::vector<float> last_obs;  // [K, O] kDropEpisode's last finite observations
    std::vector<uint8_t> last_obs_bytes;  // [K, B] their bytes
  };
  std::optional<Snapshot> snapshot() const;
  // Restores a snapshot() of a VectorEnv of the same env and size; throws std::invalid_argument
  // on a mismatch.
  void restore(const Snapshot& snapshot);

  // Env i, for inspection and tests.
  Env& env(int i) { return *envs_.at(static_cast<size_t>(i)); }

 private:
  // Env i's action of the batch, as its space's values.
  Action action_of(const ActionBatch& actions, size_t i);

  std::vector<std::unique_ptr<Env>> envs_;
  std::vector<double> running_returns_;
  NonFinitePolicy non_finite_;
  std::vector<float> last_obs_;  // [K, O] with kDropEpisode: the observation each env acts on next
  std::vector<uint8_t> last_obs_bytes_;  // [K, B] its bytes
  int64_t episodes_dropped_ = 0;
  int64_t obs_size_ = 0;
  int64_t obs_bytes_ = 0;
  int64_t action_size_ = 0;
  int64_t action_indices_ = 0;
  std::vector<int64_t> action_starts_;  // [D] the value of index 0 of each action element
  std::vector<int64_t> action_scratch_; // [D] one env's action as its space's values
};

}  // namespace rlx
