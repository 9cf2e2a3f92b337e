// An update's fragments laid out as flat rows, and their value targets: the same for both PPO
// learners (LibTorch's learner/ppo_learner.h and native/native_ppo_learner.h), which differ only
// in the network that computes the values between the two steps.
//
// The rows: first the N samples of every fragment, in fragment order (t-major within one); then
// E extra observations whose values the targets bootstrap from, fragment by fragment: its final
// observations at steps truncated but not terminated (in final_obs_index order), then its K
// bootstrap observations.
#pragma once

#include <cstdint>
#include <vector>

#include "core/algorithm_config.h"
#include "core/observation_layout.h"
#include "core/sample_batch.h"

namespace rlx {

// How many rows an update's fragments stage.
struct PpoRowCounts {
  int64_t samples = 0;  // N
  int64_t extra = 0;    // E: final observations at truncations, and bootstrap observations
};

// The row counts of the fragments.
PpoRowCounts count_ppo_rows(const std::vector<SampleBatch>& batches);

// Writes the network's input of the rows above, [N + E, layout.flat_size], into obs: the raw
// observations flattened (core/observation_layout.h; a plain copy of float32 Box observations).
void stage_ppo_observations(const std::vector<SampleBatch>& batches, const PpoRowCounts& rows,
                            const ObservationLayout& layout, float* obs);

// Writes the action masks of the N samples' observations, [N, layout.mask_size], into masks.
void stage_ppo_masks(const std::vector<SampleBatch>& batches, const ObservationLayout& layout, uint8_t* masks);

// Writes the behaviour log-probs [N] and the actions in sample order: indices [N, D] into
// action_indices, or Box values [N, A] into action_values (the other pointer is not read).
void stage_ppo_actions(const std::vector<SampleBatch>& batches, bool discrete, float* log_probs,
                       int64_t* action_indices, float* action_values);

// Per fragment, GAE (or, given log_ratios [N] = log pi - log mu, V-trace with config's rho_bar
// and c_bar) from the rewards [N] and the current network's values of all rows [N + E]: writes
// old_values [N] (those values, or the batch's own unless config.recompute_values), advantages
// [N] and returns [N].
void compute_ppo_targets(const std::vector<SampleBatch>& batches, const PpoConfig& config, const float* rewards,
                         const float* row_values, const float* log_ratios, float* old_values, float* advantages,
                         float* returns);

}  // namespace rlx
