// What both PPO learners (LibTorch's learner/ppo_learner.h and native/native_ppo_learner.h) do
// the same way outside the arithmetic of their networks: the config and batch checks, the seed
// of each update's minibatch permutations, and the explained variance they report.
#pragma once

#include <cstdint>
#include <vector>

#include "core/algorithm_config.h"
#include "core/sample_batch.h"
#include "models/model_spec.h"

namespace rlx {

// The schema's checks of the keys, and of the members no key sets (total_timesteps >= 1 when a
// schedule anneals); std::invalid_argument naming the value.
void validate_ppo_config(const PpoConfig& config);

// Throws std::invalid_argument naming the first problem of an update's fragments for a model:
// none, none with transitions, another obs or action size, no behaviour log-probs, an indexed
// action with another element count, an index out of its range or one its mask forbids, no values when recompute_values is off, a truncated step without final_obs.
void check_ppo_batches(const std::vector<SampleBatch>& batches, const ModelSpec& model, bool recompute_values);

// The seed of update number `update`'s minibatch permutations (splitmix64 of both), so that a
// checkpoint needs only the update count to reproduce the next permutations.
uint64_t ppo_permutation_seed(uint64_t seed, int64_t update);

// 1 - Var(returns - values) / Var(returns) over n samples; NaN when the returns are constant.
double explained_variance(const float* values, const float* returns, int64_t n);

}  // namespace rlx
