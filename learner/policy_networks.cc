#include "learner/policy_networks.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <dlfcn.h>
#include <torch/nn/init.h>
#include <torch/utils.h>

#include <cmath>
#include <cstring>
#include <map>
#include <stdexcept>
#include <utility>

#include "models/action_sampling.h"
#include "models/layer_kinds.h"

namespace rlx {

namespace {

constexpr double kHalfLog2Pi = 0.91893853320467274178;  // 0.5 * log(2 pi)

// Registers a module per layer of a chain, in order: a Linear for a dense layer, with its
// orthogonal init or, for a spec without orthogonal_init, nn::Linear's own default; a
// RegisteredLayer for a layer of a registered kind.
std::vector<TorchChainLayer> register_chain(torch::nn::Module& module, const LayerChain& chain) {
  std::vector<TorchChainLayer> layers;
  for (const LayerSpec& spec : chain) {
    TorchChainLayer layer;
    if (!spec.dense()) {
      layer.registered = module.register_module(spec.name, RegisteredLayer(spec));
      layers.push_back(layer);
      continue;
    }
    layer.linear = module.register_module(spec.name, torch::nn::Linear(spec.in, spec.out));
    if (spec.orthogonal_init) {
      torch::NoGradGuard no_grad;
      torch::nn::init::orthogonal_(layer.linear->weight, spec.init_gain);
      layer.linear->bias.zero_();
    }
    layers.push_back(layer);
  }
  return layers;
}

// Runs a chain's layers with each spec's activation (a RegisteredLayer applies its own).
torch::Tensor run_chain(const std::vector<TorchChainLayer>& layers, const LayerChain& chain, torch::Tensor x) {
  for (size_t i = 0; i < layers.size(); ++i) {
    if (layers[i].registered) {
      x = layers[i].registered.ptr()->forward(x);
      continue;
    }
    x = activate(layers[i].linear.ptr()->forward(x), chain[i].activation);  // ptr(): the holder is const
  }
  return x;
}

// The model state's parts a sequence run gives, by state offset: final and per-step states.
struct StateParts {
  std::map<int64_t, torch::Tensor> final_states;  // [B, s]
  std::map<int64_t, torch::Tensor> states_after;  // [B, T, s]
};

// run_chain over B sequences of T steps (rows b-major): recurrent layers run over the steps from
// their part of input.initial_state, and leave their states in parts.
torch::Tensor run_chain_sequences(const std::vector<TorchChainLayer>& layers, const LayerChain& chain, torch::Tensor x,
                                  const SequenceInput& input, StateParts& parts) {
  for (size_t i = 0; i < layers.size(); ++i) {
    if (!layers[i].registered || !layers[i].registered->recurrent()) {
      x = run_chain({layers[i]}, {chain[i]}, x);
      continue;
    }
    const int64_t offset = chain[i].state_offset, size = layer_state_size(chain[i]);
    RecurrentRun run = layers[i].registered.ptr()->run_sequences(x, input.num_steps, input.initial_state.narrow(1, offset, size),
                                                           input.resets, input.record_states);
    x = run.outputs;
    parts.final_states[offset] = run.final_state;
    if (input.record_states) parts.states_after[offset] = run.states_after;
  }
  return x;
}

// The parts in state order, joined along `dim` (an empty model state: zero columns).
torch::Tensor joined_state(const std::map<int64_t, torch::Tensor>& parts, int64_t dim, const torch::Tensor& like) {
  std::vector<torch::Tensor> ordered;
  for (const auto& [offset, part] : parts) ordered.push_back(part);
  if (ordered.empty()) return like.new_zeros({like.size(0), 0});
  return torch::cat(ordered, dim);
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

torch::Tensor flatten_parameters(torch::nn::Module& module, torch::Device device) {
  torch::NoGradGuard no_grad;
  torch::Tensor flat =
      torch::empty({num_flat_parameters(module)}, torch::TensorOptions().dtype(torch::kFloat).device(device));
  int64_t offset = 0;
  for (auto& p : module.parameters()) {
    torch::Tensor view = flat.narrow(0, offset, p.numel()).view(p.sizes());
    view.copy_(p);
    p.set_data(view);
    offset += p.numel();
  }
  return flat;
}

torch::Tensor flatten_gradients(torch::nn::Module& module, const torch::Tensor& flat_params) {
  torch::Tensor flat = torch::zeros_like(flat_params);
  int64_t offset = 0;
  for (auto& p : module.parameters()) {
    p.mutable_grad() = flat.narrow(0, offset, p.numel()).view(p.sizes());
    offset += p.numel();
  }
  return flat;
}

torch::Generator make_cpu_generator(uint64_t seed) { return at::detail::createCPUGenerator(seed); }

torch::Tensor normalize_observations(const torch::Tensor& obs, const torch::Tensor& mean, const torch::Tensor& var) {
  return torch::clamp((obs - mean) / torch::sqrt(var + kObsNormEpsilon), -kObsNormClip, kObsNormClip);
}

// ---- distributions ----

ActionDistribution ActionDistribution::categorical(const torch::Tensor& logits, std::vector<int64_t> categories,
                                                   const torch::Tensor& mask) {
  if (logits.dim() != 2) throw std::invalid_argument("categorical logits must be [B, P]");
  const int64_t width = logits.size(1);
  if (categories.empty()) categories.push_back(width);
  int64_t total = 0;
  for (int64_t count : categories) {
    if (count < 1) throw std::invalid_argument("categorical segments need at least one logit each");
    total += count;
  }
  if (total != width) {
    throw std::invalid_argument("categorical segments sum to " + std::to_string(total) + " logits, the logits are " +
                                std::to_string(width) + " wide");
  }
  ActionDistribution d;
  d.discrete_ = true;
  d.categories_ = std::move(categories);
  torch::Tensor masked = logits;
  if (mask.defined()) {
    if (!mask.sizes().equals(logits.sizes())) throw std::invalid_argument("categorical mask must be shaped like the logits");
    d.mask_ = mask.to(torch::kBool);
    // masked_fill passes no gradient to the filled logits.
    masked = logits.masked_fill(d.mask_.logical_not(), kMaskedLogit);
  }
  if (d.categories_.size() == 1) {
    d.log_probs_ = torch::log_softmax(masked, 1);
  } else {
    std::vector<torch::Tensor> segments = masked.split_with_sizes(d.categories_, 1);
    for (torch::Tensor& segment : segments) segment = torch::log_softmax(segment, 1);
    d.log_probs_ = torch::cat(segments, 1);
  }
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
    std::vector<torch::Tensor> drawn;
    for (const torch::Tensor& segment : log_probs_.split_with_sizes(categories_, 1)) {
      const torch::Tensor probs = segment.exp();
      drawn.push_back(generator.defined() ? torch::multinomial(probs, 1, true, generator) : torch::multinomial(probs, 1, true));
    }
    return drawn.size() == 1 ? drawn[0].squeeze(1) : torch::cat(drawn, 1);
  }
  torch::Tensor noise = torch::empty_like(mean_);
  if (generator.defined()) {
    noise.normal_(0.0, 1.0, generator);
  } else {
    noise.normal_(0.0, 1.0);
  }
  return mean_ + log_std_.exp() * noise;
}

torch::Tensor ActionDistribution::logit_indices(const torch::Tensor& actions) const {
  if (!discrete_) throw std::invalid_argument("logit_indices of a gaussian distribution");
  const auto elements = static_cast<int64_t>(categories_.size());
  torch::Tensor index = actions.to(torch::kLong).view({-1, elements});
  if (elements == 1) return index;
  std::vector<int64_t> offsets(categories_.size(), 0);
  for (size_t e = 1; e < categories_.size(); ++e) offsets[e] = offsets[e - 1] + categories_[e - 1];
  return index + torch::tensor(offsets, torch::kLong).to(index.device());
}

torch::Tensor ActionDistribution::log_prob(const torch::Tensor& actions) const {
  if (discrete_) {
    const torch::Tensor picked = log_probs_.gather(1, logit_indices(actions));
    return categories_.size() == 1 ? picked.squeeze(1) : picked.sum(1);
  }
  const torch::Tensor z = (actions - mean_) * torch::exp(-log_std_);
  return (-0.5 * z.pow(2) - log_std_ - kHalfLog2Pi).sum(1);
}

// A masked logit's p is exp(about -1e8) = 0, so it adds 0 * (about -1e8) = 0 to the sum.
torch::Tensor ActionDistribution::entropy() const {
  if (discrete_) return -(log_probs_.exp() * log_probs_).sum(1);
  return (log_std_ + (0.5 + kHalfLog2Pi)).sum(1);
}

torch::Tensor ActionDistribution::segment_entropies() const {
  if (!discrete_) throw std::invalid_argument("segment_entropies of a gaussian distribution");
  if (categories_.size() == 1) return entropy().unsqueeze(1).expand_as(log_probs_);
  std::vector<torch::Tensor> each;
  for (const torch::Tensor& segment : log_probs_.split_with_sizes(categories_, 1)) {
    each.push_back(-(segment.exp() * segment).sum(1, /*keepdim=*/true).expand_as(segment));
  }
  return torch::cat(each, 1);
}

torch::Tensor ActionDistribution::deterministic() const {
  if (!discrete_) return mean_;
  if (categories_.size() == 1) return log_probs_.argmax(1);
  std::vector<torch::Tensor> best;
  for (const torch::Tensor& segment : log_probs_.split_with_sizes(categories_, 1)) best.push_back(segment.argmax(1, true));
  return torch::cat(best, 1);
}

torch::Tensor ActionDistribution::kl_divergence_to(const ActionDistribution& other) const {
  if (discrete_ != other.discrete_) throw std::invalid_argument("KL between a categorical and a gaussian distribution");
  const torch::Tensor& mine = discrete_ ? log_probs_ : mean_;
  const torch::Tensor& theirs = discrete_ ? other.log_probs_ : other.mean_;
  if (!mine.sizes().equals(theirs.sizes()) || categories_ != other.categories_) {
    throw std::invalid_argument("KL between distributions of other shapes");
  }
  // Summed over every logit: the sum of the segments' KLs; a logit masked in this one has p = 0.
  if (discrete_) return (log_probs_.exp() * (log_probs_ - other.log_probs_)).sum(1);
  // Diagonal gaussians p (this) and q: log(s_q / s_p) + (s_p^2 + (m_p - m_q)^2) / (2 s_q^2) - 1/2.
  const torch::Tensor var_ratio = torch::exp(2.0 * (log_std_ - other.log_std_));
  const torch::Tensor mean_term = (mean_ - other.mean_).pow(2) * torch::exp(-2.0 * other.log_std_);
  return (other.log_std_ - log_std_ + 0.5 * (var_ratio + mean_term) - 0.5).sum(1);
}

// ---- ActorCritic ----

ActorCritic::ActorCritic(ModelSpec config) : config_(std::move(config)), layout_(actor_critic_layout(config_)) {
  reset();
}

void ActorCritic::reset() {
  // Registration order is the layout's flat order: log_std, trunk, policy chain, value chain.
  if (layout_.log_std) {
    log_std_ = register_parameter("log_std", torch::full(layout_.log_std->shape, layout_.log_std_init, torch::kFloat));
  }
  trunk_ = register_chain(*this, layout_.trunk);
  policy_chain_ = register_chain(*this, layout_.policy_chain);
  value_chain_ = register_chain(*this, layout_.value_chain);
  policy_body_.assign(policy_chain_.begin(), policy_chain_.end() - 1);
  policy_body_layout_.assign(layout_.policy_chain.begin(), layout_.policy_chain.end() - 1);
}

torch::Tensor ActorCritic::policy_from_latent(const torch::Tensor& latent) const {
  const torch::Tensor out = run_chain({policy_chain_.back()}, {layout_.policy_chain.back()}, latent);
  return layout_.sde ? torch::cat({out, latent.detach()}, 1) : out;
}

PolicyOutput ActorCritic::forward(const torch::Tensor& obs) {
  const torch::Tensor features = run_chain(trunk_, layout_.trunk, obs);
  return {policy_from_latent(run_chain(policy_body_, policy_body_layout_, features)),
          run_chain(value_chain_, layout_.value_chain, features).squeeze(1)};
}

SequenceOutput ActorCritic::forward_sequences(const torch::Tensor& obs, const SequenceInput& input) {
  if (!input.initial_state.defined() || input.initial_state.dim() != 2 || input.initial_state.size(1) != layout_.state_size) {
    throw std::invalid_argument("forward_sequences needs an initial state [B, " + std::to_string(layout_.state_size) + "]");
  }
  StateParts parts;
  const torch::Tensor features = run_chain_sequences(trunk_, layout_.trunk, obs, input, parts);
  SequenceOutput out;
  out.policy = policy_from_latent(run_chain_sequences(policy_body_, policy_body_layout_, features, input, parts));
  out.value = run_chain_sequences(value_chain_, layout_.value_chain, features, input, parts).squeeze(1);
  out.final_state = joined_state(parts.final_states, 1, input.initial_state);
  if (input.record_states) {
    out.states_after = parts.states_after.empty() ? obs.new_zeros({obs.size(0), 0})
                                                  : joined_state(parts.states_after, 2, input.initial_state)
                                                        .reshape({obs.size(0), layout_.state_size});
  }
  return out;
}

torch::Tensor ActorCritic::policy_forward(const torch::Tensor& obs) {
  return policy_from_latent(run_chain(policy_body_, policy_body_layout_, run_chain(trunk_, layout_.trunk, obs)));
}

torch::Tensor ActorCritic::value_forward(const torch::Tensor& obs) {
  return run_chain(value_chain_, layout_.value_chain, run_chain(trunk_, layout_.trunk, obs)).squeeze(1);
}

ActionDistribution ActorCritic::distribution(const torch::Tensor& policy_output, const torch::Tensor& mask,
                                             bool constant) const {
  if (discrete()) return ActionDistribution::categorical(policy_output, config_.action_categories(), mask);
  const torch::Tensor log_std = constant ? log_std_.detach() : log_std_;
  if (!layout_.sde) return ActionDistribution::diagonal_gaussian(policy_output, log_std);
  // gSDE (models/action_sampling.h): sigma^2 = latent^2 . exp(log_std)^2 + epsilon, per row.
  const int64_t actions = layout_.policy_outputs;
  const torch::Tensor latent = policy_output.narrow(1, actions, layout_.latent_size);
  const torch::Tensor variance = latent.pow(2).mm(torch::exp(2.0 * log_std)) + kSdeVarianceEpsilon;
  return ActionDistribution::diagonal_gaussian(policy_output.narrow(1, 0, actions), 0.5 * variance.log());
}

// ---- QNetwork ----

QNetwork::QNetwork(ModelSpec config) : config_(std::move(config)), layout_(q_network_layout(config_)) { reset(); }

void QNetwork::reset() {
  trunk_ = register_chain(*this, layout_.trunk);
  heads_ = register_chain(*this, layout_.heads);
}

torch::Tensor QNetwork::forward(const torch::Tensor& obs) {
  const torch::Tensor features = run_chain(trunk_, layout_.trunk, obs);
  if (!layout_.dueling) return heads_[0].linear->forward(features);
  const torch::Tensor advantage = heads_[1].linear->forward(features);
  return heads_[0].linear->forward(features) + advantage - advantage.mean(1, /*keepdim=*/true);
}

}  // namespace rlx
