#include "native/ppo_objective.h"

#include <algorithm>
#include <cmath>

#include "models/action_sampling.h"

namespace rlx {

namespace {
constexpr double kHalfLog2Pi = 0.91893853320467274178;  // log(2 pi) / 2
}  // namespace

float masked_segment_log_softmax(const float* logits, const uint8_t* mask, const int64_t* categories, int64_t elements,
                                 float* log_p, float* segment_entropy) {
  float entropy = 0.0f;
  for (int64_t e = 0; e < elements; ++e) {
    const int64_t n = categories[e];
    for (int64_t j = 0; j < n; ++j) log_p[j] = mask == nullptr || mask[j] != 0 ? logits[j] : kMaskedLogit;
    float max_logit = log_p[0];
    for (int64_t j = 1; j < n; ++j) max_logit = std::max(max_logit, log_p[j]);
    float sum = 0.0f;
    for (int64_t j = 0; j < n; ++j) sum += std::exp(log_p[j] - max_logit);
    const float log_sum = std::log(sum);
    // A masked logit's p is exp(about -1e8) = 0: it adds 0 * (about -1e8) = 0 to the entropy.
    float segment = 0.0f;
    for (int64_t j = 0; j < n; ++j) {
      log_p[j] = log_p[j] - max_logit - log_sum;
      segment -= std::exp(log_p[j]) * log_p[j];
    }
    segment_entropy[e] = segment;
    entropy += segment;
    logits += n;
    log_p += n;
    if (mask != nullptr) mask += n;
  }
  return entropy;
}

PpoObjectiveStats ppo_objective(const PpoObjectiveBatch& batch, const PpoObjectiveOptions& options,
                                std::vector<float>& scratch, const PpoObjectiveGradients& gradients) {
  const int64_t rows = batch.rows, p = batch.outputs;
  const auto b = static_cast<double>(rows);
  const float* advantage = batch.advantages;

  // Scalars rounded to float32 as LibTorch applies them to float tensors.
  const auto low = static_cast<float>(1.0 - options.clip_param), high = static_cast<float>(1.0 + options.clip_param);
  const auto policy_scale = static_cast<float>(-1.0 / b);
  const auto value_scale = static_cast<float>(2.0 * options.vf_loss_coeff / b);
  const auto entropy_scale = static_cast<float>(options.entropy_coeff / b);
  const auto vf_clip = static_cast<float>(options.vf_clip_param);
  const bool clip_values = options.vf_clip_param > 0.0;

  // Categorical segments: one of P unless given.
  const int64_t elements = !batch.discrete ? 0 : batch.categories != nullptr ? batch.elements : 1;
  const int64_t* categories = batch.categories != nullptr ? batch.categories : &p;

  // Diagonal Gaussian: the state-independent log-std, its exp(-.), and the per-row entropy.
  const float* log_std = batch.log_std;
  std::vector<float>& inv_std = scratch;  // Box: [p] z, then [p] 1 / std; indexed: [p] log p, then [D] segment entropies
  std::vector<double> grad_log_std(batch.discrete ? 0 : static_cast<size_t>(p), 0.0);
  float gaussian_entropy = 0.0f, gaussian_constant = 0.0f;
  if (!batch.discrete) {
    float log_std_sum = 0.0f;
    for (int64_t j = 0; j < p; ++j) log_std_sum += log_std[j];
    gaussian_entropy = log_std_sum + static_cast<float>((0.5 + kHalfLog2Pi) * static_cast<double>(p));
    gaussian_constant = static_cast<float>(kHalfLog2Pi * static_cast<double>(p));
    inv_std.resize(static_cast<size_t>(2 * p));
    for (int64_t j = 0; j < p; ++j) inv_std[static_cast<size_t>(p + j)] = std::exp(-log_std[j]);
  } else {
    inv_std.resize(static_cast<size_t>(p + elements));
  }
  float* log_p = inv_std.data();                   // indexed: this row's log-probs [p]
  float* segment_entropy = inv_std.data() + p;     // indexed: this row's segment entropies [D]

  double policy_sum = 0.0, vf_sum = 0.0, entropy_sum = 0.0, kl_sum = 0.0, clipped_sum = 0.0;
  for (int64_t r = 0; r < rows; ++r) {
    const auto sample = static_cast<size_t>(batch.order[r]);
    const float* out = batch.policy_out + r * p;
    float* grad = gradients.policy_out + r * p;
    float log_prob, entropy;
    float* z = batch.discrete ? nullptr : inv_std.data();  // Box: z of this row in [0, p)
    const uint8_t* mask = batch.masks != nullptr ? batch.masks + sample * static_cast<size_t>(p) : nullptr;
    const int64_t* indices = batch.discrete ? batch.action_indices + sample * static_cast<size_t>(elements) : nullptr;
    if (batch.discrete) {
      entropy = masked_segment_log_softmax(out, mask, categories, elements, log_p, segment_entropy);
      log_prob = 0.0f;
      for (int64_t e = 0, offset = 0; e < elements; offset += categories[e++]) log_prob += log_p[offset + indices[e]];
    } else {
      const float* action = batch.action_values + sample * static_cast<size_t>(p);
      float sum = 0.0f;
      for (int64_t j = 0; j < p; ++j) {
        z[j] = (action[j] - out[j]) * inv_std[static_cast<size_t>(p + j)];
        sum += z[j] * z[j] * -0.5f - log_std[j];
      }
      log_prob = sum - gaussian_constant;
      entropy = gaussian_entropy;
    }

    // Clipped surrogate: where A r is the minimum, d/d log_prob = -A r / B; else 0.
    const float log_ratio = log_prob - batch.old_log_probs[sample];
    const float ratio = std::exp(log_ratio);
    const float clipped_ratio = std::min(std::max(ratio, low), high);
    const float unclipped_objective = ratio * advantage[r];
    const float clipped_objective = clipped_ratio * advantage[r];
    const bool unclipped_is_min = unclipped_objective <= clipped_objective;
    const float grad_log_prob = unclipped_is_min ? unclipped_objective * policy_scale : 0.0f;
    policy_sum -= unclipped_is_min ? unclipped_objective : clipped_objective;
    kl_sum += ratio - log_ratio;
    clipped_sum += clipped_ratio != ratio ? 1.0 : 0.0;
    entropy_sum += entropy;

    // Value loss (e^2, or max(e^2, e_clipped^2) with the clip passing no gradient).
    const float error = batch.values[r] - batch.returns[sample];
    const float squared = error * error;
    float value_grad = error * value_scale;
    float vf_term = squared;
    if (clip_values) {
      const float old_value = batch.old_values[sample];
      const float delta = batch.values[r] - old_value;
      const float clipped_error = (old_value + std::min(std::max(delta, -vf_clip), vf_clip)) - batch.returns[sample];
      const float clipped_squared = clipped_error * clipped_error;
      const bool unclipped_is_max = squared >= clipped_squared || std::fabs(delta) <= vf_clip;
      vf_term = unclipped_is_max ? squared : clipped_squared;
      if (!unclipped_is_max) value_grad = 0.0f;
    }
    vf_sum += vf_term;
    gradients.values[r] = value_grad;

    // Into the policy outputs (learner/actor_critic_backprop.h's formulas).
    if (batch.discrete) {
      // Per segment: (onehot(a) - p) d/d log_prob, and -p (log p + H_segment) d/d entropy.
      for (int64_t e = 0, offset = 0; e < elements; offset += categories[e++]) {
        for (int64_t j = offset; j < offset + categories[e]; ++j) {
          grad[j] = ((log_p[j] + segment_entropy[e]) * entropy_scale - grad_log_prob) * std::exp(log_p[j]);
        }
        grad[offset + indices[e]] += grad_log_prob;
      }
      // A masked logit was replaced by a constant: no gradient reaches it.
      if (mask != nullptr) {
        for (int64_t j = 0; j < p; ++j) grad[j] = mask[j] != 0 ? grad[j] : 0.0f;
      }
    } else {
      for (int64_t j = 0; j < p; ++j) {
        grad[j] = z[j] * inv_std[static_cast<size_t>(p + j)] * grad_log_prob;
        grad_log_std[static_cast<size_t>(j)] += static_cast<double>((z[j] * z[j] - 1.0f) * grad_log_prob);
      }
    }
  }
  if (!batch.discrete) {
    for (int64_t j = 0; j < p; ++j) {
      gradients.log_std[j] =
          static_cast<float>(grad_log_std[static_cast<size_t>(j)]) - static_cast<float>(options.entropy_coeff);
    }
  }
  PpoObjectiveStats stats;
  stats.policy_loss = policy_sum / b;
  stats.vf_loss = vf_sum / b;
  stats.entropy = entropy_sum / b;
  stats.approx_kl = kl_sum / b - 1.0;
  stats.clip_fraction = clipped_sum / b;
  return stats;
}

}  // namespace rlx
