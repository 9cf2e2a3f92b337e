// FragmentCollector: steps a VectorEnv with a RolloutPolicy and cuts the stream into
// SampleBatch fragments of T steps, continuing across fragments without resets.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "core/sample_batch.h"
#include "envs/vector_env.h"
#include "models/rollout_policy.h"

namespace rlx {

// One finished episode seen by a collector.
struct FinishedEpisode {
  double episode_return = 0.0;
  int32_t length = 0;
};

// Records, per step t and env k: the observation the action was chosen on (raw, before any
// policy-side normalisation), the action (Box: the unclipped sample; the env receives it
// clipped to the action space), reward, terminated, truncated, and the policy's log-prob and
// value when it has them; final_obs / final_obs_index for every step that ended an episode;
// bootstrap_obs = the observation after step T-1 (the next fragment's obs[0]). A recurrent
// policy's states before step 0 go into initial_states, and an env's state is zeroed when its
// episode ends (the next observation starts a new one).
class FragmentCollector {
 public:
  // Borrows envs and policy (both must outlive the collector) and resets env i with seed + i.
  // Throws std::invalid_argument when T < 1 or the policy's obs size / action kind do not match.
  FragmentCollector(VectorEnv& envs, RolloutPolicy& policy, int fragment_length, uint64_t seed);
  // Same, owning the envs.
  FragmentCollector(std::unique_ptr<VectorEnv> envs, RolloutPolicy& policy, int fragment_length, uint64_t seed);

  // Steps T times and fills out (resized as needed; reusing one SampleBatch avoids allocation).
  // Sets out.policy_version to the policy's version; leaves out.worker_id alone.
  void collect(SampleBatch& out);

  // Episodes finished since the last call, in the order they ended; clears the list. Episodes
  // the VectorEnv dropped (NonFinitePolicy::kDropEpisode) are not among them.
  std::vector<FinishedEpisode> take_finished_episodes();
  // Episodes dropped for a non-finite step since the last call; resets the count.
  int64_t take_episodes_dropped();

  // Where the stream stands, for an exact resume: the envs, the observations the next step acts
  // on, the policy's sampling generator and the step count (take the finished episodes first:
  // they are not part of it). nullopt when an env cannot snapshot itself.
  struct Snapshot {
    VectorEnv::Snapshot envs;
    std::vector<float> current_obs;  // [K, O]
    Rng::State policy_rng;
    int64_t env_steps = 0;
    std::vector<uint8_t> current_obs_u8;  // [K, B] their bytes
    std::vector<float> policy_states;     // [K, S] a recurrent policy's states (empty: memoryless, or none yet)
  };
  std::optional<Snapshot> snapshot() const;
  // Continues from a snapshot() of a collector over the same env, K and policy kind; throws
  // std::invalid_argument on a mismatch.
  void restore(const Snapshot& snapshot);

  int fragment_length() const { return fragment_length_; }
  int num_envs() const { return envs_->num_envs(); }
  // Env steps taken so far over all envs (T * K per fragment).
  int64_t env_steps() const { return env_steps_; }
  VectorEnv& envs() { return *envs_; }

 private:
  std::unique_ptr<VectorEnv> owned_;
  VectorEnv* envs_;
  RolloutPolicy& policy_;
  int fragment_length_;
  bool discrete_;
  int64_t obs_size_;
  int64_t obs_bytes_;
  int64_t action_size_;  // A, 0 for indexed actions
  int64_t action_components_;  // D: indices per action, 1 for Box
  std::vector<float> action_low_, action_high_;
  std::vector<float> current_obs_;     // [K, O] the observation the next step acts on
  std::vector<float> clipped_actions_; // [K, A]
  std::vector<float> final_obs_;       // [K, O] scratch for VectorEnv::step
  std::vector<uint8_t> current_obs_u8_;// [K, B] its bytes
  std::vector<uint8_t> final_obs_u8_;  // [K, B]
  std::vector<double> episode_returns_;
  std::vector<int32_t> episode_lengths_;
  std::vector<FinishedEpisode> finished_;
  int64_t episodes_dropped_ = 0;
  int64_t env_steps_ = 0;
};

}  // namespace rlx
