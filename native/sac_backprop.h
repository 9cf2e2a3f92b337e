// SacBackprop: SAC's two losses and their hand-written gradients for one gradient step, on a
// replay batch and given standard normal draws (so tests can check them against LibTorch's
// autograd with the same draws). Torch-free; the products are native/chain_backprop.h's.
//
// With the policy's sample a = tanh(u), u = mean + std z (std = exp(clamp(log_std, -20, 2))) and
// log pi(a|s) = sum_j [-z_j^2 / 2 - log std_j - log(2 pi) / 2 - log(1 - tanh(u_j)^2)]:
//   critic loss = 0.5 mean_b (Q1(s, a_b) - y)^2 + 0.5 mean_b (Q2(s, a_b) - y)^2,
//                 y = r + gamma (1 - terminated) (min_i Qtarget_i(s', a') - alpha log pi(a'|s')),
//                 a' ~ pi(.|s') (y is a constant: no gradient flows into it);
//   actor loss  = mean_b (alpha log pi(a|s) - min_i Q_i(s, a)), a ~ pi(.|s) reparameterised
//                 (the gradient flows through a and log pi into the policy, not into the critics).
// Their gradients: d log pi / d u_j = 2 tanh(u_j); d a_j / d u_j = 1 - a_j^2; d u_j / d mean_j = 1;
// d u_j / d log_std_j = std_j z_j, and d log pi / d log_std_j gets -1 directly; a clamped log-std
// passes no gradient.
#pragma once

#include <cstdint>
#include <vector>

#include "models/network_layout.h"
#include "native/chain_backprop.h"
#include "native/continuous_replay.h"

namespace rlx {

// Statistics of one step's losses.
struct SacStepStats {
  double critic_loss = 0.0;
  double actor_loss = 0.0;
  double q_mean = 0.0;          // mean of Q1(s, a) over the batch
  double log_prob_mean = 0.0;   // mean log pi(a|s) of the policy's sample on s (entropy: its negative)
};

class SacBackprop {
 public:
  // Throws std::invalid_argument when the layouts disagree on observation or action size.
  SacBackprop(SquashedGaussianLayout actor, ContinuousQLayout critic);

  // The critic loss at `critics` ([Q1 | Q2], each critic's num_parameters), with targets
  // `targets` (same layout) and the policy `actor` sampling a' with next_noise [B, A]; writes its
  // gradient w.r.t. critics into critic_grads [2 Q] and returns the loss (stats.q_mean too).
  double critic_gradients(const float* actor, const float* critics, const float* targets, double alpha, double gamma,
                          const ContinuousSample& batch, const float* next_noise, float* critic_grads,
                          SacStepStats& stats);

  // The actor loss at `actor` with the policy's sample on s from noise [B, A]; writes its
  // gradient w.r.t. actor into actor_grads and returns the loss (stats.log_prob_mean too).
  double actor_gradients(const float* actor, const float* critics, double alpha, const ContinuousSample& batch,
                         const float* noise, float* actor_grads, SacStepStats& stats);

  const SquashedGaussianLayout& actor_layout() const { return actor_layout_; }
  const ContinuousQLayout& critic_layout() const { return critic_layout_; }

 private:
  // Samples a = tanh(mean + std z) from the actor's outputs [B, 2A] into actions_ and
  // log_probs_ (keeping u's tanh, std and z for the backward pass).
  void sample_policy(const float* outputs, const float* noise, int64_t rows);
  // Writes [obs, actions] rows into inputs_ [B, O + A].
  void concat(const float* obs, const float* actions, int64_t rows);

  SquashedGaussianLayout actor_layout_;
  ContinuousQLayout critic_layout_;
  ChainBackprop actor_, q1_, q2_;
  std::vector<float> actions_, log_probs_, stds_, inputs_, targets_, grad_q1_, grad_q2_, grad_in1_, grad_in2_,
      grad_actor_out_;
  std::vector<uint8_t> clamped_;  // [B, A] 1 where the log-std was clamped
};

}  // namespace rlx
