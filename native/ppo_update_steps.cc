#include "native/ppo_update_steps.h"

#include <numeric>
#include <string>
#include <utility>

#include "core/stop_signal.h"
#include "native/ppo_checks.h"

namespace rlx {

void PpoMinibatchOrder::start(uint64_t seed, int64_t update, int64_t num_samples, int64_t minibatch_size) {
  rng_.seed_with(ppo_permutation_seed(seed, update));
  permutation_.resize(static_cast<size_t>(num_samples));
  minibatch_size_ = minibatch_size;
}

const std::vector<int64_t>& PpoMinibatchOrder::next_epoch() {
  std::iota(permutation_.begin(), permutation_.end(), int64_t{0});
  for (int64_t i = num_samples() - 1; i > 0; --i) {
    std::swap(permutation_[static_cast<size_t>(i)], permutation_[static_cast<size_t>(rng_.uniform_int(i + 1))]);
  }
  return permutation_;
}

NonFiniteLearnerError ppo_non_finite_error(int64_t num_updates_done, int64_t epoch, int64_t minibatch, double grad_norm,
                                           double policy_loss, double value_loss) {
  const std::string detail = "PPO update " + std::to_string(num_updates_done + 1) + ", epoch " + std::to_string(epoch + 1) +
                             ", minibatch " + std::to_string(minibatch + 1) + ": gradient norm " + std::to_string(grad_norm) +
                             ", policy loss " + std::to_string(policy_loss) + ", value loss " + std::to_string(value_loss);
  return NonFiniteLearnerError(detail + " (not finite); the update was undone, no weight changed (try a smaller lr "
                                        "or grad_clip, or normalize_observations)");
}

std::string ppo_abandoned_message(int64_t epoch, int64_t minibatch, int64_t num_epochs, int64_t num_minibatches) {
  return "the PPO update was abandoned before epoch " + std::to_string(epoch + 1) + " of " + std::to_string(num_epochs) +
         ", minibatch " + std::to_string(minibatch + 1) + " of " + std::to_string(num_minibatches) +
         ": the stop is overdue (half of " + kStopGraceEnv + " passed); the learner is back as it was before the update";
}

void set_ppo_step_means(const double* loss_sums, double grad_norm_sum, int64_t steps, PpoUpdateMetrics& metrics) {
  const auto count = static_cast<double>(steps);
  metrics.policy_loss = loss_sums[0] / count;
  metrics.vf_loss = loss_sums[1] / count;
  metrics.entropy = loss_sums[2] / count;
  metrics.approx_kl = loss_sums[3] / count;
  metrics.clip_fraction = loss_sums[4] / count;
  metrics.kl_to_target = loss_sums[5] / count;
  metrics.grad_norm = grad_norm_sum / count;
  metrics.num_minibatch_steps = steps;
}

std::shared_ptr<Weights> ppo_weights(uint64_t version, std::vector<float> params, const RunningMeanStd* obs_stats) {
  auto weights = std::make_shared<Weights>();
  weights->policy_version = version;
  weights->params = std::move(params);
  if (obs_stats != nullptr) {
    weights->obs_mean = obs_stats->mean();
    weights->obs_var = obs_stats->var();
    weights->obs_count = obs_stats->count();
  }
  return weights;
}

}  // namespace rlx
