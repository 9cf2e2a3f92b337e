// PpoLearner: construction, configuration, the target network and the weights it ships. The
// update is in ppo_train_batch.cc and ppo_update.cc, the state files in ppo_learner_state.cc.
#include "learner/ppo_learner.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <algorithm>
#include <mutex>
#include <utility>

#include "core/stop_signal.h"
#include "learner/actor_critic_backprop.h"
#include "learner/tensor_copies.h"
#include "native/ppo_checks.h"
#include "native/ppo_update_steps.h"

namespace rlx {

namespace {

// The schema's checks of the keys, and the members no key sets.
PpoConfig validated(PpoConfig config) {
  validate_ppo_config(config);
  return config;
}

// An ActorCritic initialised from seed via the default CPU generator, whose state is restored after.
std::shared_ptr<ActorCritic> make_seeded_model(const ModelSpec& config, uint64_t seed) {
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

}  // namespace

PpoLearner::PpoLearner(const ModelSpec& model_config, PpoConfig config, uint64_t seed, torch::Device device)
    : model_config_(model_config),
      config_(validated(std::move(config))),
      seed_(seed),
      device_(device),
      obs_stats_(std::max<int64_t>(model_config.obs_size, 1)),
      reward_scaler_(config_.gamma),
      precision_(parse_precision(config_.precision)),
      scaler_(precision_ == Precision::kFp16),
      stop_check_(stop_overdue) {
  check_precision(precision_, device_);
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
  // The KL term's gradient reaches the whole distribution: autograd computes it. So it does with
  // a precision other than fp32: autocast reaches autograd's ops, not the float32 hand-written pass.
  if (config_.analytic_gradients && config_.kl_coeff == 0.0 && precision_ == Precision::kFp32 &&
      ActorCriticBackprop::supports(*model_)) {
    if (!backprop_) backprop_ = std::make_unique<ActorCriticBackprop>(*model_, flat_grads_);
  } else {
    backprop_.reset();
  }
}

PpoLearner::~PpoLearner() = default;

void PpoLearner::flatten_parameters() {
  flat_params_ = rlx::flatten_parameters(*model_, device_);
  flat_grads_ = flatten_gradients(*model_, flat_params_);
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
  obs_mean_ = device_copy(mean.data(), {o}, torch::kFloat, device_);
  obs_var_ = device_copy(var.data(), {o}, torch::kFloat, device_);
}

torch::Tensor PpoLearner::normalize(const torch::Tensor& obs) const {
  return config_.normalize_observations ? normalize_observations(obs, obs_mean_, obs_var_) : obs;
}

void PpoLearner::set_config(PpoConfig config) {
  validate_ppo_config(config);
  const Precision precision = parse_precision(config.precision);
  check_precision(precision, device_);
  const bool normalizing_changed = config.normalize_observations != config_.normalize_observations;
  config_ = std::move(config);
  if (precision != precision_) {
    precision_ = precision;
    if (scaler_.enabled() != (precision_ == Precision::kFp16)) scaler_ = LossScaler(precision_ == Precision::kFp16);
  }
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

std::shared_ptr<Weights> PpoLearner::weights(uint64_t version) const {
  return ppo_weights(version, host_floats(flat_params_), config_.normalize_observations ? &obs_stats_ : nullptr);
}

}  // namespace rlx
