#include "learner/ppo_learner.h"

#include "native/vtrace.h"

#include "core/config_schema.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/serialize/input-archive.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <cstring>
#include <limits>
#include <iterator>
#include <numeric>
#include <sstream>
#include <type_traits>
#include <stdexcept>
#include <string>
#include <utility>

#include "learner/actor_critic_backprop.h"
#include "native/gae.h"
#include "native/ppo_checks.h"
#include "native/ppo_state_file.h"
#include "learner/non_finite.h"

namespace rlx {

namespace {

constexpr int64_t kArchiveFormatVersion = 1;
constexpr double kClipGradEpsilon = 1e-6;  // as torch::nn::utils::clip_grad_norm_

// The schema's checks of the keys, and the members no key sets.
PpoConfig validated(PpoConfig config) {
  validate_ppo_config(config);
  return config;
}

// An ActorCritic initialised from seed via the default CPU generator, whose state is restored after.
std::shared_ptr<ActorCritic> make_seeded_model(const PolicyModelConfig& config, uint64_t seed) {
  const at::Generator& generator = at::detail::getDefaultCPUGenerator();
  torch::Tensor saved;
  {
    std::lock_guard<std::mutex> lock(const_cast<at::Generator&>(generator).mutex());
    saved = generator.get_state();
  }
  torch::manual_seed(seed);
  auto model = std::make_shared<ActorCritic>(config);
  {
    std::lock_guard<std::mutex> lock(const_cast<at::Generator&>(generator).mutex());
    const_cast<at::Generator&>(generator).set_state(saved);
  }
  return model;
}

// A tensor copy of host memory on device (never aliasing the host buffer).
template <typename T>
torch::Tensor to_device(const T* data, torch::IntArrayRef sizes, torch::ScalarType type, torch::Device device) {
  return torch::from_blob(const_cast<T*>(data), sizes, type).to(device, type, /*non_blocking=*/false, /*copy=*/true);
}

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

// [M, 3] float64 rows (sum A, sum A^2, count) of this rank's advantages in each of the epoch's
// M minibatches; `advantages` holds the rank's samples in minibatch order, counts[m] of them
// in minibatch m.
torch::Tensor advantage_moments_per_minibatch(const torch::Tensor& advantages, const std::vector<int64_t>& counts,
                                              torch::Device device) {
  const auto num_minibatches = static_cast<int64_t>(counts.size());
  const torch::Tensor count_tensor = to_device(counts.data(), {num_minibatches}, torch::kLong, device);
  const torch::Tensor a = advantages.to(torch::kDouble);
  const torch::Tensor minibatch_of_row = torch::repeat_interleave(count_tensor);  // m repeated counts[m] times
  torch::Tensor moments = torch::zeros({num_minibatches, 3}, a.options());
  moments.select(1, 0).index_add_(0, minibatch_of_row, a);
  moments.select(1, 1).index_add_(0, minibatch_of_row, a * a);
  moments.select(1, 2).copy_(count_tensor);
  return moments;
}

}  // namespace

// ---- PpoLearner ----

struct PpoLearner::Prepared {
  int64_t num_samples = 0;
  torch::Tensor obs;      // [N, O] normalised
  torch::Tensor actions;  // [N] int64 or [N, A] float
  torch::Tensor columns;  // [4, N] old log-probs, advantages, returns, old values
  torch::Tensor target_policy;  // [N, n or A] the target network's logits or means (APPO's KL term); else undefined
  double explained_variance = 0.0;
};

struct PpoLearner::Snapshot {
  torch::Tensor params;
  std::vector<torch::Tensor> adam;  // exp_avg, exp_avg_sq (, max_exp_avg_sq) of the flat parameter; empty before the first step
  int64_t adam_step = 0;
  RunningMeanStd obs_stats;
  RewardScaler reward_scaler;
  int64_t num_updates = 0;
};

PpoLearner::Snapshot PpoLearner::take_snapshot() const {
  Snapshot snapshot{flat_params_.detach().clone(), {}, 0, obs_stats_, reward_scaler_, num_updates_};
  for (const auto& entry : optimizer_->state()) {
    const auto& adam = static_cast<const torch::optim::AdamParamState&>(*entry.second);
    snapshot.adam = {adam.exp_avg().clone(), adam.exp_avg_sq().clone()};
    if (adam.max_exp_avg_sq().defined()) snapshot.adam.push_back(adam.max_exp_avg_sq().clone());
    snapshot.adam_step = adam.step();
  }
  return snapshot;
}

void PpoLearner::restore_snapshot(const Snapshot& snapshot) {
  torch::NoGradGuard no_grad;
  flat_params_.copy_(snapshot.params);
  if (snapshot.adam.empty()) {
    optimizer_->state().clear();  // the failed update was the first: Adam starts afresh
  } else {
    for (auto& entry : optimizer_->state()) {
      auto& adam = static_cast<torch::optim::AdamParamState&>(*entry.second);
      adam.exp_avg().copy_(snapshot.adam[0]);
      adam.exp_avg_sq().copy_(snapshot.adam[1]);
      if (snapshot.adam.size() > 2) adam.max_exp_avg_sq().copy_(snapshot.adam[2]);
      adam.step(snapshot.adam_step);
    }
  }
  obs_stats_ = snapshot.obs_stats;
  reward_scaler_ = snapshot.reward_scaler;
  num_updates_ = snapshot.num_updates;
  refresh_obs_tensors();
}

namespace {
// Rows of Prepared::columns.
enum Column : int64_t { kOldLogProbs = 0, kAdvantages, kReturns, kOldValues, kNumColumns };
}  // namespace

PpoLearner::PpoLearner(const PolicyModelConfig& model_config, PpoConfig config, uint64_t seed, torch::Device device)
    : model_config_(model_config),
      config_(validated(std::move(config))),
      seed_(seed),
      device_(device),
      obs_stats_(std::max<int64_t>(model_config.obs_size, 1)),
      reward_scaler_(config_.gamma) {
  model_ = make_seeded_model(model_config_, seed_);
  model_->to(device_);
  model_->train();
  flatten_parameters();
  optimizer_ = std::make_unique<torch::optim::Adam>(
      std::vector<torch::Tensor>{flat_params_}, torch::optim::AdamOptions(config_.lr).eps(config_.adam_eps));
  refresh_obs_tensors();
  refresh_backprop();
}

void PpoLearner::refresh_backprop() {
  // The KL term's gradient reaches the whole distribution: autograd computes it.
  if (config_.analytic_gradients && config_.kl_coeff == 0.0 && ActorCriticBackprop::supports(*model_)) {
    if (!backprop_) backprop_ = std::make_unique<ActorCriticBackprop>(*model_, flat_grads_);
  } else {
    backprop_.reset();
  }
}

PpoLearner::~PpoLearner() = default;

void PpoLearner::flatten_parameters() {
  torch::NoGradGuard no_grad;
  const auto options = torch::TensorOptions().dtype(torch::kFloat).device(device_);
  const int64_t total = model_->num_parameters();
  flat_params_ = torch::empty({total}, options);
  flat_grads_ = torch::zeros({total}, options);
  int64_t offset = 0;
  for (auto& p : model_->parameters()) {
    const int64_t n = p.numel();
    torch::Tensor view = flat_params_.narrow(0, offset, n).view(p.sizes());
    view.copy_(p);
    p.set_data(view);
    p.mutable_grad() = flat_grads_.narrow(0, offset, n).view(p.sizes());
    offset += n;
  }
  flat_params_.mutable_grad() = flat_grads_;
}

void PpoLearner::refresh_obs_tensors() {
  if (!config_.normalize_observations) {
    obs_mean_ = torch::Tensor();
    obs_var_ = torch::Tensor();
    return;
  }
  // Rounded to float32 exactly as the workers' ObsNormalizer receives them.
  std::vector<float> mean(obs_stats_.mean().begin(), obs_stats_.mean().end());
  std::vector<float> var(obs_stats_.var().begin(), obs_stats_.var().end());
  const auto o = static_cast<int64_t>(mean.size());
  obs_mean_ = to_device(mean.data(), {o}, torch::kFloat, device_);
  obs_var_ = to_device(var.data(), {o}, torch::kFloat, device_);
}

torch::Tensor PpoLearner::normalize(const torch::Tensor& obs) const {
  return config_.normalize_observations ? normalize_observations(obs, obs_mean_, obs_var_) : obs;
}

void PpoLearner::set_config(PpoConfig config) {
  validate_ppo_config(config);
  const bool normalizing_changed = config.normalize_observations != config_.normalize_observations;
  config_ = std::move(config);
  reward_scaler_.set_gamma(config_.gamma);
  auto& options = static_cast<torch::optim::AdamOptions&>(optimizer_->param_groups()[0].options());
  options.eps(config_.adam_eps);
  if (normalizing_changed) refresh_obs_tensors();
  refresh_backprop();
}

PpoLossOptions PpoLearner::loss_options(double clip_param) const {
  PpoLossOptions options;
  options.clip_param = clip_param;
  options.vf_clip_param = config_.vf_clip_param;
  options.vf_loss_coeff = config_.vf_loss_coeff;
  options.entropy_coeff = config_.entropy_coeff;
  options.kl_coeff = config_.kl_coeff;
  options.normalize_advantages = config_.normalize_advantages;
  options.reduce_advantage_moments = hooks_.allreduce_advantage_moments;
  return options;
}

void PpoLearner::check_batches(const std::vector<SampleBatch>& batches) const {
  check_ppo_batches(batches, model_config_, config_.recompute_values);
}

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

void PpoLearner::prepare(const std::vector<SampleBatch>& batches, bool update_statistics, Prepared& out,
                         const PpoShard* shard) {
  const int64_t o = model_config_.obs_size;
  int64_t n = 0, extra = 0;
  for (const SampleBatch& batch : batches) {
    n += batch.num_transitions();
    extra += batch.num_envs;
    for (int32_t index : batch.final_obs_index) extra += (batch.truncated[index] && !batch.terminated[index]) ? 1 : 0;
  }
  out.num_samples = n;

  const bool fold_statistics = update_statistics && config_.normalize_observations;
  if (fold_statistics && !config_.obs_stats_after_update) update_obs_stats(batches, shard);
  const bool prescaled = shard != nullptr && shard->rewards_prescaled;

  // Stage raw observations [N + E, O], actions, old log-probs and (scaled) rewards.
  obs_host_.resize(static_cast<size_t>((n + extra) * o));
  columns_host_.resize(static_cast<size_t>(kNumColumns * n));
  scaled_rewards_.resize(static_cast<size_t>(n));
  const bool discrete = model_->discrete();
  const int64_t a = discrete ? 1 : model_config_.action_space.size();
  if (discrete) {
    action_index_host_.resize(static_cast<size_t>(n));
  } else {
    action_value_host_.resize(static_cast<size_t>(n * a));
  }
  int64_t row = 0, extra_row = n;
  for (const SampleBatch& batch : batches) {
    const int64_t count = batch.num_transitions();
    std::copy(batch.obs.begin(), batch.obs.end(), obs_host_.begin() + row * o);
    for (size_t j = 0; j < batch.final_obs_index.size(); ++j) {
      const int32_t index = batch.final_obs_index[j];
      if (!batch.truncated[index] || batch.terminated[index]) continue;
      const auto first = batch.final_obs.begin() + static_cast<std::ptrdiff_t>(j * o);
      std::copy(first, first + o, obs_host_.begin() + (extra_row++) * o);
    }
    std::copy(batch.bootstrap_obs.begin(), batch.bootstrap_obs.end(), obs_host_.begin() + extra_row * o);
    extra_row += batch.num_envs;
    if (discrete) {
      std::copy(batch.action_indices.begin(), batch.action_indices.end(), action_index_host_.begin() + row);
    } else {
      std::copy(batch.action_values.begin(), batch.action_values.end(), action_value_host_.begin() + row * a);
    }
    std::copy(batch.log_probs.begin(), batch.log_probs.end(), columns_host_.begin() + kOldLogProbs * n + row);
    float* rewards = scaled_rewards_.data() + row;
    if (!config_.scale_rewards || prescaled) {
      std::copy(batch.rewards.begin(), batch.rewards.end(), rewards);
    } else if (update_statistics) {
      reward_scaler_.scale(batch, rewards);
    } else {
      reward_scaler_.scale_without_update(batch.rewards.data(), count, rewards);
    }
    row += count;
  }

  // Values of every observation (samples, final and bootstrap) in one pass of the current network.
  torch::Tensor obs_all = normalize(to_device(obs_host_.data(), {n + extra, o}, torch::kFloat, device_));
  if (fold_statistics && config_.obs_stats_after_update) update_obs_stats(batches, shard);  // as the workers saw them
  out.actions = discrete ? to_device(action_index_host_.data(), {n}, torch::kLong, device_)
                         : to_device(action_value_host_.data(), {n, a}, torch::kFloat, device_);
  torch::Tensor values_all;
  {
    torch::NoGradGuard no_grad;
    values_all = model_->value_forward(obs_all).to(torch::kCPU).contiguous();
    if (config_.vtrace || !config_.behaviour_ratio) stage_log_ratios(obs_all.narrow(0, 0, n), out.actions, n);
    if (config_.kl_coeff > 0.0) out.target_policy = target_model().policy_forward(obs_all.narrow(0, 0, n));
  }
  const float* values_data = values_all.data_ptr<float>();

  // GAE per fragment on the host.
  row = 0;
  extra_row = n;
  float* old_values = columns_host_.data() + kOldValues * n;
  for (const SampleBatch& batch : batches) {
    const int64_t count = batch.num_transitions();
    const float* values = config_.recompute_values ? values_data + row : batch.values.data();
    std::copy(values, values + count, old_values + row);
    final_values_.assign(static_cast<size_t>(count), 0.0f);
    for (int32_t index : batch.final_obs_index) {
      if (batch.truncated[index] && !batch.terminated[index]) final_values_[static_cast<size_t>(index)] = values_data[extra_row++];
    }
    float* advantages = columns_host_.data() + kAdvantages * n + row;
    float* returns = columns_host_.data() + kReturns * n + row;
    GaeInputs fragment;
    fragment.num_steps = batch.num_steps;
    fragment.num_envs = batch.num_envs;
    fragment.rewards = scaled_rewards_.data() + row;
    fragment.values = old_values + row;
    fragment.terminated = batch.terminated.data();
    fragment.truncated = batch.truncated.data();
    fragment.final_values = final_values_.data();
    fragment.bootstrap_values = values_data + extra_row;
    if (config_.vtrace) {
      compute_vtrace(VtraceInputs{fragment, log_ratios_.data() + row},
                     {config_.gamma, config_.rho_bar, config_.c_bar, config_.lambda}, returns, advantages);
    } else {
      compute_gae(fragment, config_.gamma, config_.lambda, advantages, returns);
    }
    extra_row += batch.num_envs;
    row += count;
  }
  if (shard != nullptr) {
    out.explained_variance = sharded_explained_variance(old_values, columns_host_.data() + kReturns * n, n, hooks_.allreduce_host);
  } else {
    out.explained_variance = explained_variance(old_values, columns_host_.data() + kReturns * n, n);
  }
  out.obs = obs_all.narrow(0, 0, n);
  out.columns = to_device(columns_host_.data(), {kNumColumns, n}, torch::kFloat, device_);
}

void PpoLearner::stage_log_ratios(const torch::Tensor& obs, const torch::Tensor& actions, int64_t n) {
  const torch::Tensor log_probs =
      model_->distribution(model_->policy_forward(obs)).log_prob(actions).to(torch::kCPU, torch::kFloat).contiguous();
  const float* current = log_probs.data_ptr<float>();
  float* behaviour = columns_host_.data() + kOldLogProbs * n;
  log_ratios_.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) log_ratios_[static_cast<size_t>(i)] = current[i] - behaviour[i];
  // Without the behaviour ratio the surrogate's "old" policy is the learner's own.
  if (!config_.behaviour_ratio) std::copy(current, current + n, behaviour);
}

ActorCritic& PpoLearner::target_model() {
  if (!target_model_) refresh_target();
  return *target_model_;
}

void PpoLearner::refresh_target() {
  if (!target_model_) {
    target_model_ = make_seeded_model(model_config_, seed_);
    target_model_->to(device_);
  }
  torch::NoGradGuard no_grad;
  const std::vector<torch::Tensor> source = model_->parameters();
  std::vector<torch::Tensor> target = target_model_->parameters();
  for (size_t i = 0; i < source.size(); ++i) target[i].copy_(source[i]);
}

PpoUpdateMetrics PpoLearner::update(const std::vector<SampleBatch>& batches, int64_t timesteps_done,
                                    const PpoShard* shard) {
  check_batches(batches);
  if (shard != nullptr) {
    if (!hooks_.allreduce_host || !hooks_.allreduce_gradients) {
      throw std::logic_error("a sharded PPO update needs the data-parallel hooks installed");
    }
    if (shard->fragment_offsets.size() != batches.size() ||
        (!shard->fragment_strides.empty() && shard->fragment_strides.size() != batches.size())) {
      throw std::invalid_argument("PpoShard has " + std::to_string(shard->fragment_offsets.size()) + " fragment offsets for " +
                                  std::to_string(batches.size()) + " fragments");
    }
  }
  const Snapshot before = take_snapshot();
  if (config_.kl_coeff > 0.0 && num_updates_ % config_.target_update_frequency == 0) refresh_target();
  Prepared data;
  prepare(batches, /*update_statistics=*/true, data, shard);
  const int64_t n = data.num_samples;
  const int64_t global_n = shard != nullptr ? shard->global_samples : n;

  // Local row of every global sample (-1: held by another rank).
  std::vector<int64_t> local_row;
  if (shard != nullptr) {
    local_row.assign(static_cast<size_t>(global_n), -1);
    int64_t row = 0;
    for (size_t f = 0; f < batches.size(); ++f) {
      const int64_t offset = shard->fragment_offsets[f];
      const int64_t k = batches[f].num_envs;
      const int64_t stride = shard->fragment_strides.empty() ? k : shard->fragment_strides.at(f);
      for (int64_t t = 0; t < batches[f].num_steps; ++t) {
        for (int64_t e = 0; e < k; ++e) {
          const int64_t global = offset + t * stride + e;
          if (stride < k || global < 0 || global >= global_n) throw std::invalid_argument("PpoShard fragment lies outside the global batch");
          if (local_row[static_cast<size_t>(global)] != -1) throw std::invalid_argument("PpoShard fragments overlap");
          local_row[static_cast<size_t>(global)] = row++;
        }
      }
    }
  }

  PpoUpdateMetrics metrics;
  metrics.lr = config_.lr_at(timesteps_done);
  metrics.clip_param = config_.clip_param_at(timesteps_done);
  metrics.explained_variance = data.explained_variance;
  metrics.num_samples = global_n;
  optimizer_->param_groups()[0].options().set_lr(metrics.lr);
  const PpoLossOptions options = loss_options(metrics.clip_param);

  // The gradients must still be views of flat_grads_ (a zero_grad(set_to_none) would undo that).
  {
    int64_t offset = 0;
    for (auto& p : model_->parameters()) {
      const int64_t size = p.numel();
      if (!p.grad().defined() || p.grad().data_ptr() != flat_grads_.narrow(0, offset, size).data_ptr()) {
        p.mutable_grad() = flat_grads_.narrow(0, offset, size).view(p.sizes());
      }
      offset += size;
    }
    flat_params_.mutable_grad() = flat_grads_;
  }

  const auto tensor_options = torch::TensorOptions().dtype(torch::kFloat).device(device_);
  torch::Tensor stats_sum = torch::zeros({PpoLossStat::kCount}, tensor_options);
  torch::Tensor grad_norm_sum = torch::zeros({}, tensor_options);
  std::vector<torch::Tensor> grads{flat_grads_};
  Rng rng(ppo_permutation_seed(seed_, num_updates_));
  permutation_.resize(static_cast<size_t>(global_n));
  const int64_t minibatch = config_.minibatch_size;
  const int64_t num_minibatches = (global_n + minibatch - 1) / minibatch;
  std::vector<int64_t> local_order;    // local rows in global permutation order
  std::vector<int64_t> local_counts;   // local rows in each global minibatch
  int64_t steps = 0;

  for (int epoch = 0; epoch < config_.num_epochs; ++epoch) {
    std::iota(permutation_.begin(), permutation_.end(), int64_t{0});
    for (int64_t i = global_n - 1; i > 0; --i) std::swap(permutation_[static_cast<size_t>(i)], permutation_[static_cast<size_t>(rng.uniform_int(i + 1))]);
    const std::vector<int64_t>* order = &permutation_;
    if (shard != nullptr) {
      local_order.clear();
      local_counts.assign(static_cast<size_t>(num_minibatches), 0);
      for (int64_t i = 0; i < global_n; ++i) {
        const int64_t r = local_row[static_cast<size_t>(permutation_[static_cast<size_t>(i)])];
        if (r < 0) continue;
        local_order.push_back(r);
        ++local_counts[static_cast<size_t>(i / minibatch)];
      }
      order = &local_order;
    }
    const torch::Tensor perm = to_device(order->data(), {static_cast<int64_t>(order->size())}, torch::kLong, device_);
    const torch::Tensor obs = data.obs.index_select(0, perm);
    const torch::Tensor columns = data.columns.index_select(1, perm);
    const torch::Tensor actions = data.actions.index_select(0, perm);
    const torch::Tensor target_policy =
        data.target_policy.defined() ? data.target_policy.index_select(0, perm) : torch::Tensor();
    // Sharded: the advantage moments of every minibatch of the epoch in one collective, not one
    // per minibatch (the advantages are fixed for the whole update).
    torch::Tensor epoch_moments;
    if (shard != nullptr && options.normalize_advantages && options.reduce_advantage_moments) {
      epoch_moments = advantage_moments_per_minibatch(columns[1], local_counts, device_);
      options.reduce_advantage_moments(epoch_moments);
    }

    int64_t local_start = 0;
    for (int64_t mb = 0; mb < num_minibatches; ++mb) {
      const int64_t global_size = std::min(minibatch, global_n - mb * minibatch);
      const int64_t size = shard != nullptr ? local_counts[static_cast<size_t>(mb)] : global_size;
      torch::Tensor loss_stats;
      if (size > 0) {
        PpoLossOptions minibatch_options = options;
        if (epoch_moments.defined()) {
          const torch::Tensor global_moments = epoch_moments[mb];
          minibatch_options.reduce_advantage_moments = [global_moments](torch::Tensor& moments) { moments.copy_(global_moments); };
        }
        loss_stats = minibatch_gradients(
            obs.narrow(0, local_start, size), actions.narrow(0, local_start, size), columns.narrow(1, local_start, size),
            target_policy.defined() ? target_policy.narrow(0, local_start, size) : torch::Tensor(), minibatch_options);
      } else {
        // None of this minibatch is ours: a zero gradient, but the gradient all-reduce all the same.
        flat_grads_.zero_();
        loss_stats = torch::zeros({PpoLossStat::kCount}, tensor_options);
      }
      local_start += size;
      torch::NoGradGuard no_grad;
      if (size != global_size) {
        const double weight = static_cast<double>(size) / static_cast<double>(global_size);
        flat_grads_.mul_(weight);
        loss_stats = loss_stats * weight;
      }
      if (hooks_.allreduce_gradients) {
        hooks_.allreduce_gradients(grads);
        if (!grads.at(0).is_same(flat_grads_)) flat_grads_.copy_(grads.at(0));
      }
      const torch::Tensor norm = flat_grads_.norm();
      // The norm is global (the same on every rank); the loss statistics are this rank's, so a
      // sharded update checks the norm alone and every rank decides alike.
      if (!all_finite(shard != nullptr ? norm : torch::cat({norm.view({1}), loss_stats.to(norm.dtype())}))) {
        const torch::Tensor stats = loss_stats.to(torch::kCPU, torch::kDouble);
        const std::string detail = "PPO update " + std::to_string(num_updates_ + 1) + ", epoch " +
                                   std::to_string(epoch + 1) + ", minibatch " + std::to_string(mb + 1) +
                                   ": gradient norm " + std::to_string(norm.item<double>()) + ", policy loss " +
                                   std::to_string(stats[PpoLossStat::kPolicyLoss].item<double>()) + ", value loss " +
                                   std::to_string(stats[PpoLossStat::kVfLoss].item<double>());
        restore_snapshot(before);
        throw NonFiniteLearnerError(detail + " (not finite); the update was undone, no weight changed (try a smaller lr "
                                    "or grad_clip, or normalize_observations)");
      }
      grad_norm_sum.add_(norm);
      if (config_.grad_clip > 0.0) {
        flat_grads_.mul_((config_.grad_clip / (norm + kClipGradEpsilon)).clamp_max_(1.0));
      }
      optimizer_->step();
      stats_sum.add_(loss_stats);
      ++steps;
    }
  }

  const torch::Tensor sums = torch::cat({stats_sum, grad_norm_sum.view({1})}).to(torch::kCPU, torch::kDouble).contiguous();
  std::vector<double> s(sums.data_ptr<double>(), sums.data_ptr<double>() + sums.numel());
  if (shard != nullptr) {
    // Loss statistics were weighted by each rank's share: their sum is the global means'. The
    // gradient norm is already global (identical on every rank).
    std::vector<double> loss_sums(s.begin(), s.begin() + PpoLossStat::kCount);
    hooks_.allreduce_host(loss_sums);
    std::copy(loss_sums.begin(), loss_sums.end(), s.begin());
  }
  const double count = static_cast<double>(steps);
  metrics.policy_loss = s[PpoLossStat::kPolicyLoss] / count;
  metrics.vf_loss = s[PpoLossStat::kVfLoss] / count;
  metrics.entropy = s[PpoLossStat::kEntropy] / count;
  metrics.approx_kl = s[PpoLossStat::kApproxKl] / count;
  metrics.clip_fraction = s[PpoLossStat::kClipFraction] / count;
  metrics.kl_to_target = s[PpoLossStat::kKlToTarget] / count;
  metrics.grad_norm = s[PpoLossStat::kCount] / count;
  metrics.num_minibatch_steps = steps;
  ++num_updates_;
  return metrics;
}

torch::Tensor PpoLearner::minibatch_gradients(const torch::Tensor& obs, const torch::Tensor& actions,
                                              const torch::Tensor& columns, const torch::Tensor& target_policy,
                                              const PpoLossOptions& options) {
  if (backprop_) {
    return backprop_->ppo_gradients(obs, actions, columns[kOldLogProbs], columns[kAdvantages], columns[kReturns],
                                    columns[kOldValues], options);
  }
  const PolicyOutput out = model_->forward(obs);
  const ActionDistribution dist = model_->distribution(out.policy);
  PpoLossInputs in;
  in.log_probs = dist.log_prob(actions);
  in.values = out.value;
  in.old_log_probs = columns[kOldLogProbs];
  in.advantages = columns[kAdvantages];
  in.returns = columns[kReturns];
  in.old_values = columns[kOldValues];
  if (target_policy.defined()) {
    const ActionDistribution target = model_->discrete()
                                          ? ActionDistribution::categorical(target_policy)
                                          : ActionDistribution::diagonal_gaussian(target_policy, target_model_->log_std().detach());
    in.kl_to_target = target.kl_divergence_to(dist);
  }
  if (options.entropy_coeff != 0.0) {
    in.entropy = dist.entropy();
  } else {
    torch::NoGradGuard no_grad;  // only a statistic: keep it out of the graph
    in.entropy = dist.entropy();
  }
  const PpoLoss loss = ppo_loss(in, options);
  flat_grads_.zero_();
  loss.total.backward();
  return loss.stats;
}

PpoUpdateMetrics PpoLearner::evaluate(const std::vector<SampleBatch>& batches, int64_t timesteps_done) {
  check_batches(batches);
  Prepared data;
  prepare(batches, /*update_statistics=*/false, data);
  PpoUpdateMetrics metrics;
  metrics.lr = config_.lr_at(timesteps_done);
  metrics.clip_param = config_.clip_param_at(timesteps_done);
  metrics.explained_variance = data.explained_variance;
  metrics.num_samples = data.num_samples;
  torch::NoGradGuard no_grad;
  const PolicyOutput out = model_->forward(data.obs);
  const ActionDistribution dist = model_->distribution(out.policy);
  PpoLossInputs in;
  in.log_probs = dist.log_prob(data.actions);
  in.entropy = dist.entropy();
  in.values = out.value;
  in.old_log_probs = data.columns[kOldLogProbs];
  in.advantages = data.columns[kAdvantages];
  in.returns = data.columns[kReturns];
  in.old_values = data.columns[kOldValues];
  const PpoLoss loss = ppo_loss(in, loss_options(metrics.clip_param));
  const torch::Tensor stats = loss.stats.to(torch::kCPU, torch::kDouble);
  metrics.policy_loss = stats[PpoLossStat::kPolicyLoss].item<double>();
  metrics.vf_loss = stats[PpoLossStat::kVfLoss].item<double>();
  metrics.entropy = stats[PpoLossStat::kEntropy].item<double>();
  metrics.approx_kl = stats[PpoLossStat::kApproxKl].item<double>();
  metrics.clip_fraction = stats[PpoLossStat::kClipFraction].item<double>();
  return metrics;
}

PpoTargets PpoLearner::compute_targets(const std::vector<SampleBatch>& batches) {
  check_batches(batches);
  Prepared data;
  prepare(batches, /*update_statistics=*/false, data);
  const auto n = static_cast<std::ptrdiff_t>(data.num_samples);
  const auto column = [&](Column c) {
    const auto first = columns_host_.begin() + c * n;
    return std::vector<float>(first, first + n);
  };
  return {column(kOldValues), column(kAdvantages), column(kReturns)};
}

std::shared_ptr<Weights> PpoLearner::weights(uint64_t version) const {
  auto weights = std::make_shared<Weights>();
  weights->policy_version = version;
  const torch::Tensor params = flat_params_.detach().to(torch::kCPU).contiguous();
  weights->params.assign(params.data_ptr<float>(), params.data_ptr<float>() + params.numel());
  if (config_.normalize_observations) {
    weights->obs_mean = obs_stats_.mean();
    weights->obs_var = obs_stats_.var();
    weights->obs_count = obs_stats_.count();
  }
  return weights;
}

namespace {

// Puts Adam's state for `param` into an optimizer's state map, keyed as LibTorch keys it: by the
// parameter's TensorImpl address as a string in 1.13, as a pointer in 2.x.
template <typename StateMap>
void put_adam_state(StateMap& state, const torch::Tensor& param, std::unique_ptr<torch::optim::AdamParamState> adam) {
  using Key = typename StateMap::key_type;
  if constexpr (std::is_same_v<Key, std::string>) {
    state[c10::guts::to_string(param.unsafeGetTensorImpl())] = std::move(adam);
  } else {
    state[static_cast<Key>(param.unsafeGetTensorImpl())] = std::move(adam);
  }
}

std::vector<float> host_floats(const torch::Tensor& tensor) {
  const torch::Tensor host = tensor.detach().to(torch::kCPU, torch::kFloat).contiguous();
  return std::vector<float>(host.data_ptr<float>(), host.data_ptr<float>() + host.numel());
}

}  // namespace

void PpoLearner::save(std::ostream& out) const {
  PpoLearnerState state;
  state.params = host_floats(flat_params_);
  for (const auto& entry : optimizer_->state()) {
    const auto& adam = static_cast<const torch::optim::AdamParamState&>(*entry.second);
    state.adam_step = adam.step();
    state.exp_avg = host_floats(adam.exp_avg());
    state.exp_avg_sq = host_floats(adam.exp_avg_sq());
  }
  write_ppo_learner_state(out, state);
}

void PpoLearner::load(std::istream& in) {
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!is_ppo_learner_state(bytes)) {
    std::istringstream archive(bytes);
    load_torch_archive(archive);
    return;
  }
  std::istringstream file(bytes);
  const PpoLearnerState state = read_ppo_learner_state(file, flat_params_.numel());
  const auto p = static_cast<int64_t>(state.params.size());
  const auto to_device = [&](const std::vector<float>& values) {
    return torch::from_blob(const_cast<float*>(values.data()), {p}, torch::kFloat).to(device_, /*non_blocking=*/false, /*copy=*/true);
  };
  torch::NoGradGuard no_grad;
  flat_params_.copy_(to_device(state.params));
  optimizer_->state().clear();
  if (state.adam_step > 0) {
    auto adam = std::make_unique<torch::optim::AdamParamState>();
    adam->step(state.adam_step);
    adam->exp_avg(to_device(state.exp_avg));
    adam->exp_avg_sq(to_device(state.exp_avg_sq));
    put_adam_state(optimizer_->state(), flat_params_, std::move(adam));
  }
}

void PpoLearner::load_torch_archive(std::istream& in) {
  torch::serialize::InputArchive archive;
  archive.load_from(in, device_);
  c10::IValue format, count;
  archive.read("format_version", format);
  archive.read("num_parameters", count);
  if (!format.isInt() || format.toInt() != kArchiveFormatVersion) {
    throw std::invalid_argument("PPO learner archive has an unknown format version");
  }
  if (!count.isInt() || count.toInt() != flat_params_.numel()) {
    throw std::invalid_argument("PPO learner archive holds " + (count.isInt() ? std::to_string(count.toInt()) : "?") +
                                " parameters, the model has " + std::to_string(flat_params_.numel()));
  }
  torch::Tensor params;
  archive.read("params", params);
  torch::serialize::InputArchive optimizer_archive;
  archive.read("optimizer", optimizer_archive);
  optimizer_->state().clear();  // state the archive lacks must not survive from before
  optimizer_->load(optimizer_archive);
  // LibTorch 2.x also restores the saved options; the config decides, as with 1.13.
  static_cast<torch::optim::AdamOptions&>(optimizer_->param_groups()[0].options()).eps(config_.adam_eps);
  torch::NoGradGuard no_grad;
  flat_params_.copy_(params.view({-1}));
}

nlohmann::json PpoLearner::state_json() const {
  return ppo_statistics_json({obs_stats_, reward_scaler_, num_updates_, seed_});
}

void PpoLearner::load_state_json(const nlohmann::json& state) {
  PpoStatistics statistics = parse_ppo_statistics(state, obs_stats_.size(), config_.gamma, seed_);
  obs_stats_ = std::move(statistics.obs_stats);
  reward_scaler_ = std::move(statistics.reward_scaler);
  num_updates_ = statistics.num_updates;
  seed_ = statistics.seed;
  refresh_obs_tensors();
}

}  // namespace rlx
