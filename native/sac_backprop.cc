#include "native/sac_backprop.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "models/action_sampling.h"

namespace rlx {

namespace {
constexpr double kHalfLog2Pi = 0.91893853320467274178;  // log(2 pi) / 2
}  // namespace

SacBackprop::SacBackprop(SquashedGaussianLayout actor, ContinuousQLayout critic)
    : actor_layout_(std::move(actor)),
      critic_layout_(std::move(critic)),
      actor_(actor_layout_.chain),
      q1_(critic_layout_.chain),
      q2_(critic_layout_.chain) {
  if (actor_layout_.obs_size != critic_layout_.obs_size || actor_layout_.action_size != critic_layout_.action_size) {
    throw std::invalid_argument("SAC's actor and critic disagree on observation or action size");
  }
}

void SacBackprop::sample_policy(const float* outputs, const float* noise, int64_t rows) {
  const int64_t a = actor_layout_.action_size;
  const auto n = static_cast<size_t>(rows * a);
  actions_.resize(n);
  stds_.resize(n);
  clamped_.resize(n);
  log_probs_.resize(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    double log_prob = 0.0;
    for (int64_t j = 0; j < a; ++j) {
      const auto i = static_cast<size_t>(r * a + j);
      const double raw = outputs[r * 2 * a + a + j];
      const double log_std = std::min(std::max(raw, kSacLogStdMin), kSacLogStdMax);
      const double z = noise[i];
      const double std_dev = std::exp(log_std);
      const double u = outputs[r * 2 * a + j] + std_dev * z;
      actions_[i] = static_cast<float>(std::tanh(u));
      stds_[i] = static_cast<float>(std_dev);
      clamped_[i] = raw < kSacLogStdMin || raw > kSacLogStdMax;
      log_prob += -0.5 * z * z - log_std - kHalfLog2Pi - log_one_minus_tanh_squared(u);
    }
    log_probs_[static_cast<size_t>(r)] = static_cast<float>(log_prob);
  }
}

void SacBackprop::concat(const float* obs, const float* actions, int64_t rows) {
  const int64_t o = critic_layout_.obs_size, a = critic_layout_.action_size;
  inputs_.resize(static_cast<size_t>(rows * (o + a)));
  for (int64_t r = 0; r < rows; ++r) {
    std::copy(obs + r * o, obs + (r + 1) * o, inputs_.begin() + r * (o + a));
    std::copy(actions + r * a, actions + (r + 1) * a, inputs_.begin() + r * (o + a) + o);
  }
}

double SacBackprop::critic_gradients(const float* actor, const float* critics, const float* targets, double alpha,
                                     double gamma, const ContinuousSample& batch, const float* next_noise,
                                     float* critic_grads, SacStepStats& stats) {
  const int64_t rows = batch.rows;
  const size_t q_size = critic_layout_.num_parameters;
  // y = r + gamma (1 - terminated) (min target Q(s', a') - alpha log pi(a'|s')).
  sample_policy(actor_.forward(actor, batch.next_obs.data(), rows), next_noise, rows);
  concat(batch.next_obs.data(), actions_.data(), rows);
  const float* target1 = q1_.forward(targets, inputs_.data(), rows);
  const float* target2 = q2_.forward(targets + q_size, inputs_.data(), rows);
  targets_.resize(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    const auto i = static_cast<size_t>(r);
    const double soft_value = std::min(target1[r], target2[r]) - alpha * log_probs_[i];
    targets_[i] = static_cast<float>(batch.rewards[i] + gamma * (1.0 - batch.terminated[i]) * soft_value);
  }
  // Both critics on (s, a); d loss / d Q_i = (Q_i - y) / B.
  concat(batch.obs.data(), batch.actions.data(), rows);
  const float* value1 = q1_.forward(critics, inputs_.data(), rows);
  const float* value2 = q2_.forward(critics + q_size, inputs_.data(), rows);
  grad_q1_.resize(static_cast<size_t>(rows));
  grad_q2_.resize(static_cast<size_t>(rows));
  double loss = 0.0, q_sum = 0.0;
  for (int64_t r = 0; r < rows; ++r) {
    const auto i = static_cast<size_t>(r);
    const double e1 = value1[r] - targets_[i], e2 = value2[r] - targets_[i];
    loss += 0.5 * (e1 * e1 + e2 * e2);
    q_sum += value1[r];
    grad_q1_[i] = static_cast<float>(e1 / rows);
    grad_q2_[i] = static_cast<float>(e2 / rows);
  }
  q1_.backward(critics, grad_q1_.data(), rows, critic_grads);
  q2_.backward(critics + q_size, grad_q2_.data(), rows, critic_grads + q_size);
  stats.critic_loss = loss / rows;
  stats.q_mean = q_sum / rows;
  return stats.critic_loss;
}

double SacBackprop::actor_gradients(const float* actor, const float* critics, double alpha,
                                    const ContinuousSample& batch, const float* noise, float* actor_grads,
                                    SacStepStats& stats) {
  const int64_t rows = batch.rows, o = critic_layout_.obs_size, a = actor_layout_.action_size;
  const size_t q_size = critic_layout_.num_parameters;
  const float* outputs = actor_.forward(actor, batch.obs.data(), rows);
  sample_policy(outputs, noise, rows);
  concat(batch.obs.data(), actions_.data(), rows);
  const float* value1 = q1_.forward(critics, inputs_.data(), rows);
  const float* value2 = q2_.forward(critics + q_size, inputs_.data(), rows);
  // d loss / d Q_i = -1/B on the rows where critic i is the smaller, else 0.
  grad_q1_.resize(static_cast<size_t>(rows));
  grad_q2_.resize(static_cast<size_t>(rows));
  double loss = 0.0, log_prob_sum = 0.0;
  for (int64_t r = 0; r < rows; ++r) {
    const auto i = static_cast<size_t>(r);
    const bool first = value1[r] <= value2[r];
    loss += alpha * log_probs_[i] - (first ? value1[r] : value2[r]);
    log_prob_sum += log_probs_[i];
    grad_q1_[i] = first ? -1.0f / static_cast<float>(rows) : 0.0f;
    grad_q2_[i] = first ? 0.0f : -1.0f / static_cast<float>(rows);
  }
  grad_in1_.resize(static_cast<size_t>(rows * (o + a)));
  grad_in2_.resize(static_cast<size_t>(rows * (o + a)));
  q1_.backward(critics, grad_q1_.data(), rows, nullptr, grad_in1_.data());
  q2_.backward(critics + q_size, grad_q2_.data(), rows, nullptr, grad_in2_.data());
  // Through a = tanh(u) and log pi into the mean and log-std outputs.
  grad_actor_out_.resize(static_cast<size_t>(rows * 2 * a));
  const double alpha_per_row = alpha / rows;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < a; ++j) {
      const auto i = static_cast<size_t>(r * a + j);
      const auto in = static_cast<size_t>(r * (o + a) + o + j);
      const double action = actions_[i];
      const double d_action = grad_in1_[in] + grad_in2_[in];
      const double d_u = alpha_per_row * 2.0 * action + d_action * (1.0 - action * action);
      grad_actor_out_[static_cast<size_t>(r * 2 * a + j)] = static_cast<float>(d_u);
      const double d_log_std = clamped_[i] ? 0.0 : d_u * stds_[i] * noise[i] - alpha_per_row;
      grad_actor_out_[static_cast<size_t>(r * 2 * a + a + j)] = static_cast<float>(d_log_std);
    }
  }
  actor_.backward(actor, grad_actor_out_.data(), rows, actor_grads);
  stats.actor_loss = loss / rows;
  stats.log_prob_mean = log_prob_sum / rows;
  return stats.actor_loss;
}

}  // namespace rlx
