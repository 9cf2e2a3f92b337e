// PpoLearner's train batch: the running statistics an update folds its samples into, the
// samples staged on the host and moved to the device, and their GAE or V-trace targets computed
// with the current network (native/ppo_fragments.h's layout and targets, shared with the native
// learner).
#include "learner/ppo_learner.h"

#include <torch/torch.h>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <limits>
#include <stdexcept>

#include "learner/tensor_copies.h"
#include "native/ppo_checks.h"

namespace rlx {

namespace {

// explained_variance over the samples of every rank, from sums all-reduced in one call.
double sharded_explained_variance(const float* values, const float* returns, int64_t n,
                                  const std::function<void(std::vector<double>&)>& allreduce_host) {
  if (!allreduce_host) throw std::logic_error("a sharded PPO update needs the allreduce_host hook");
  std::vector<double> sums(5, 0.0);  // n, sum y, sum y^2, sum e, sum e^2
  for (int64_t i = 0; i < n; ++i) {
    const double y = returns[i];
    const double e = y - values[i];
    sums[1] += y;
    sums[2] += y * y;
    sums[3] += e;
    sums[4] += e * e;
  }
  sums[0] = static_cast<double>(n);
  allreduce_host(sums);
  const double count = sums[0];
  const double var_y = sums[2] / count - (sums[1] / count) * (sums[1] / count);
  const double var_e = sums[4] / count - (sums[3] / count) * (sums[3] / count);
  if (var_y <= 0.0) return std::numeric_limits<double>::quiet_NaN();
  return 1.0 - var_e / var_y;
}

}  // namespace

void PpoLearner::update_obs_stats_sharded(const std::vector<SampleBatch>& batches) {
  if (!hooks_.allreduce_host) throw std::logic_error("a sharded PPO update needs the allreduce_host hook");
  const auto o = static_cast<size_t>(model_config_.obs_size);
  // Global count and mean first, then the squared deviations about the global mean (two
  // all-reduces, numerically as stable as a single-process pass).
  std::vector<double> sums(o + 1, 0.0);
  for (const SampleBatch& batch : batches) {
    const float* x = batch.obs.data();
    const auto rows = static_cast<size_t>(batch.num_transitions());
    sums[0] += static_cast<double>(rows);
    for (size_t r = 0; r < rows; ++r) {
      for (size_t j = 0; j < o; ++j) sums[1 + j] += x[r * o + j];
    }
  }
  hooks_.allreduce_host(sums);
  const double count = sums[0];
  if (count <= 0.0) return;
  std::vector<double> mean(o), m2(o, 0.0);
  for (size_t j = 0; j < o; ++j) mean[j] = sums[1 + j] / count;
  for (const SampleBatch& batch : batches) {
    const float* x = batch.obs.data();
    const auto rows = static_cast<size_t>(batch.num_transitions());
    for (size_t r = 0; r < rows; ++r) {
      for (size_t j = 0; j < o; ++j) {
        const double d = x[r * o + j] - mean[j];
        m2[j] += d * d;
      }
    }
  }
  hooks_.allreduce_host(m2);
  for (double& v : m2) v /= count;
  obs_stats_.update_from_moments(mean, m2, count);
}

void PpoLearner::scale_rewards(std::vector<SampleBatch>& batches) {
  if (!config_.scale_rewards) return;
  for (SampleBatch& batch : batches) {
    batch.validate();
    scaled_rewards_.resize(static_cast<size_t>(batch.num_transitions()));
    reward_scaler_.scale(batch, scaled_rewards_.data());
    std::copy(scaled_rewards_.begin(), scaled_rewards_.end(), batch.rewards.begin());
  }
}

void PpoLearner::update_obs_stats(const std::vector<SampleBatch>& batches, const PpoShard* shard) {
  if (shard != nullptr) {
    update_obs_stats_sharded(batches);
  } else {
    for (const SampleBatch& batch : batches) obs_stats_.update(batch.obs.data(), batch.num_transitions());
  }
  refresh_obs_tensors();
}

PpoLearner::TrainBatch PpoLearner::prepare(const std::vector<SampleBatch>& batches, bool update_statistics,
                                           const PpoShard* shard) {
  const PpoRowCounts rows = count_ppo_rows(batches);
  const int64_t n = rows.samples, o = model_config_.obs_size;
  TrainBatch out;
  out.num_samples = n;

  const bool fold_statistics = update_statistics && config_.normalize_observations;
  if (fold_statistics && !config_.obs_stats_after_update) update_obs_stats(batches, shard);
  stage_samples(batches, rows, update_statistics, (shard != nullptr && shard->rewards_prescaled) || rewards_prescaled_);

  // Values of every observation (samples, final and bootstrap) in one pass of the current network.
  torch::Tensor obs_all = normalize(device_copy(obs_host_.data(), {n + rows.extra, o}, torch::kFloat, device_));
  if (fold_statistics && config_.obs_stats_after_update) update_obs_stats(batches, shard);  // as the workers saw them
  if (model_->discrete()) {
    const auto elements = static_cast<int64_t>(model_config_.action_categories().size());
    out.actions = device_copy(action_index_host_.data(), {n, elements}, torch::kLong, device_);
  } else {
    out.actions = device_copy(action_value_host_.data(), {n, model_config_.action_space.size()}, torch::kFloat, device_);
  }
  if (model_config_.action_mask) {
    out.masks = device_copy(mask_host_.data(), {n, model_config_.policy_output_size()}, torch::kByte, device_).to(torch::kBool);
  }
  torch::Tensor values_all;
  if (model_->recurrent()) {
    values_all = prepare_sequences(batches, obs_all, n, out);
  } else {
    torch::NoGradGuard no_grad;
    values_all = model_->value_forward(obs_all).to(torch::kCPU).contiguous();
    if (config_.vtrace || !config_.behaviour_ratio) {
      stage_log_ratios(model_->policy_forward(obs_all.narrow(0, 0, n)), out.actions, out.masks, n);
    }
    if (config_.kl_coeff > 0.0) out.target_policy = target_model().policy_forward(obs_all.narrow(0, 0, n));
  }

  // GAE or V-trace per fragment on the host.
  float* old_values = columns_host_.data() + TrainBatch::kOldValues * n;
  float* returns = columns_host_.data() + TrainBatch::kReturns * n;
  compute_ppo_targets(batches, config_, scaled_rewards_.data(), values_all.data_ptr<float>(),
                      config_.vtrace ? log_ratios_.data() : nullptr, old_values,
                      columns_host_.data() + TrainBatch::kAdvantages * n, returns);
  if (shard != nullptr) {
    out.explained_variance = sharded_explained_variance(old_values, returns, n, hooks_.allreduce_host);
  } else {
    out.explained_variance = explained_variance(old_values, returns, n);
  }
  out.obs = obs_all.narrow(0, 0, n);
  out.columns = device_copy(columns_host_.data(), {TrainBatch::kNumColumns, n}, torch::kFloat, device_);
  return out;
}

void PpoLearner::stage_samples(const std::vector<SampleBatch>& batches, const PpoRowCounts& rows,
                               bool update_statistics, bool prescaled) {
  const int64_t n = rows.samples, o = model_config_.obs_size;
  obs_host_.resize(static_cast<size_t>((n + rows.extra) * o));
  const ObservationLayout layout = model_config_.observation_layout();
  stage_ppo_observations(batches, rows, layout, obs_host_.data());
  if (layout.mask_size > 0) {
    mask_host_.resize(static_cast<size_t>(n * layout.mask_size));
    stage_ppo_masks(batches, layout, mask_host_.data());
  }

  columns_host_.resize(static_cast<size_t>(TrainBatch::kNumColumns * n));
  const bool discrete = model_->discrete();
  if (discrete) {
    action_index_host_.resize(static_cast<size_t>(n) * model_config_.action_categories().size());
  } else {
    action_value_host_.resize(static_cast<size_t>(n * model_config_.action_space.size()));
  }
  stage_ppo_actions(batches, discrete, columns_host_.data() + TrainBatch::kOldLogProbs * n, action_index_host_.data(),
                    action_value_host_.data());

  scaled_rewards_.resize(static_cast<size_t>(n));
  float* rewards = scaled_rewards_.data();
  for (const SampleBatch& batch : batches) {
    const int64_t count = batch.num_transitions();
    if (!config_.scale_rewards || prescaled) {
      std::copy(batch.rewards.begin(), batch.rewards.end(), rewards);
    } else if (update_statistics) {
      reward_scaler_.scale(batch, rewards);
    } else {
      reward_scaler_.scale_without_update(batch.rewards.data(), count, rewards);
    }
    rewards += count;
  }
}

void PpoLearner::stage_log_ratios(const torch::Tensor& policy_out, const torch::Tensor& actions, const torch::Tensor& masks,
                                  int64_t n) {
  const torch::Tensor log_probs =
      model_->distribution(policy_out, masks).log_prob(actions).to(torch::kCPU, torch::kFloat).contiguous();
  const float* current = log_probs.data_ptr<float>();
  float* behaviour = columns_host_.data() + TrainBatch::kOldLogProbs * n;
  log_ratios_.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) log_ratios_[static_cast<size_t>(i)] = current[i] - behaviour[i];
  // Without the behaviour ratio the surrogate's "old" policy is the learner's own.
  if (!config_.behaviour_ratio) std::copy(current, current + n, behaviour);
}

PpoTargets PpoLearner::compute_targets(const std::vector<SampleBatch>& batches) {
  check_batches(batches);
  const TrainBatch data = prepare(batches, /*update_statistics=*/false);
  const auto n = static_cast<std::ptrdiff_t>(data.num_samples);
  const auto column = [&](TrainBatch::Column c) {
    const auto first = columns_host_.begin() + c * n;
    return std::vector<float>(first, first + n);
  };
  return {column(TrainBatch::kOldValues), column(TrainBatch::kAdvantages), column(TrainBatch::kReturns)};
}

}  // namespace rlx
