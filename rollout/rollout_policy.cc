#include "rollout/rollout_policy.h"

#include <ATen/Parallel.h>
#include <dlfcn.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "rollout/policy_model.h"

namespace rlx {

namespace {

constexpr double kHalfLog2Pi = 0.91893853320467274178;  // 0.5 * log(2 pi)

void check_act_args(const float* obs, int num_envs, bool discrete, const ActOutput& out, bool policy_outputs) {
  if (num_envs < 1) throw std::invalid_argument("RolloutPolicy::act needs num_envs >= 1, got " + std::to_string(num_envs));
  if (obs == nullptr) throw std::invalid_argument("RolloutPolicy::act got a null observation buffer");
  if (discrete ? out.action_indices == nullptr : out.action_values == nullptr) {
    throw std::invalid_argument(std::string("RolloutPolicy::act needs an ") +
                                (discrete ? "action_indices" : "action_values") + " buffer");
  }
  if (policy_outputs && (out.log_probs == nullptr || out.values == nullptr)) {
    throw std::invalid_argument("RolloutPolicy::act needs log_probs and values buffers");
  }
}

// Index of the first largest element of row[0..n).
int64_t argmax_row(const float* row, int64_t n) {
  int64_t best = 0;
  for (int64_t j = 1; j < n; ++j) {
    if (row[j] > row[best]) best = j;
  }
  return best;
}

// A read-only [rows, cols] float view of caller memory (no copy).
torch::Tensor view_rows(const float* data, int64_t rows, int64_t cols) {
  return torch::from_blob(const_cast<float*>(data), {rows, cols}, torch::kFloat);
}

}  // namespace

int set_inference_threads(int num_threads) {
  if (num_threads < 1) throw std::invalid_argument("set_inference_threads needs at least one thread");
  const int previous = at::get_num_threads();
  at::set_num_threads(num_threads);
  // at::set_num_threads leaves OpenBLAS's own pthread pool alone, and a 2-thread GEMM on a
  // [128, 64] batch is about twice as slow as one thread here. Looked up at run time so rlx
  // needs no OpenBLAS headers and works with any BLAS.
  using SetBlasThreads = void (*)(int);
  if (void* symbol = dlsym(RTLD_DEFAULT, "openblas_set_num_threads")) {
    reinterpret_cast<SetBlasThreads>(symbol)(num_threads);
  }
  return previous;
}

// ---- ObsNormalizer ----

void ObsNormalizer::set(int64_t obs_size, const std::vector<float>& mean, const std::vector<float>& var, double count) {
  const auto size = static_cast<size_t>(obs_size);
  if (mean.size() != size || var.size() != size) {
    throw std::invalid_argument("observation normalizer needs " + std::to_string(size) + " means and variances, got " +
                                std::to_string(mean.size()) + " and " + std::to_string(var.size()));
  }
  std::vector<float> stddev(size);
  for (size_t i = 0; i < size; ++i) {
    if (!(var[i] >= 0.0f)) throw std::invalid_argument("observation normalizer variance " + std::to_string(i) + " is negative or NaN");
    // Same float arithmetic as normalize_observations(): sqrt(var + 1e-8) in float32.
    stddev[i] = std::sqrt(var[i] + static_cast<float>(kObsNormEpsilon));
  }
  mean_ = mean;
  var_ = var;
  std_ = std::move(stddev);
  count_ = count;
}

void ObsNormalizer::clear() {
  mean_.clear();
  var_.clear();
  std_.clear();
  count_ = 0.0;
}

void ObsNormalizer::apply(const float* in, int64_t rows, float* out) const {
  if (!active()) throw std::logic_error("ObsNormalizer::apply without statistics");
  const auto size = static_cast<int64_t>(mean_.size());
  const auto clip = static_cast<float>(kObsNormClip);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t i = 0; i < size; ++i) {
      const float z = (in[r * size + i] - mean_[i]) / std_[i];
      out[r * size + i] = std::min(std::max(z, -clip), clip);
    }
  }
}

// ---- RolloutPolicy ----

RolloutPolicy::RolloutPolicy(PolicyModelConfig config, uint64_t seed) : config_(std::move(config)), rng_(seed) {
  config_.validate();
}

const float* RolloutPolicy::prepare_obs(const float* obs, int num_envs) {
  if (!normalizer_.active()) return obs;
  normalized_obs_.resize(static_cast<size_t>(num_envs * config_.obs_size));  // grows once, then reused
  normalizer_.apply(obs, num_envs, normalized_obs_.data());
  return normalized_obs_.data();
}

// ---- ActorCriticPolicy ----

// The ActorCritic as one MLP whose last layer outputs [policy (P), value (1)]: separate
// networks side by side (first layer stacked, later layers block-diagonal), or the shared
// trunk with both heads stacked. layer i computes x W_i^T + b_i.
struct ActorCriticPolicy::Fused {
  std::vector<torch::Tensor> weights_t;  // [in, out]
  std::vector<torch::Tensor> biases;     // [out]
  bool relu = false;
};

ActorCriticPolicy::ActorCriticPolicy(const PolicyModelConfig& config, uint64_t seed, bool deterministic)
    : RolloutPolicy(config, seed),
      model_(std::make_shared<ActorCritic>(config)),
      fused_(std::make_unique<Fused>()),
      deterministic_(deterministic) {
  model_->eval();
  refresh_inference_weights();
}

ActorCriticPolicy::~ActorCriticPolicy() = default;

void ActorCriticPolicy::refresh_inference_weights() {
  torch::NoGradGuard no_grad;
  const auto params = model_->named_parameters();
  const auto get = [&](const std::string& name) { return params[name].detach(); };
  const size_t depth = config_.hidden_sizes.size();
  fused_->relu = config_.activation == "relu";
  fused_->weights_t.clear();
  fused_->biases.clear();
  const auto add = [&](const torch::Tensor& weight, const torch::Tensor& bias) {
    fused_->weights_t.push_back(weight.t().contiguous());
    fused_->biases.push_back(bias.contiguous());
  };
  for (size_t i = 0; i < depth; ++i) {
    const std::string n = std::to_string(i);
    if (config_.shared_trunk) {
      add(get("trunk_" + n + ".weight"), get("trunk_" + n + ".bias"));
      continue;
    }
    const torch::Tensor pi = get("pi_" + n + ".weight"), vf = get("vf_" + n + ".weight");
    add(i == 0 ? torch::cat({pi, vf}, 0) : torch::block_diag({pi, vf}),
        torch::cat({get("pi_" + n + ".bias"), get("vf_" + n + ".bias")}));
  }
  const torch::Tensor pi = get("pi_out.weight"), vf = get("vf_out.weight");
  const bool stacked = config_.shared_trunk || depth == 0;  // both heads read the same features
  add(stacked ? torch::cat({pi, vf}, 0) : torch::block_diag({pi, vf}), torch::cat({get("pi_out.bias"), get("vf_out.bias")}));

  if (!model_->discrete()) {
    const torch::Tensor log_std = model_->log_std().detach().contiguous();
    log_std_.assign(log_std.data_ptr<float>(), log_std.data_ptr<float>() + log_std.numel());
    std_.resize(log_std_.size());
    for (size_t i = 0; i < log_std_.size(); ++i) std_[i] = std::exp(log_std_[i]);
  }
}

void ActorCriticPolicy::act(const float* obs, int num_envs, const ActOutput& out) {
  const bool discrete = model_->discrete();
  check_act_args(obs, num_envs, discrete, out, true);
  const float* input = prepare_obs(obs, num_envs);
  torch::InferenceMode inference;
  torch::Tensor x = view_rows(input, num_envs, config_.obs_size);
  const size_t layers = fused_->weights_t.size();
  for (size_t i = 0; i < layers; ++i) {
    x = torch::addmm(fused_->biases[i], x, fused_->weights_t[i]);
    if (i + 1 == layers) break;
    if (fused_->relu) {
      x.relu_();
    } else {
      x.tanh_();
    }
  }
  const torch::Tensor output = x.contiguous();  // [K, P + 1]: policy outputs, then the value
  const float* output_data = output.data_ptr<float>();
  const int64_t width = config_.policy_output_size();

  for (int k = 0; k < num_envs; ++k) {
    const float* row = output_data + k * (width + 1);
    out.values[k] = row[width];
    if (discrete) {
      // Categorical over logits: inverse-CDF draw on exp(logit - max); log-prob = logit - logsumexp.
      const float max_logit = row[argmax_row(row, width)];
      double total = 0.0;
      for (int64_t j = 0; j < width; ++j) total += std::exp(static_cast<double>(row[j]) - max_logit);
      int64_t action = width - 1;
      if (deterministic_) {
        action = argmax_row(row, width);
      } else {
        const double target = rng_.uniform() * total;
        double cumulative = 0.0;
        for (int64_t j = 0; j < width; ++j) {
          cumulative += std::exp(static_cast<double>(row[j]) - max_logit);
          if (target < cumulative) {
            action = j;
            break;
          }
        }
      }
      out.action_indices[k] = action;
      out.log_probs[k] = static_cast<float>(row[action] - max_logit - std::log(total));
    } else {
      // Diagonal Gaussian: a = mean + std * z; log-prob = sum(-z^2/2 - log_std - log(2 pi)/2).
      float* action = out.action_values + k * width;
      double log_prob = 0.0;
      for (int64_t j = 0; j < width; ++j) {
        const double z = deterministic_ ? 0.0 : rng_.normal();
        action[j] = static_cast<float>(row[j] + std_[j] * z);
        log_prob += -0.5 * z * z - log_std_[j] - kHalfLog2Pi;
      }
      out.log_probs[k] = static_cast<float>(log_prob);
    }
  }
}

void ActorCriticPolicy::load_weights(const float* params, size_t count, uint64_t version) {
  model_->load_flat_parameters(params, count);
  refresh_inference_weights();
  set_version(version);
}

size_t ActorCriticPolicy::num_parameters() const { return static_cast<size_t>(model_->num_parameters()); }

std::vector<float> ActorCriticPolicy::weights() const { return model_->flat_parameters(); }

// ---- EpsilonGreedyQPolicy ----

EpsilonGreedyQPolicy::EpsilonGreedyQPolicy(const PolicyModelConfig& config, double epsilon, uint64_t seed)
    : RolloutPolicy(config, seed), model_(std::make_shared<QNetwork>(config)) {
  model_->eval();
  set_epsilon(epsilon);
}

EpsilonGreedyQPolicy::~EpsilonGreedyQPolicy() = default;

void EpsilonGreedyQPolicy::set_epsilon(double epsilon) {
  if (!(epsilon >= 0.0 && epsilon <= 1.0)) {
    throw std::invalid_argument("epsilon must lie in [0, 1], got " + std::to_string(epsilon));
  }
  epsilon_ = epsilon;
}

void EpsilonGreedyQPolicy::act(const float* obs, int num_envs, const ActOutput& out) {
  check_act_args(obs, num_envs, true, out, false);
  const float* input = prepare_obs(obs, num_envs);
  torch::InferenceMode inference;
  const torch::Tensor q = model_->forward(view_rows(input, num_envs, config_.obs_size)).contiguous();
  const float* q_data = q.data_ptr<float>();
  const int64_t n = model_->num_actions();
  for (int k = 0; k < num_envs; ++k) {
    // Draw the coin for every env so the stream does not depend on the Q-values.
    const bool explore = rng_.uniform() < epsilon_;
    out.action_indices[k] = explore ? rng_.uniform_int(n) : argmax_row(q_data + k * n, n);
  }
}

void EpsilonGreedyQPolicy::load_weights(const float* params, size_t count, uint64_t version) {
  model_->load_flat_parameters(params, count);
  set_version(version);
}

size_t EpsilonGreedyQPolicy::num_parameters() const { return static_cast<size_t>(model_->num_parameters()); }

std::vector<float> EpsilonGreedyQPolicy::weights() const { return model_->flat_parameters(); }

double apex_worker_epsilon(int worker_index, int num_workers, double base, double alpha) {
  if (num_workers < 1 || worker_index < 0 || worker_index >= num_workers) {
    throw std::invalid_argument("apex_worker_epsilon needs 0 <= worker_index < num_workers");
  }
  if (num_workers == 1) return base;
  return std::pow(base, 1.0 + alpha * worker_index / (num_workers - 1));
}

}  // namespace rlx
