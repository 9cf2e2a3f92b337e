// The learner's LibTorch back end of the networks in models/network_layout.h: ActorCritic (PPO)
// and QNetwork (DQN), built layer by layer from their layouts, so Module::parameters() order is
// the layout's flat order; the action distributions over their outputs; and flat float32
// parameter vectors (the wire form of weights). Workers run the same networks with the
// torch-free kernel of models/network_kernel.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <ATen/core/Generator.h>
#include <torch/nn/cloneable.h>
#include <torch/nn/modules/linear.h>
#include <torch/types.h>

#include "learner/torch_layers.h"
#include "models/model_spec.h"
#include "models/network_layout.h"

namespace rlx {

// Sets LibTorch's intra-op thread count for this process (torch::set_num_threads) and, when
// OpenBLAS is loaded, its thread pool too; returns the previous LibTorch count. A learner on
// small networks runs best with 1: tiny GEMMs do not gain from threads.
int set_inference_threads(int num_threads);

// ---- flat parameters (shared by every model) ----

// Number of scalars over all parameters of a module.
int64_t num_flat_parameters(const torch::nn::Module& module);
// The parameters' names in flat order ("pi_0.weight", ...).
std::vector<std::string> flat_parameter_names(const torch::nn::Module& module);
// Copies all parameters (any device or dtype) into out as float32; count must equal num_flat_parameters.
void copy_flat_parameters(const torch::nn::Module& module, float* out, size_t count);
// All parameters as one float32 vector in flat order.
std::vector<float> flat_parameters(const torch::nn::Module& module);
// Overwrites all parameters from count float32 values; throws std::invalid_argument on a count mismatch.
void load_flat_parameters(torch::nn::Module& module, const float* params, size_t count);
// Makes every parameter of a module (already on `device`) a view of one new flat float32 buffer
// on `device`, values kept, in flat order; returns the buffer.
torch::Tensor flatten_parameters(torch::nn::Module& module, torch::Device device);
// Makes every parameter's gradient a view of one new zeroed buffer shaped like flat_params (so
// backward accumulates into it in place); returns the buffer.
torch::Tensor flatten_gradients(torch::nn::Module& module, const torch::Tensor& flat_params);

// A CPU generator for reproducible sampling.
torch::Generator make_cpu_generator(uint64_t seed);

// clip((obs - mean) / sqrt(var + 1e-8), -10, 10) with mean and var of shape [O]; the learner's
// twin of what RolloutPolicy applies on workers.
torch::Tensor normalize_observations(const torch::Tensor& obs, const torch::Tensor& mean, const torch::Tensor& var);

// ---- distributions ----

// A batch of action distributions: Categorical over logits [B, P], cut into one segment per
// action element (sizes `categories`: {n} for Discrete, nvec for MultiDiscrete, 2 per bit for
// MultiBinary) with an optional mask of legal logits; or a diagonal Gaussian with mean [B, A]
// and a log-std broadcastable to it ([A] or [B, A]). A masked logit is kMaskedLogit
// (models/action_sampling.h) before its segment's softmax, as the workers mask it: its action
// gets probability 0, adds 0 to the entropy and passes no gradient to the logit. log_prob sums
// the segments' log-probs and entropy their entropies (SB3's MultiCategorical).
class ActionDistribution {
 public:
  // Categorical from unnormalised logits [B, P]: segments of `categories` (empty: one of P;
  // std::invalid_argument unless they sum to P) and a mask [B, P] (bool or uint8, nonzero where
  // legal; undefined: none).
  static ActionDistribution categorical(const torch::Tensor& logits, std::vector<int64_t> categories = {},
                                        const torch::Tensor& mask = torch::Tensor());
  // Diagonal Gaussian from mean [B, A] and log_std [A] or [B, A].
  static ActionDistribution diagonal_gaussian(const torch::Tensor& mean, const torch::Tensor& log_std);

  bool discrete() const { return discrete_; }
  // Draws actions: int64 indices [B] (one segment) or [B, D], or float [B, A]; an undefined
  // generator uses the global one (seeded by torch::manual_seed). No gradient flows through the sample.
  torch::Tensor sample(const torch::Generator& generator = torch::Generator()) const;
  // log pi(a) per row [B] of indices [B] or [B, D] (any integer dtype) or values [B, A].
  torch::Tensor log_prob(const torch::Tensor& actions) const;
  // Entropy per row [B] (the sum of the segments' entropies).
  torch::Tensor entropy() const;
  // Categorical: [B, P], each logit's place holding its segment's entropy (the entropy's
  // gradient, -p (log p + H_segment), needs it).
  torch::Tensor segment_entropies() const;
  // Categorical: the logits the actions [B] or [B, D] pick, as column indices [B, D] into [B, P].
  torch::Tensor logit_indices(const torch::Tensor& actions) const;
  // The most likely action: argmax per segment, [B] (one segment) or [B, D] int64, or the mean [B, A].
  torch::Tensor deterministic() const;
  // KL(this || other) per row [B] (summed over segments); std::invalid_argument when the kinds,
  // shapes or segments differ.
  torch::Tensor kl_divergence_to(const ActionDistribution& other) const;
  // Categorical: normalised log-probabilities [B, P] per segment. Gaussian: the mean [B, A].
  const torch::Tensor& log_probs_or_mean() const { return discrete_ ? log_probs_ : mean_; }
  // Categorical: the mask as given (undefined when none).
  const torch::Tensor& mask() const { return mask_; }

 private:
  bool discrete_ = true;
  std::vector<int64_t> categories_;  // categorical: segment sizes, summing to P
  torch::Tensor log_probs_;  // categorical: per-segment log_softmax(masked logits)
  torch::Tensor mask_;       // categorical: [B, P] bool, or undefined
  torch::Tensor mean_;       // gaussian
  torch::Tensor log_std_;    // gaussian, broadcast to mean's shape
};

// ---- models ----

// One layer of a chain on LibTorch: a Linear (dense) or a RegisteredLayer (a registered kind).
struct TorchChainLayer {
  torch::nn::Linear linear{nullptr};
  RegisteredLayer registered{nullptr};
};

// Outputs of ActorCritic::forward.
struct PolicyOutput {
  // logits [B, P] (indexed actions) or mean [B, A] (Box); with gSDE [B, A + L], the means, then
  // the latent features (detached: gSDE's noise does not train them, SB3's learn_features=False)
  torch::Tensor policy;
  torch::Tensor value;   // V(s) [B]
};

// A recurrent ActorCritic's input besides the observations: B sequences of T steps, rows b-major
// (row b * T + t).
struct SequenceInput {
  int64_t num_steps = 1;        // T
  torch::Tensor initial_state;  // [B, S] the model state (ActorCriticLayout::state_size) before step 0
  torch::Tensor resets;         // [B, T] 1 where an episode starts at step t (its state zeroed first); undefined: none
  bool record_states = false;   // fill SequenceOutput::states_after
};

// Outputs of ActorCritic::forward_sequences.
struct SequenceOutput {
  torch::Tensor policy;        // [B * T, P] (gSDE: [B * T, A + L], as PolicyOutput::policy)
  torch::Tensor value;         // [B * T]
  torch::Tensor final_state;   // [B, S] after step T - 1
  torch::Tensor states_after;  // [B * T, S] after each step, when recorded
};

// Policy and value networks (separate by default, or one shared trunk with two heads), MLPs
// with orthogonal init: hidden gain sqrt(2), policy output 0.01, value output 1, biases 0.
// Box actions add a state-independent learned log_std [A] initialised to config.log_std_init,
// or with gSDE a log_std [L, A] over the policy's latent features: the action's std is then
// sqrt(latent^2 . exp(log_std)^2 + kSdeVarianceEpsilon) per row.
class ActorCritic : public torch::nn::Cloneable<ActorCritic> {
 public:
  // Builds and initialises the networks; throws std::invalid_argument on a bad config.
  explicit ActorCritic(ModelSpec config);

  // (Re)creates and initialises every layer (Cloneable's hook; clone() calls it).
  void reset() override;

  // Policy output and value for observations [B, O] (std::logic_error for a recurrent model).
  PolicyOutput forward(const torch::Tensor& obs);
  // A recurrent model (or any) over sequences: observations [B * T, O], rows b-major.
  SequenceOutput forward_sequences(const torch::Tensor& obs, const SequenceInput& input);
  // True when the model has a recurrent core (state_size floats per sequence).
  bool recurrent() const { return layout_.recurrent(); }
  int64_t state_size() const { return layout_.state_size; }
  // Policy output only: logits [B, n] or mean [B, A].
  torch::Tensor policy_forward(const torch::Tensor& obs);
  // Value only [B].
  torch::Tensor value_forward(const torch::Tensor& obs);
  // The action distribution for a policy output of this model: categorical over the action's
  // segments (ModelSpec::action_categories) with an optional mask [B, P], or Gaussian (gSDE's
  // std from the output's latent columns). constant: no gradient reaches the log-std.
  ActionDistribution distribution(const torch::Tensor& policy_output, const torch::Tensor& mask = torch::Tensor(),
                                  bool constant = false) const;

  const ModelSpec& config() const { return config_; }
  const ActorCriticLayout& layout() const { return layout_; }
  // True for indexed actions (Discrete, MultiDiscrete, MultiBinary): categorical logits.
  bool discrete() const { return config_.indexed_actions(); }
  // The learned log-std [A] (gSDE: [L, A]); undefined for Discrete actions.
  const torch::Tensor& log_std() const { return log_std_; }

  // Flat parameters in the order documented at the top of this file.
  int64_t num_parameters() const { return num_flat_parameters(*this); }
  std::vector<float> flat_parameters() const { return rlx::flat_parameters(*this); }
  void load_flat_parameters(const float* params, size_t count) { rlx::load_flat_parameters(*this, params, count); }

 private:
  ModelSpec config_;
  ActorCriticLayout layout_;
  std::vector<TorchChainLayer> trunk_;         // empty unless shared_trunk
  std::vector<TorchChainLayer> policy_chain_;  // encoder layers, then pi_out
  std::vector<TorchChainLayer> value_chain_;   // encoder layers, then vf_out
  torch::Tensor log_std_;
  // gSDE: the policy chain cut before pi_out (views of policy_chain_'s modules).
  std::vector<TorchChainLayer> policy_body_;
  LayerChain policy_body_layout_;

  // The policy chain's output from the policy's latent features (pi_out's input): pi_out's
  // output, with gSDE the latent appended (PolicyOutput::policy).
  torch::Tensor policy_from_latent(const torch::Tensor& latent) const;
};

// Q(s, .) for Discrete actions: an MLP to n action values, optionally with dueling heads
// Q = V + A - mean(A). Orthogonal init: hidden gain sqrt(2), output heads gain 1, biases 0.
class QNetwork : public torch::nn::Cloneable<QNetwork> {
 public:
  // Throws std::invalid_argument on a bad config or a non-Discrete action space.
  explicit QNetwork(ModelSpec config);

  // (Re)creates and initialises every layer (Cloneable's hook; clone() calls it).
  void reset() override;

  // Action values [B, n] for observations [B, O].
  torch::Tensor forward(const torch::Tensor& obs);

  const ModelSpec& config() const { return config_; }
  const QNetworkLayout& layout() const { return layout_; }
  int64_t num_actions() const { return config_.action_space.n; }

  // Flat parameters in the order documented at the top of this file.
  int64_t num_parameters() const { return num_flat_parameters(*this); }
  std::vector<float> flat_parameters() const { return rlx::flat_parameters(*this); }
  void load_flat_parameters(const float* params, size_t count) { rlx::load_flat_parameters(*this, params, count); }

 private:
  ModelSpec config_;
  QNetworkLayout layout_;
  std::vector<TorchChainLayer> trunk_;
  std::vector<TorchChainLayer> heads_;  // {q_out} or {value_out, advantage_out}, dense
};

}  // namespace rlx
