// The layers of each network a ModelSpec (models/model_spec.h) describes: its layers in order,
// their kinds, widths, activations and initial gains, the parameters' names and shapes, and where
// each lies in the flat float32 vector that goes to workers. Two back ends are built from it: the
// learner's LibTorch modules (learner/policy_networks.h) and the torch-free inference kernel
// (models/network_kernel.h). Layers are "dense" or of a kind registered in
// models/layer_kinds.h. Torch-free.
//
// Flat order (each tensor row-major, weights [out, in]):
//   ActorCritic: ["log_std" [A], Box only; [L, A] with gSDE, L = pi_out's input width], then the shared trunk "trunk_i" (when shared_trunk),
//                then the policy chain "pi_i".. "pi_out", then the value chain "vf_i".. "vf_out";
//                a recurrent core's layers ("<chain>_lstm_j" or "<chain>_gru_j") follow the
//                encoder's in the trunk, or in both chains when there is no trunk; head layers
//                ("pi_head_j", "vf_head_j", ModelSpec::head_sizes) come just before pi_out and
//                vf_out, in each chain whether or not there is a trunk.
//   QNetwork:    "q_i" per hidden layer, then "q_out" or, when dueling, "value_out" and
//                "advantage_out".
//   SquashedGaussian (SAC's policy): "pi_i" per hidden layer, then "pi_out" [2A].
//   ContinuousQ (one of SAC's critics): "q_i" per hidden layer, then "q_out" [1].
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/model_spec.h"

namespace rlx {

class Rng;

// Orthogonal-init gains (PPO implementation details): hidden layers, policy output, value output.
constexpr double kHiddenGain = 1.4142135623730951;  // sqrt(2)
constexpr double kPolicyOutputGain = 0.01;
constexpr double kValueOutputGain = 1.0;
constexpr double kQOutputGain = 1.0;

// What follows a dense layer's affine map.
enum class Activation { kNone, kTanh, kRelu };

// "tanh" or "relu" as an Activation; throws std::invalid_argument naming anything else.
Activation parse_activation(const std::string& name);

// One named tensor of the flat vector.
struct ParameterSpec {
  std::string name;            // "pi_0.weight", "log_std", ...
  std::vector<int64_t> shape;  // [out, in], [out] or [A]
  size_t offset = 0;           // first element in the flat vector
  size_t size = 0;             // number of elements
};

// The kind of every dense layer: y = activation(x W^T + b).
constexpr const char* kDenseLayer = "dense";

// One layer: a dense one, y = activation(x W^T + b) with W [out, in] and b [out] in the flat
// vector, or one of a registered kind (models/layer_kinds.h), y = activation(kind's map of x).
struct LayerSpec {
  std::string kind = kDenseLayer;
  std::string name;  // its parameters are name.weight and name.bias (dense) or name.<kind's names>
  int64_t in = 0;
  int64_t out = 0;
  // What `in` alone cannot say about a registered kind (conv2d: height, width, channels, kernel,
  // ...; models/conv2d_layer.h); empty for dense layers.
  std::map<std::string, int64_t> attributes;
  Activation activation = Activation::kNone;
  double init_gain = 1.0;  // dense (and conv2d): orthogonal init gain of W (b starts at zero)
  bool orthogonal_init = true;  // dense: false: W and b ~ U(-1/sqrt(in), 1/sqrt(in)), PyTorch's nn.Linear default
  std::vector<ParameterSpec> parameters;  // every kind, dense too (weight, bias), in flat order
  // A recurrent layer (models/recurrent_layers.h): where its state starts in a row of the model's
  // state (every recurrent layer of the model, in flat order); 0 for other layers.
  int64_t state_offset = 0;

  bool dense() const { return kind == kDenseLayer; }
  // A dense layer's W [out, in] and b [out]: where they start in the flat vector.
  size_t weight_offset() const { return parameters.at(0).offset; }
  size_t bias_offset() const { return parameters.at(1).offset; }
};

// Layers applied one after another; empty is the identity.
using LayerChain = std::vector<LayerSpec>;

// True when every layer of the chains is dense (what the hand-written backward passes handle).
bool all_dense(const LayerChain& chain);

// Width of a chain's output, given the width of its input.
int64_t chain_output_size(const LayerChain& chain, int64_t input_size);

// Policy and value networks: policy = policy_chain(trunk(obs)), value = value_chain(trunk(obs)).
// With separate networks the trunk is empty; with a shared trunk the chains are the two heads.
struct ActorCriticLayout {
  int64_t obs_size = 0;
  int64_t policy_outputs = 0;  // logits (ModelSpec::policy_output_size) or A means (Box)
  bool discrete = true;        // categorical logits (Discrete, MultiDiscrete, MultiBinary actions)
  std::optional<ParameterSpec> log_std;  // Box actions: state-independent log-std [A], or gSDE's [L, A]
  bool sde = false;                      // gSDE (ModelSpec::sde): log_std is [latent_size, A]
  int64_t latent_size = 0;               // pi_out's input width (the policy's latent features)
  double log_std_init = 0.0;
  LayerChain trunk;
  LayerChain policy_chain;  // ends with the head layers "pi_head_j", if any, and "pi_out"
  LayerChain value_chain;   // ends with the head layers "vf_head_j", if any, and "vf_out" (1 output)
  std::vector<ParameterSpec> parameters;  // flat order
  size_t num_parameters = 0;
  // Floats of recurrent state per env: the states of the recurrent layers ("trunk_lstm_0", then
  // "pi_lstm_0".., then "vf_lstm_0"..), each at its LayerSpec::state_offset; 0 without a core.
  int64_t state_size = 0;
  bool recurrent() const { return state_size > 0; }
};

// Q(s, .): an MLP trunk, then one head "q_out" or dueling heads Q = V + A - mean(A).
struct QNetworkLayout {
  int64_t obs_size = 0;
  int64_t num_actions = 0;
  bool dueling = false;
  LayerChain trunk;
  LayerChain heads;  // {q_out} or {value_out, advantage_out}, each reading the trunk's output
  std::vector<ParameterSpec> parameters;  // flat order
  size_t num_parameters = 0;
};

// SAC's policy: pi_out gives A means, then A raw log-stds, clamped to [kSacLogStdMin,
// kSacLogStdMax] wherever they are used; the action is tanh(mean + std * z) in [-1, 1]^A
// (scaled to the Box's bounds only on its way to the env).
struct SquashedGaussianLayout {
  int64_t obs_size = 0;
  int64_t action_size = 0;  // A
  LayerChain chain;         // ends with "pi_out" (2A outputs)
  std::vector<ParameterSpec> parameters;  // flat order
  size_t num_parameters = 0;
};

// One of SAC's critics: Q(s, a) = chain([obs, a]) with a in [-1, 1]^A, one output.
struct ContinuousQLayout {
  int64_t obs_size = 0;
  int64_t action_size = 0;
  LayerChain chain;  // first layer reads O + A inputs; ends with "q_out" (1 output)
  std::vector<ParameterSpec> parameters;  // flat order
  size_t num_parameters = 0;
};

// The clamp of SAC's log-stds (SB3's and the SAC paper code's).
constexpr double kSacLogStdMin = -20.0;
constexpr double kSacLogStdMax = 2.0;

// The ActorCritic for a config; throws std::invalid_argument on a bad config.
ActorCriticLayout actor_critic_layout(const ModelSpec& config);
// The QNetwork for a config; throws std::invalid_argument on a bad config or Box actions.
QNetworkLayout q_network_layout(const ModelSpec& config);

// SAC's policy and critic for a config; throw std::invalid_argument on a bad config or Discrete actions.
SquashedGaussianLayout squashed_gaussian_layout(const ModelSpec& config);
ContinuousQLayout continuous_q_layout(const ModelSpec& config);

// weight [out, in] = gain * orthonormal rows (out <= in) or columns (out > in): a Gaussian matrix
// orthonormalised by modified Gram-Schmidt, the draws from rng.
void orthogonal_fill(float* weight, int64_t out, int64_t in, double gain, Rng& rng);
// PyTorch's nn.Linear default (kaiming_uniform_ with a = sqrt(5)): weight [out, in] and bias [out]
// ~ U(-1/sqrt(in), 1/sqrt(in)), the weight drawn first.
void fan_in_uniform_fill(float* weight, float* bias, int64_t out, int64_t in, Rng& rng);

// Freshly initialised flat parameters: orthogonal weights with each layer's gain (a Gaussian
// matrix orthonormalised by Gram-Schmidt) and zero biases, or, for a layer without
// orthogonal_init, PyTorch's default uniform draws; log_std at its init; seeded, torch-free.
std::vector<float> initial_parameters(const ActorCriticLayout& layout, uint64_t seed);
std::vector<float> initial_parameters(const QNetworkLayout& layout, uint64_t seed);
std::vector<float> initial_parameters(const SquashedGaussianLayout& layout, uint64_t seed);
std::vector<float> initial_parameters(const ContinuousQLayout& layout, uint64_t seed);

}  // namespace rlx
