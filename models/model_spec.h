// ModelSpec: the one description of a policy's networks. Every consumer builds from it: the
// workers' inference (models/rollout_policy.h), both learner back ends (learner/policy_networks.h
// with LibTorch, native/ torch-free), `rlx evaluate`, `rlx export` and the .rlxp readers
// (models/policy.h, python/rlx_policy.py). models/network_layout.h turns a spec into layers and a
// flat parameter layout. It is built from the typed config (algorithms/model_from_config.h) and
// travels in one serialised form (models/model_spec_json.h): in the workers' Welcome, in a
// checkpoint's manifest and in the .rlxp header. Torch-free.
//
// Its parts, as RLlib's RLModule names them: an encoder (an MLP of hidden_sizes and activation,
// or a kind registered in models/layer_kinds.h; one copy per head, or shared), heads (the policy's logits or means and the value;
// Q-values, plain or dueling; SAC's squashed Gaussian and its Q(s, a) critics) and the
// initialisation; between encoder and heads an optional recurrent core (LSTM or GRU), and before
// each actor-critic output its own dense head layers (RLlib's head_fcnet_hiddens, SB3's net_arch
// pi/vf after RecurrentPPO's LSTM).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/env_spec.h"
#include "core/observation_layout.h"
#include "core/space.h"

namespace rlx {

// Observation normalisation, the same on workers and learners:
// clip((obs - mean) / sqrt(var + kObsNormEpsilon), -kObsNormClip, kObsNormClip).
constexpr double kObsNormEpsilon = 1e-8;
constexpr double kObsNormClip = 10.0;

// One convolution of the "cnn" encoder (models/cnn_encoder.h): out_channels filters of
// kernel x kernel, stride apart, no padding, followed by ReLU.
struct ConvFilter {
  int64_t out_channels = 0;
  int64_t kernel = 0;
  int64_t stride = 1;

  bool operator==(const ConvFilter& other) const {
    return out_channels == other.out_channels && kernel == other.kernel && stride == other.stride;
  }
};

// The most stacked cells a recurrent core may have.
constexpr int64_t kMaxCoreLayers = 8;

// Which networks a model has and how a worker acts with them.
enum class ModelKind {
  kActorCritic,       // PPO, APPO: policy and value networks; samples (or argmax / mean) actions
  kQNetwork,          // DQN: Q(s, .); epsilon-greedy actions
  kSquashedGaussian,  // SAC: tanh-squashed Gaussian policy (workers) and Q(s, a) critics (learner)
};

// "actor_critic", "q_network" or "squashed_gaussian".
const char* model_kind_name(ModelKind kind);
// The kind of a name model_kind_name gives; nullopt for anything else.
std::optional<ModelKind> parse_model_kind(const std::string& name);

// A policy's networks. Fields a kind does not use are carried but ignored.
struct ModelSpec {
  ModelKind kind = ModelKind::kActorCritic;
  int64_t obs_size = 0;                      // O: the network's input width, the observation flattened
                                             // (core/observation_layout.h)
  // The observation space; unset (a default Space) means a float32 Box of obs_size (a spec of
  // an older rlx, or one built by hand for tests).
  Space observation_space;
  bool action_mask = false;                  // observations carry a mask of legal actions
  Space action_space;                        // Discrete(n), MultiDiscrete, MultiBinary, or Box (A = prod(shape))
  // Encoder: "mlp", "cnn" (models/cnn_encoder.h), or a kind registered in models/layer_kinds.h.
  std::string encoder = "mlp";
  std::vector<ConvFilter> conv_filters;      // "cnn": its convolutions in order (empty for other encoders)
  std::vector<int64_t> hidden_sizes{64, 64}; // hidden layer widths (cnn: the dense layers after the
                                             // convolutions); empty means a linear model
  std::string activation = "tanh";           // "tanh" or "relu"
  bool shared_trunk = false;                 // kActorCritic: one encoder for the policy and value heads
  // Recurrent core (models/recurrent_layers.h), between the encoder and the heads: "" (none),
  // "lstm" or "gru"; core_layers stacked cells of core_size units. kActorCritic only: with
  // shared_trunk one core, else one for the policy and one for the value (SB3's RecurrentPPO).
  std::string core;
  int64_t core_size = 64;
  int64_t core_layers = 1;
  // Heads.
  // kActorCritic: dense layers of these widths with `activation` before pi_out and, separately,
  // before vf_out ("pi_head_i", "vf_head_i"), after the encoder and core (shared trunk or not);
  // empty: the outputs read the encoder or core directly.
  std::vector<int64_t> head_sizes;
  double log_std_init = 0.0;                 // kActorCritic with Box actions: initial state-independent log-std
  // kActorCritic with Box actions: generalized state-dependent exploration (gSDE, Raffin et al.
  // 2021; SB3's use_sde): the log-std is a matrix [L, A] over the policy's latent features (pi_out's
  // input, L wide), the action mean + latent . E with E ~ N(0, exp(log_std)^2) redrawn every
  // sde_sample_freq steps of a fragment (<= 0: at each fragment's start only).
  bool sde = false;
  int64_t sde_sample_freq = -1;
  bool dueling = false;                      // kQNetwork: value + advantage - mean(advantage) heads
  // Initialisation.
  bool ortho_init = true;                    // kActorCritic: orthogonal weights with PPO's gains, zero
                                             // biases; false: PyTorch's nn.Linear default (SB3's ortho_init)

  // True when the model has a recurrent core: its policies carry a state per env.
  bool recurrent() const { return !core.empty(); }

  // A spec of this kind with the observation space, mask and action space taken from an env
  // spec (obs_size its flat size), other fields default.
  static ModelSpec for_env(const EnvSpec& spec, ModelKind kind = ModelKind::kActorCritic);

  // The observation space: observation_space, or Box(-inf, inf, (obs_size,)) when it is unset.
  Space input_space() const;
  // Where each part of an observation lies and how it flattens into the network's input.
  ObservationLayout observation_layout() const;

  // Number of policy outputs: n logits for Discrete, the sum of nvec for MultiDiscrete, 2 per
  // element for MultiBinary (each bit a two-way categorical), A means for Box.
  int64_t policy_output_size() const;
  // True for actions drawn as categorical indices (Discrete, MultiDiscrete, MultiBinary).
  bool indexed_actions() const { return !action_space.is_box(); }
  // The categorical sizes of an indexed action, one per element: {n}, nvec, or 2 per bit.
  std::vector<int64_t> action_categories() const;

  // Throws std::invalid_argument naming what is wrong (size, space, hidden or head width,
  // activation, head layers on a kind other than kActorCritic, or an action space the kind
  // cannot act in).
  void validate() const;

  // Throws std::invalid_argument unless an env of this spec fits the model: the same observation
  // space (or, for a spec without one, flat size), mask and action space; `who` names the env's
  // side in the message.
  void check_env(const EnvSpec& env, const std::string& who) const;

  // Equal when they build the same networks (float32 Box bounds aside) and act alike.
  bool operator==(const ModelSpec& other) const;
  bool operator!=(const ModelSpec& other) const { return !(*this == other); }
};

}  // namespace rlx
