// The bookkeeping of a PPO update that both PPO learners (LibTorch's learner/ppo_learner.h and
// native/native_ppo_learner.h) do the same way around their own gradient arithmetic: each epoch's
// minibatches, the error that stops a non-finite step, the note of an update a stop abandons,
// the means the update reports, and the weights it ships to the workers.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/non_finite_error.h"
#include "core/rng.h"
#include "models/weights.h"
#include "native/ppo_update_metrics.h"
#include "native/running_mean_std.h"

namespace rlx {

// How many loss statistics a minibatch step sums: policy loss, value loss, entropy, approx KL,
// clip fraction, KL to target (learner/ppo_loss.h's PpoLossStat order).
constexpr int kPpoLossSums = 6;

// The minibatches of an update's epochs: each epoch a Fisher-Yates permutation of the samples,
// drawn from the stream of ppo_permutation_seed(seed, update), cut into minibatches of
// minibatch_size (the last one shorter). The permutation's buffer is reused across updates.
class PpoMinibatchOrder {
 public:
  // Starts update number `update` (0-based) over num_samples samples.
  void start(uint64_t seed, int64_t update, int64_t num_samples, int64_t minibatch_size);
  // Draws the next epoch's permutation of 0 .. num_samples - 1.
  const std::vector<int64_t>& next_epoch();
  // Minibatches per epoch.
  int64_t num_minibatches() const { return (num_samples() + minibatch_size_ - 1) / minibatch_size_; }
  // Position in the epoch's permutation of minibatch `index`'s first sample.
  int64_t minibatch_start(int64_t index) const { return index * minibatch_size_; }
  // Samples in minibatch `index`.
  int64_t minibatch_size(int64_t index) const { return std::min(minibatch_size_, num_samples() - index * minibatch_size_); }
  int64_t num_samples() const { return static_cast<int64_t>(permutation_.size()); }

 private:
  Rng rng_;
  std::vector<int64_t> permutation_;
  int64_t minibatch_size_ = 1;
};

// The error a learner throws after undoing an update whose step met a non-finite loss or
// gradient norm: names the update, epoch and minibatch (given 0-based, said 1-based) and the values.
NonFiniteLearnerError ppo_non_finite_error(int64_t num_updates_done, int64_t epoch, int64_t minibatch, double grad_norm,
                                           double policy_loss, double value_loss);

// What StopRequested says when a stop abandons an update before minibatch `minibatch` of `epoch`
// (0-based; said 1-based, of num_epochs and num_minibatches): the update was undone.
std::string ppo_abandoned_message(int64_t epoch, int64_t minibatch, int64_t num_epochs, int64_t num_minibatches);

// Sets the metrics' loss statistics, gradient norm and step count to the means over `steps`
// minibatch steps, from loss_sums (kPpoLossSums values in the order above) and the sum of the
// steps' gradient norms before clipping.
void set_ppo_step_means(const double* loss_sums, double grad_norm_sum, int64_t steps, PpoUpdateMetrics& metrics);

// What a PPO learner ships to the workers: its flat float32 parameters and, when obs_stats is
// given (normalize_observations), the observation statistics.
std::shared_ptr<Weights> ppo_weights(uint64_t version, std::vector<float> params, const RunningMeanStd* obs_stats);

}  // namespace rlx
