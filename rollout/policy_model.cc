#include "rollout/policy_model.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/nn/init.h>
#include <torch/utils.h>

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace rlx {

namespace {

constexpr double kHalfLog2Pi = 0.91893853320467274178;  // 0.5 * log(2 pi)

// Orthogonal weight with the given gain, zero bias.
void init_linear(torch::nn::LinearImpl& layer, double gain) {
  torch::NoGradGuard no_grad;
  torch::nn::init::orthogonal_(layer.weight, gain);
  layer.bias.zero_();
}

// Registers Linear layers named prefix_0.. for in -> hidden sizes, returning the last width.
int64_t add_hidden_layers(torch::nn::Module& module, const std::string& prefix, int64_t in,
                          const std::vector<int64_t>& hidden, std::vector<torch::nn::Linear>& layers) {
  layers.clear();
  for (size_t i = 0; i < hidden.size(); ++i) {
    torch::nn::Linear layer(module.register_module(prefix + "_" + std::to_string(i), torch::nn::Linear(in, hidden[i])));
    init_linear(*layer, kHiddenGain);
    layers.push_back(layer);
    in = hidden[i];
  }
  return in;
}

torch::nn::Linear add_head(torch::nn::Module& module, const std::string& name, int64_t in, int64_t out, double gain) {
  torch::nn::Linear layer(module.register_module(name, torch::nn::Linear(in, out)));
  init_linear(*layer, gain);
  return layer;
}

torch::Tensor run_trunk(const std::vector<torch::nn::Linear>& layers, torch::Tensor x, bool relu) {
  for (const auto& layer : layers) {
    x = layer.ptr()->forward(x);  // ptr(): the holder is const, the layer is not
    x = relu ? torch::relu(x) : torch::tanh(x);
  }
  return x;
}

}  // namespace

// ---- flat parameters ----

int64_t num_flat_parameters(const torch::nn::Module& module) {
  int64_t count = 0;
  for (const auto& p : module.parameters()) count += p.numel();
  return count;
}

std::vector<std::string> flat_parameter_names(const torch::nn::Module& module) {
  std::vector<std::string> names;
  for (const auto& item : module.named_parameters()) names.push_back(item.key());
  return names;
}

void copy_flat_parameters(const torch::nn::Module& module, float* out, size_t count) {
  const auto expected = static_cast<size_t>(num_flat_parameters(module));
  if (count != expected) {
    throw std::invalid_argument("flat parameter buffer holds " + std::to_string(count) + " values, the model has " +
                                std::to_string(expected));
  }
  torch::NoGradGuard no_grad;
  for (const auto& p : module.parameters()) {
    const torch::Tensor cpu = p.detach().to(torch::kCPU, torch::kFloat).contiguous();
    std::memcpy(out, cpu.data_ptr<float>(), static_cast<size_t>(cpu.numel()) * sizeof(float));
    out += cpu.numel();
  }
}

std::vector<float> flat_parameters(const torch::nn::Module& module) {
  std::vector<float> flat(static_cast<size_t>(num_flat_parameters(module)));
  copy_flat_parameters(module, flat.data(), flat.size());
  return flat;
}

void load_flat_parameters(torch::nn::Module& module, const float* params, size_t count) {
  const auto expected = static_cast<size_t>(num_flat_parameters(module));
  if (count != expected) {
    throw std::invalid_argument("flat parameter vector holds " + std::to_string(count) + " values, the model has " +
                                std::to_string(expected));
  }
  if (count > 0 && params == nullptr) throw std::invalid_argument("load_flat_parameters got a null buffer");
  torch::NoGradGuard no_grad;
  for (auto& p : module.parameters()) {
    // from_blob only reads here: copy_ takes the values into the parameter (any device/dtype).
    p.copy_(torch::from_blob(const_cast<float*>(params), p.sizes(), torch::kFloat));
    params += p.numel();
  }
}

torch::Generator make_cpu_generator(uint64_t seed) { return at::detail::createCPUGenerator(seed); }

torch::Tensor normalize_observations(const torch::Tensor& obs, const torch::Tensor& mean, const torch::Tensor& var) {
  return torch::clamp((obs - mean) / torch::sqrt(var + kObsNormEpsilon), -kObsNormClip, kObsNormClip);
}

// ---- distributions ----

ActionDistribution ActionDistribution::categorical(const torch::Tensor& logits) {
  if (logits.dim() != 2) throw std::invalid_argument("categorical logits must be [B, n]");
  ActionDistribution d;
  d.discrete_ = true;
  d.log_probs_ = torch::log_softmax(logits, 1);
  return d;
}

ActionDistribution ActionDistribution::diagonal_gaussian(const torch::Tensor& mean, const torch::Tensor& log_std) {
  if (mean.dim() != 2) throw std::invalid_argument("gaussian mean must be [B, A]");
  ActionDistribution d;
  d.discrete_ = false;
  d.mean_ = mean;
  d.log_std_ = log_std.expand_as(mean);
  return d;
}

torch::Tensor ActionDistribution::sample(const torch::Generator& generator) const {
  torch::NoGradGuard no_grad;
  if (discrete_) {
    const torch::Tensor probs = log_probs_.exp();
    torch::Tensor drawn = generator.defined() ? torch::multinomial(probs, 1, true, generator) : torch::multinomial(probs, 1, true);
    return drawn.squeeze(1);
  }
  torch::Tensor noise = torch::empty_like(mean_);
  if (generator.defined()) {
    noise.normal_(0.0, 1.0, generator);
  } else {
    noise.normal_(0.0, 1.0);
  }
  return mean_ + log_std_.exp() * noise;
}

torch::Tensor ActionDistribution::log_prob(const torch::Tensor& actions) const {
  if (discrete_) return log_probs_.gather(1, actions.to(torch::kLong).view({-1, 1})).squeeze(1);
  const torch::Tensor z = (actions - mean_) * torch::exp(-log_std_);
  return (-0.5 * z.pow(2) - log_std_ - kHalfLog2Pi).sum(1);
}

torch::Tensor ActionDistribution::entropy() const {
  if (discrete_) return -(log_probs_.exp() * log_probs_).sum(1);
  return (log_std_ + (0.5 + kHalfLog2Pi)).sum(1);
}

torch::Tensor ActionDistribution::deterministic() const { return discrete_ ? log_probs_.argmax(1) : mean_; }

// ---- ActorCritic ----

ActorCritic::ActorCritic(PolicyModelConfig config) : config_(std::move(config)) {
  config_.validate();
  reset();
}

void ActorCritic::reset() {
  relu_ = config_.activation == "relu";
  const int64_t out = config_.policy_output_size();
  if (!discrete()) {
    log_std_ = register_parameter("log_std", torch::full({out}, config_.log_std_init, torch::kFloat));
  }
  if (config_.shared_trunk) {
    const int64_t width = add_hidden_layers(*this, "trunk", config_.obs_size, config_.hidden_sizes, policy_layers_);
    value_layers_.clear();
    policy_head_ = add_head(*this, "pi_out", width, out, kPolicyOutputGain);
    value_head_ = add_head(*this, "vf_out", width, 1, kValueOutputGain);
  } else {
    const int64_t pi_width = add_hidden_layers(*this, "pi", config_.obs_size, config_.hidden_sizes, policy_layers_);
    policy_head_ = add_head(*this, "pi_out", pi_width, out, kPolicyOutputGain);
    const int64_t vf_width = add_hidden_layers(*this, "vf", config_.obs_size, config_.hidden_sizes, value_layers_);
    value_head_ = add_head(*this, "vf_out", vf_width, 1, kValueOutputGain);
  }
}

torch::Tensor ActorCritic::trunk(const std::vector<torch::nn::Linear>& layers, torch::Tensor x) const {
  return run_trunk(layers, std::move(x), relu_);
}

PolicyOutput ActorCritic::forward(const torch::Tensor& obs) {
  if (config_.shared_trunk) {
    const torch::Tensor features = trunk(policy_layers_, obs);
    return {policy_head_->forward(features), value_head_->forward(features).squeeze(1)};
  }
  return {policy_head_->forward(trunk(policy_layers_, obs)), value_head_->forward(trunk(value_layers_, obs)).squeeze(1)};
}

torch::Tensor ActorCritic::policy_forward(const torch::Tensor& obs) { return policy_head_->forward(trunk(policy_layers_, obs)); }

torch::Tensor ActorCritic::value_forward(const torch::Tensor& obs) {
  const auto& layers = config_.shared_trunk ? policy_layers_ : value_layers_;
  return value_head_->forward(trunk(layers, obs)).squeeze(1);
}

ActionDistribution ActorCritic::distribution(const torch::Tensor& policy_output) const {
  return discrete() ? ActionDistribution::categorical(policy_output)
                    : ActionDistribution::diagonal_gaussian(policy_output, log_std_);
}

// ---- QNetwork ----

QNetwork::QNetwork(PolicyModelConfig config) : config_(std::move(config)) {
  config_.validate();
  if (!config_.action_space.is_discrete()) {
    throw std::invalid_argument("QNetwork needs a Discrete action space, got " + config_.action_space.to_string());
  }
  reset();
}

void QNetwork::reset() {
  relu_ = config_.activation == "relu";
  const int64_t width = add_hidden_layers(*this, "q", config_.obs_size, config_.hidden_sizes, layers_);
  if (config_.dueling) {
    value_head_ = add_head(*this, "value_out", width, 1, 1.0);
    advantage_head_ = add_head(*this, "advantage_out", width, config_.action_space.n, 1.0);
  } else {
    q_head_ = add_head(*this, "q_out", width, config_.action_space.n, 1.0);
  }
}

torch::Tensor QNetwork::forward(const torch::Tensor& obs) {
  const torch::Tensor features = run_trunk(layers_, obs, relu_);
  if (!config_.dueling) return q_head_->forward(features);
  const torch::Tensor advantage = advantage_head_->forward(features);
  return value_head_->forward(features) + advantage - advantage.mean(1, /*keepdim=*/true);
}

}  // namespace rlx
