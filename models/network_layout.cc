#include "models/network_layout.h"

#include <cmath>
#include <stdexcept>

#include "core/rng.h"
#include "models/layer_kinds.h"

namespace rlx {

namespace {

// Appends tensors to a flat layout in order, assigning offsets.
class FlatBuilder {
 public:
  explicit FlatBuilder(std::vector<ParameterSpec>& parameters) : parameters_(parameters) {}

  ParameterSpec add(const std::string& name, std::vector<int64_t> shape) {
    size_t size = 1;
    for (int64_t d : shape) size *= static_cast<size_t>(d);
    ParameterSpec spec{name, std::move(shape), next_, size};
    next_ += size;
    parameters_.push_back(spec);
    return spec;
  }

  LayerSpec dense(const std::string& name, int64_t in, int64_t out, Activation activation, double gain) {
    LayerSpec layer;
    layer.name = name;
    layer.in = in;
    layer.out = out;
    layer.activation = activation;
    layer.init_gain = gain;
    layer.parameters = {add(name + ".weight", {out, in}), add(name + ".bias", {out})};
    return layer;
  }

  // A layer of a registered kind reading `in` features, with its attributes.
  LayerSpec registered(const EncoderLayer& encoder_layer, const std::string& name, int64_t in, double gain) {
    const LayerKind& registered_kind = find_layer_kind(encoder_layer.kind);
    LayerSpec layer;
    layer.kind = encoder_layer.kind;
    layer.name = name;
    layer.in = in;
    layer.attributes = encoder_layer.attributes;
    layer.out = registered_kind.output_size(layer);
    if (layer.out <= 0) {
      throw std::invalid_argument("layer kind '" + layer.kind + "' gives no outputs for " + std::to_string(in) + " inputs");
    }
    layer.activation = encoder_layer.activation;
    layer.init_gain = gain;
    for (auto& [suffix, shape] : registered_kind.parameters(layer)) layer.parameters.push_back(add(name + "." + suffix, shape));
    return layer;
  }

  // The spec's encoder as layers prefix_0.. reading `in` features; returns its output width.
  int64_t encoder(LayerChain& chain, const std::string& prefix, int64_t in, const ModelSpec& spec) {
    const std::vector<EncoderLayer> layers = encoder_layers(spec);
    for (size_t i = 0; i < layers.size(); ++i) {
      const std::string name = prefix + "_" + std::to_string(i);
      const EncoderLayer& layer = layers[i];
      if (layer.kind == kDenseLayer && !layer.attributes.empty()) {
        throw std::invalid_argument("encoder '" + spec.encoder + "': dense layer " + name + " takes no attributes");
      }
      chain.push_back(layer.kind == kDenseLayer ? dense(name, in, layer.size, layer.activation, kHiddenGain)
                                                : registered(layer, name, in, kHiddenGain));
      in = chain.back().out;
    }
    return in;
  }

  // The spec's recurrent core (if any) as layers prefix_<core>_0.. reading `in` features, their
  // states placed from state_size on (which grows by theirs); returns its output width.
  int64_t core(LayerChain& chain, const std::string& prefix, int64_t in, const ModelSpec& spec, int64_t& state_size) {
    if (!spec.recurrent()) return in;
    for (int64_t i = 0; i < spec.core_layers; ++i) {
      EncoderLayer cell{spec.core, 0, Activation::kNone, {{"hidden", spec.core_size}}};
      chain.push_back(registered(cell, prefix + "_" + spec.core + "_" + std::to_string(i), in, 1.0));
      chain.back().state_offset = state_size;
      state_size += layer_state_size(chain.back());
      in = chain.back().out;
    }
    return in;
  }

  // The spec's head layers before one output, prefix_head_0.. (dense, the spec's activation)
  // reading `in` features; returns their output width.
  int64_t head(LayerChain& chain, const std::string& prefix, int64_t in, const ModelSpec& spec) {
    const Activation activation = parse_activation(spec.activation);
    for (size_t i = 0; i < spec.head_sizes.size(); ++i) {
      chain.push_back(dense(prefix + "_head_" + std::to_string(i), in, spec.head_sizes[i], activation, kHiddenGain));
      in = chain.back().out;
    }
    return in;
  }

  size_t size() const { return next_; }

 private:
  std::vector<ParameterSpec>& parameters_;
  size_t next_ = 0;
};

void init_chain(const LayerChain& chain, std::vector<float>& flat, Rng& rng) {
  for (const LayerSpec& layer : chain) {
    if (!layer.dense()) {
      std::vector<float*> params;
      for (const ParameterSpec& p : layer.parameters) params.push_back(flat.data() + p.offset);
      find_layer_kind(layer.kind).initialize(layer, params.data(), rng);
    } else if (layer.orthogonal_init) {
      orthogonal_fill(flat.data() + layer.weight_offset(), layer.out, layer.in, layer.init_gain, rng);
    } else {
      fan_in_uniform_fill(flat.data() + layer.weight_offset(), flat.data() + layer.bias_offset(), layer.out, layer.in, rng);
    }
  }
}

}  // namespace

void orthogonal_fill(float* weight, int64_t out, int64_t in, double gain, Rng& rng) {
  const int64_t vectors = std::min(out, in);  // orthonormal vectors of length `length`
  const int64_t length = std::max(out, in);
  std::vector<double> basis(static_cast<size_t>(vectors * length));
  for (double& v : basis) v = rng.normal();
  for (int64_t k = 0; k < vectors; ++k) {  // modified Gram-Schmidt
    double* v = basis.data() + k * length;
    for (int64_t j = 0; j < k; ++j) {
      const double* u = basis.data() + j * length;
      double dot = 0.0;
      for (int64_t i = 0; i < length; ++i) dot += u[i] * v[i];
      for (int64_t i = 0; i < length; ++i) v[i] -= dot * u[i];
    }
    double norm = 0.0;
    for (int64_t i = 0; i < length; ++i) norm += v[i] * v[i];
    norm = std::sqrt(norm);
    for (int64_t i = 0; i < length; ++i) v[i] /= norm;
  }
  for (int64_t r = 0; r < out; ++r) {
    for (int64_t c = 0; c < in; ++c) {
      // Fewer rows: each row is a basis vector; fewer columns: each column is.
      const double value = out <= in ? basis[static_cast<size_t>(r * length + c)] : basis[static_cast<size_t>(c * length + r)];
      weight[r * in + c] = static_cast<float>(gain * value);
    }
  }
}

void fan_in_uniform_fill(float* weight, float* bias, int64_t out, int64_t in, Rng& rng) {
  const double bound = 1.0 / std::sqrt(static_cast<double>(in));
  for (int64_t i = 0; i < out * in; ++i) weight[i] = static_cast<float>(rng.uniform(-bound, bound));
  for (int64_t i = 0; i < out; ++i) bias[i] = static_cast<float>(rng.uniform(-bound, bound));
}

Activation parse_activation(const std::string& name) {
  if (name == "tanh") return Activation::kTanh;
  if (name == "relu") return Activation::kRelu;
  throw std::invalid_argument("unknown activation '" + name + "' (expected tanh or relu)");
}

bool all_dense(const LayerChain& chain) {
  for (const LayerSpec& layer : chain) {
    if (!layer.dense()) return false;
  }
  return true;
}

int64_t chain_output_size(const LayerChain& chain, int64_t input_size) {
  return chain.empty() ? input_size : chain.back().out;
}

ActorCriticLayout actor_critic_layout(const ModelSpec& config) {
  config.validate();
  ActorCriticLayout layout;
  layout.obs_size = config.obs_size;
  layout.policy_outputs = config.policy_output_size();
  layout.discrete = config.indexed_actions();  // categorical logits, one set per action element
  layout.log_std_init = config.log_std_init;
  layout.sde = config.sde;
  if (config.sde) {
    // gSDE's log-std comes first in flat order but is as wide as pi_out's input: the layout
    // without it says how wide that is.
    ModelSpec plain = config;
    plain.sde = false;
    layout.latent_size = actor_critic_layout(plain).policy_chain.back().in;
  }
  FlatBuilder flat(layout.parameters);
  if (layout.sde) {
    layout.log_std = flat.add("log_std", {layout.latent_size, layout.policy_outputs});
  } else if (!layout.discrete) {
    layout.log_std = flat.add("log_std", {layout.policy_outputs});
  }
  if (config.shared_trunk) {
    int64_t width = flat.encoder(layout.trunk, "trunk", config.obs_size, config);
    width = flat.core(layout.trunk, "trunk", width, config, layout.state_size);
    const int64_t pi_width = flat.head(layout.policy_chain, "pi", width, config);
    layout.latent_size = pi_width;
    layout.policy_chain.push_back(flat.dense("pi_out", pi_width, layout.policy_outputs, Activation::kNone, kPolicyOutputGain));
    const int64_t vf_width = flat.head(layout.value_chain, "vf", width, config);
    layout.value_chain.push_back(flat.dense("vf_out", vf_width, 1, Activation::kNone, kValueOutputGain));
  } else {
    int64_t pi_width = flat.encoder(layout.policy_chain, "pi", config.obs_size, config);
    pi_width = flat.core(layout.policy_chain, "pi", pi_width, config, layout.state_size);
    pi_width = flat.head(layout.policy_chain, "pi", pi_width, config);
    layout.latent_size = pi_width;
    layout.policy_chain.push_back(flat.dense("pi_out", pi_width, layout.policy_outputs, Activation::kNone, kPolicyOutputGain));
    int64_t vf_width = flat.encoder(layout.value_chain, "vf", config.obs_size, config);
    vf_width = flat.core(layout.value_chain, "vf", vf_width, config, layout.state_size);
    vf_width = flat.head(layout.value_chain, "vf", vf_width, config);
    layout.value_chain.push_back(flat.dense("vf_out", vf_width, 1, Activation::kNone, kValueOutputGain));
  }
  for (LayerChain* chain : {&layout.trunk, &layout.policy_chain, &layout.value_chain}) {
    for (LayerSpec& layer : *chain) layer.orthogonal_init = config.ortho_init;
  }
  layout.num_parameters = flat.size();
  return layout;
}

QNetworkLayout q_network_layout(const ModelSpec& config) {
  config.validate();
  if (!config.action_space.is_discrete()) {
    throw std::invalid_argument("QNetwork needs a Discrete action space, got " + config.action_space.to_string());
  }
  QNetworkLayout layout;
  layout.obs_size = config.obs_size;
  layout.num_actions = config.action_space.n;
  layout.dueling = config.dueling;
  FlatBuilder flat(layout.parameters);
  const int64_t width = flat.encoder(layout.trunk, "q", config.obs_size, config);
  if (config.dueling) {
    layout.heads.push_back(flat.dense("value_out", width, 1, Activation::kNone, kQOutputGain));
    layout.heads.push_back(flat.dense("advantage_out", width, layout.num_actions, Activation::kNone, kQOutputGain));
  } else {
    layout.heads.push_back(flat.dense("q_out", width, layout.num_actions, Activation::kNone, kQOutputGain));
  }
  layout.num_parameters = flat.size();
  return layout;
}

namespace {
// Throws std::invalid_argument unless the config is valid and its actions are a Box.
void check_box_actions(const ModelSpec& config, const char* network) {
  config.validate();
  if (!config.action_space.is_box()) {
    throw std::invalid_argument(std::string(network) + " needs a Box action space, got " + config.action_space.to_string());
  }
}
}  // namespace

SquashedGaussianLayout squashed_gaussian_layout(const ModelSpec& config) {
  check_box_actions(config, "the squashed-Gaussian policy");
  SquashedGaussianLayout layout;
  layout.obs_size = config.obs_size;
  layout.action_size = config.action_space.size();
  FlatBuilder flat(layout.parameters);
  const int64_t width = flat.encoder(layout.chain, "pi", config.obs_size, config);
  layout.chain.push_back(flat.dense("pi_out", width, 2 * layout.action_size, Activation::kNone, kPolicyOutputGain));
  layout.num_parameters = flat.size();
  return layout;
}

ContinuousQLayout continuous_q_layout(const ModelSpec& config) {
  check_box_actions(config, "the Q(s, a) critic");
  ContinuousQLayout layout;
  layout.obs_size = config.obs_size;
  layout.action_size = config.action_space.size();
  FlatBuilder flat(layout.parameters);
  const int64_t width = flat.encoder(layout.chain, "q", config.obs_size + layout.action_size, config);
  layout.chain.push_back(flat.dense("q_out", width, 1, Activation::kNone, kQOutputGain));
  layout.num_parameters = flat.size();
  return layout;
}

std::vector<float> initial_parameters(const SquashedGaussianLayout& layout, uint64_t seed) {
  std::vector<float> flat(layout.num_parameters, 0.0f);
  Rng rng(seed);
  init_chain(layout.chain, flat, rng);
  return flat;
}

std::vector<float> initial_parameters(const ContinuousQLayout& layout, uint64_t seed) {
  std::vector<float> flat(layout.num_parameters, 0.0f);
  Rng rng(seed);
  init_chain(layout.chain, flat, rng);
  return flat;
}

std::vector<float> initial_parameters(const ActorCriticLayout& layout, uint64_t seed) {
  std::vector<float> flat(layout.num_parameters, 0.0f);
  Rng rng(seed);
  if (layout.log_std) {
    for (size_t i = 0; i < layout.log_std->size; ++i) flat[layout.log_std->offset + i] = static_cast<float>(layout.log_std_init);
  }
  init_chain(layout.trunk, flat, rng);
  init_chain(layout.policy_chain, flat, rng);
  init_chain(layout.value_chain, flat, rng);
  return flat;
}

std::vector<float> initial_parameters(const QNetworkLayout& layout, uint64_t seed) {
  std::vector<float> flat(layout.num_parameters, 0.0f);
  Rng rng(seed);
  init_chain(layout.trunk, flat, rng);
  init_chain(layout.heads, flat, rng);
  return flat;
}

}  // namespace rlx
