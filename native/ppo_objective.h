// The native learner's PPO objective for one minibatch, given the network's outputs: the
// clipped surrogate, the (optionally clipped) value loss and the entropy bonus of
// learner/ppo_loss.h (the same formulas and float32 rounding), with their gradients with respect
// to the policy outputs (logits or Gaussian means), the values and the Gaussian log-std.
// Indexed actions are learner/policy_networks.h's ActionDistribution: one categorical per action
// element over its segment of the logits, masked logits kMaskedLogit before the softmax and
// given no gradient; log-probs and entropies summed over the segments.
// tests/native/ppo_objective_test.cc holds it to LibTorch autograd through ppo_loss on random
// inputs. Torch-free.
#pragma once

#include <cstdint>
#include <vector>

namespace rlx {

struct PpoObjectiveOptions {
  double clip_param = 0.2;
  double vf_clip_param = 0.0;  // 0: unclipped value loss
  double vf_loss_coeff = 0.5;
  double entropy_coeff = 0.0;
};

// One minibatch: the network's outputs per row, and its samples' columns, read at order[r].
struct PpoObjectiveBatch {
  int64_t rows = 0;
  int64_t outputs = 0;              // P: logits (indexed actions) or A means (Box)
  bool discrete = true;             // indexed actions: categorical logits
  const int64_t* categories = nullptr;  // indexed: [elements] segment sizes summing to P; null: one segment of P
  int64_t elements = 1;                 // D: segments (indices per action)
  const float* policy_out = nullptr;  // [rows, P]
  const float* log_std = nullptr;     // Box: [P], the state-independent log-std
  const float* values = nullptr;      // [rows] V(s)
  const float* advantages = nullptr;  // [rows], already normalised when normalising
  const int64_t* order = nullptr;     // [rows] each row's sample index into the columns below
  const int64_t* action_indices = nullptr;  // indexed: [samples, D]
  const uint8_t* masks = nullptr;           // indexed: [samples, P] nonzero where legal; null: no mask
  const float* action_values = nullptr;     // Box: [samples, P]
  const float* old_log_probs = nullptr;     // [samples]
  const float* returns = nullptr;           // [samples]
  const float* old_values = nullptr;        // [samples] (value clipping)
};

// Where the gradients of the total loss go.
struct PpoObjectiveGradients {
  float* policy_out = nullptr;  // [rows, P], overwritten
  float* values = nullptr;      // [rows], overwritten
  float* log_std = nullptr;     // Box: [P], overwritten (entropy term included); unused for Discrete
};

// Means over the minibatch, in learner/ppo_loss.h's PpoLossStat order.
struct PpoObjectiveStats {
  double policy_loss = 0, vf_loss = 0, entropy = 0, approx_kl = 0, clip_fraction = 0;
};

// Per segment of logits[0..P) (sizes categories[0..elements), summing to P), the log-softmax
// into log_p[0..P) with the logits a mask forbids (mask[j] == 0; mask null: none) taken as
// kMaskedLogit; each segment's entropy into segment_entropy[0..elements). Returns the entropy,
// their float32 sum.
float masked_segment_log_softmax(const float* logits, const uint8_t* mask, const int64_t* categories, int64_t elements,
                                 float* log_p, float* segment_entropy);

// Evaluates the objective and writes its gradients; `scratch` is reused between calls.
PpoObjectiveStats ppo_objective(const PpoObjectiveBatch& batch, const PpoObjectiveOptions& options,
                                std::vector<float>& scratch, const PpoObjectiveGradients& gradients);

}  // namespace rlx
