#include "native/native_ppo_learner.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <istream>
#include <limits>
#include <ostream>
#include <stdexcept>
#include <utility>

#include "core/config_schema.h"
#include "core/non_finite_error.h"
#include "core/stop_signal.h"
#include "models/network_kernel.h"
#include "native/chain_backprop.h"
#include "native/dense_backprop.h"
#include "native/gradient_clip.h"
#include "native/ppo_checks.h"
#include "native/ppo_fragments.h"
#include "native/ppo_objective.h"
#include "native/ppo_state_file.h"
#include "native/ppo_update_steps.h"

namespace rlx {

namespace {

constexpr float kAdvantageEpsilon = 1e-8f;    // as learner/ppo_loss.cc

// PpoLearner's checks: the schema's, and the members no key sets.
PpoConfig validated(PpoConfig config) {
  validate_ppo_config(config);
  return config;
}

const ModelSpec& supported(const ModelSpec& model_config, const PpoConfig& config) {
  if (const auto why = NativePpoLearner::unsupported(model_config, config)) throw std::invalid_argument(*why);
  return model_config;
}

}  // namespace

// ---- NativePpoLearner ----

struct NativePpoLearner::Snapshot {
  std::vector<float> params, exp_avg, exp_avg_sq;
  int64_t adam_step = 0;
  RunningMeanStd obs_stats;
  RewardScaler reward_scaler;
  int64_t num_updates = 0;
};

std::optional<std::string> NativePpoLearner::unsupported(const ModelSpec& model_config, const PpoConfig& config) {
  if (config.vtrace || config.kl_coeff > 0.0 || !config.behaviour_ratio) {
    return std::string("NativePpoLearner trains PPO's loss only, not APPO's V-trace targets or KL term");
  }
  if (model_config.shared_trunk) {
    return std::string("NativePpoLearner trains separate policy and value networks only, and the model has a shared "
                       "trunk (shared_trunk, the key vf_share_layers: true)");
  }
  const Space& actions = model_config.action_space;
  if (!actions.is_discrete() && !actions.is_multi_discrete() && !actions.is_multi_binary() && !actions.is_float_box()) {
    return std::string("NativePpoLearner handles Discrete, MultiDiscrete, MultiBinary and float Box action spaces only, got ") +
           actions.to_string();
  }
  // Every PpoConfig key is honoured (analytic_gradients = false asks for autograd, whose
  // gradient is the same as the hand-written one here).
  return std::nullopt;
}

NativePpoLearner::NativePpoLearner(const ModelSpec& model_config, PpoConfig config, uint64_t seed)
    : model_config_(supported(model_config, config)),
      config_(validated(std::move(config))),
      seed_(seed),
      layout_(actor_critic_layout(model_config_)),
      params_(initial_parameters(layout_, seed)),
      grads_(layout_.num_parameters, 0.0f),
      exp_avg_(layout_.num_parameters, 0.0f),
      exp_avg_sq_(layout_.num_parameters, 0.0f),
      obs_stats_(std::max<int64_t>(model_config_.obs_size, 1)),
      reward_scaler_(config_.gamma),
      policy_(std::make_unique<ChainBackprop>(layout_.policy_chain)),
      value_(std::make_unique<ChainBackprop>(layout_.value_chain)),
      categories_(model_config_.action_categories()),
      stop_check_(stop_overdue) {}

NativePpoLearner::~NativePpoLearner() = default;
NativePpoLearner::NativePpoLearner(NativePpoLearner&&) noexcept = default;
NativePpoLearner& NativePpoLearner::operator=(NativePpoLearner&&) noexcept = default;

void NativePpoLearner::set_config(PpoConfig config) {
  validate_ppo_config(config);
  config_ = std::move(config);
  reward_scaler_.set_gamma(config_.gamma);
}

void NativePpoLearner::set_parameters(const std::vector<float>& flat) {
  if (flat.size() != params_.size()) {
    throw std::invalid_argument("NativePpoLearner::set_parameters got " + std::to_string(flat.size()) +
                                " values, the model has " + std::to_string(params_.size()));
  }
  params_ = flat;
}

void NativePpoLearner::check_batches(const std::vector<SampleBatch>& batches) const {
  check_ppo_batches(batches, model_config_, config_.recompute_values);
}

void NativePpoLearner::normalize_rows(float* obs, int64_t rows) const {
  // As the workers and PpoLearner: float32 statistics, clip((x - mean) / sqrt(var + eps)).
  const auto o = static_cast<int64_t>(obs_mean_.size());
  std::vector<float> scale(static_cast<size_t>(o));
  for (int64_t j = 0; j < o; ++j) scale[j] = std::sqrt(obs_var_[j] + static_cast<float>(kObsNormEpsilon));
  const auto clip = static_cast<float>(kObsNormClip);
  for (int64_t r = 0; r < rows; ++r) {
    float* row = obs + r * o;
    for (int64_t j = 0; j < o; ++j) row[j] = std::min(std::max((row[j] - obs_mean_[j]) / scale[j], -clip), clip);
  }
}

void NativePpoLearner::update_obs_stats(const std::vector<SampleBatch>& batches) {
  for (const SampleBatch& batch : batches) obs_stats_.update(batch.obs.data(), batch.num_transitions());
  use_obs_stats();
}

void NativePpoLearner::use_obs_stats() {
  obs_mean_.assign(obs_stats_.mean().begin(), obs_stats_.mean().end());  // rounded to float32 as the workers'
  obs_var_.assign(obs_stats_.var().begin(), obs_stats_.var().end());
}

double NativePpoLearner::prepare(const std::vector<SampleBatch>& batches) {
  const PpoRowCounts rows = count_ppo_rows(batches);
  const int64_t n = rows.samples, extra = rows.extra;
  if (config_.normalize_observations && !config_.obs_stats_after_update) update_obs_stats(batches);

  // Observations [N + E, O]: samples, then per fragment its final and bootstrap observations.
  const ObservationLayout observation_layout = model_config_.observation_layout();
  obs_.resize(static_cast<size_t>((n + extra) * model_config_.obs_size));
  stage_ppo_observations(batches, rows, observation_layout, obs_.data());
  if (observation_layout.mask_size > 0) {
    masks_.resize(static_cast<size_t>(n * observation_layout.mask_size));
    stage_ppo_masks(batches, observation_layout, masks_.data());
  }
  old_log_probs_.resize(static_cast<size_t>(n));
  if (layout_.discrete) {
    action_indices_.resize(static_cast<size_t>(n) * categories_.size());
  } else {
    action_values_.resize(static_cast<size_t>(n * layout_.policy_outputs));
  }
  stage_ppo_actions(batches, layout_.discrete, old_log_probs_.data(), action_indices_.data(), action_values_.data());
  scaled_rewards_.resize(static_cast<size_t>(n));
  int64_t row = 0;
  for (const SampleBatch& batch : batches) {
    if (config_.scale_rewards) {
      reward_scaler_.scale(batch, scaled_rewards_.data() + row);
    } else {
      std::copy(batch.rewards.begin(), batch.rewards.end(), scaled_rewards_.begin() + row);
    }
    row += batch.num_transitions();
  }
  if (config_.normalize_observations) {
    // The statistics the workers acted with, unless the batch joined them above.
    if (config_.obs_stats_after_update) use_obs_stats();
    normalize_rows(obs_.data(), n + extra);
    if (config_.obs_stats_after_update) update_obs_stats(batches);
  }

  // Values of every observation (samples, final and bootstrap) with the current network.
  const float* values = value_->forward(params_.data(), obs_.data(), n + extra);
  all_values_.assign(values, values + n + extra);

  // GAE per fragment.
  old_values_.resize(static_cast<size_t>(n));
  advantages_.resize(static_cast<size_t>(n));
  returns_.resize(static_cast<size_t>(n));
  compute_ppo_targets(batches, config_, scaled_rewards_.data(), all_values_.data(), /*log_ratios=*/nullptr,
                      old_values_.data(), advantages_.data(), returns_.data());
  return explained_variance(old_values_.data(), returns_.data(), n);
}

void NativePpoLearner::minibatch_gradients(const int64_t* order, int64_t rows, double clip_param, double stats[5]) {
  const int64_t o = layout_.obs_size, p = layout_.policy_outputs;
  const auto b = static_cast<double>(rows);
  mb_obs_.resize(static_cast<size_t>(rows * o));
  for (int64_t r = 0; r < rows; ++r) std::copy_n(obs_.begin() + order[r] * o, o, mb_obs_.begin() + r * o);
  const float* policy_out = policy_->forward(params_.data(), mb_obs_.data(), rows);
  const float* values = value_->forward(params_.data(), mb_obs_.data(), rows);

  // The surrogate's advantages: normalised per minibatch (unbiased std) when asked.
  mb_normalized_advantages_.resize(static_cast<size_t>(rows));
  float* advantage = mb_normalized_advantages_.data();
  for (int64_t r = 0; r < rows; ++r) advantage[r] = advantages_[static_cast<size_t>(order[r])];
  if (config_.normalize_advantages && rows > 1) {
    double mean = 0.0, var = 0.0;
    for (int64_t r = 0; r < rows; ++r) mean += advantage[r];
    mean /= b;
    for (int64_t r = 0; r < rows; ++r) var += (advantage[r] - mean) * (advantage[r] - mean);
    const auto mean_f = static_cast<float>(mean);
    const float denominator = static_cast<float>(std::sqrt(var / (b - 1.0))) + kAdvantageEpsilon;
    for (int64_t r = 0; r < rows; ++r) advantage[r] = (advantage[r] - mean_f) / denominator;
  }

  PpoObjectiveBatch batch;
  batch.rows = rows;
  batch.outputs = p;
  batch.discrete = layout_.discrete;
  batch.categories = categories_.data();
  batch.elements = static_cast<int64_t>(categories_.size());
  batch.masks = model_config_.action_mask ? masks_.data() : nullptr;
  batch.policy_out = policy_out;
  batch.log_std = layout_.discrete ? nullptr : params_.data() + layout_.log_std->offset;
  batch.values = values;
  batch.advantages = advantage;
  batch.order = order;
  batch.action_indices = action_indices_.data();
  batch.action_values = action_values_.data();
  batch.old_log_probs = old_log_probs_.data();
  batch.returns = returns_.data();
  batch.old_values = old_values_.data();
  mb_policy_grad_.resize(static_cast<size_t>(rows * p));
  mb_value_grad_.resize(static_cast<size_t>(rows));
  PpoObjectiveGradients gradients;
  gradients.policy_out = mb_policy_grad_.data();
  gradients.values = mb_value_grad_.data();
  gradients.log_std = layout_.discrete ? nullptr : grads_.data() + layout_.log_std->offset;
  const PpoObjectiveStats objective =
      ppo_objective(batch, {clip_param, config_.vf_clip_param, config_.vf_loss_coeff, config_.entropy_coeff}, mb_log_p_,
                    gradients);
  policy_->backward(params_.data(), mb_policy_grad_.data(), rows, grads_.data());
  value_->backward(params_.data(), mb_value_grad_.data(), rows, grads_.data());
  stats[0] = objective.policy_loss;
  stats[1] = objective.vf_loss;
  stats[2] = objective.entropy;
  stats[3] = objective.approx_kl;
  stats[4] = objective.clip_fraction;
}

PpoUpdateMetrics NativePpoLearner::update(const std::vector<SampleBatch>& batches, int64_t timesteps_done) {
  check_batches(batches);
  const Snapshot before{params_, exp_avg_, exp_avg_sq_, adam_step_, obs_stats_, reward_scaler_, num_updates_};
  PpoUpdateMetrics metrics;
  metrics.explained_variance = prepare(batches);
  const auto n = static_cast<int64_t>(old_log_probs_.size());
  metrics.lr = config_.lr_at(timesteps_done);
  metrics.clip_param = config_.clip_param_at(timesteps_done);
  metrics.num_samples = n;

  minibatches_.start(seed_, num_updates_, n, config_.minibatch_size);
  const auto num_params = static_cast<int64_t>(params_.size());
  double sums[kPpoLossSums] = {}, grad_norm_sum = 0.0;  // no KL-to-target term here: its sum stays 0
  int64_t steps = 0;
  for (int64_t epoch = 0; epoch < config_.num_epochs; ++epoch) {
    const std::vector<int64_t>& permutation = minibatches_.next_epoch();
    for (int64_t mb = 0; mb < minibatches_.num_minibatches(); ++mb) {
      if (stop_check_ && stop_check_()) {
        restore(before);
        throw StopRequested(ppo_abandoned_message(epoch, mb, config_.num_epochs, minibatches_.num_minibatches()));
      }
      double stats[5];
      minibatch_gradients(permutation.data() + minibatches_.minibatch_start(mb), minibatches_.minibatch_size(mb),
                          metrics.clip_param, stats);
      const auto norm = static_cast<float>(std::sqrt(sum_of_squares(grads_.data(), num_params)));
      const bool finite = std::isfinite(norm) && std::all_of(stats, stats + 5, [](double s) { return std::isfinite(s); });
      if (!finite) {
        const NonFiniteLearnerError error = ppo_non_finite_error(num_updates_, epoch, mb, norm, stats[0], stats[1]);
        restore(before);
        throw error;
      }
      grad_norm_sum += norm;
      if (config_.grad_clip > 0.0) {
        scale_in_place(grads_.data(), num_params, clip_scale(norm, static_cast<float>(config_.grad_clip)));
      }
      ++adam_step_;
      adam_step(params_.data(), grads_.data(), exp_avg_.data(), exp_avg_sq_.data(), num_params, adam_step_, metrics.lr,
                config_.adam_eps);
      for (int s = 0; s < 5; ++s) sums[s] += stats[s];
      ++steps;
    }
  }
  set_ppo_step_means(sums, grad_norm_sum, steps, metrics);
  ++num_updates_;
  return metrics;
}

void NativePpoLearner::restore(const Snapshot& before) {
  params_ = before.params;
  exp_avg_ = before.exp_avg;
  exp_avg_sq_ = before.exp_avg_sq;
  adam_step_ = before.adam_step;
  obs_stats_ = before.obs_stats;
  reward_scaler_ = before.reward_scaler;
  num_updates_ = before.num_updates;
  use_obs_stats();
}

std::shared_ptr<Weights> NativePpoLearner::weights(uint64_t version) const {
  return ppo_weights(version, params_, config_.normalize_observations ? &obs_stats_ : nullptr);
}

void NativePpoLearner::save(std::ostream& out) const {
  write_ppo_learner_state(out, {params_, adam_step_, exp_avg_, exp_avg_sq_});
}

void NativePpoLearner::load(std::istream& in) {
  PpoLearnerState state = read_ppo_learner_state(in, static_cast<int64_t>(params_.size()));
  params_ = std::move(state.params);
  exp_avg_ = std::move(state.exp_avg);
  exp_avg_sq_ = std::move(state.exp_avg_sq);
  adam_step_ = state.adam_step;
}

nlohmann::json NativePpoLearner::state_json() const {
  return ppo_statistics_json({obs_stats_, reward_scaler_, num_updates_, seed_});
}

void NativePpoLearner::load_state_json(const nlohmann::json& state) {
  PpoStatistics statistics = parse_ppo_statistics(state, obs_stats_.size(), config_.gamma, seed_);
  obs_stats_ = std::move(statistics.obs_stats);
  reward_scaler_ = std::move(statistics.reward_scaler);
  num_updates_ = statistics.num_updates;
  seed_ = statistics.seed;
}

}  // namespace rlx
