// DqnLearner's weight updates: one gradient step (replay draw, loss and gradient, the mean over
// data-parallel ranks, finiteness check, clipping, Adam, new priorities) and the target
// network's sync (see learner/dqn_learner.h for the maths).
#include "learner/dqn_learner.h"

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "learner/dqn_loss.h"
#include "learner/dqn_replay.h"
#include "learner/flat_adam.h"
#include "learner/gradient_clip.h"
#include "learner/non_finite.h"
#include "learner/q_network_backprop.h"

namespace rlx {

void DqnLearner::update_target(int64_t timesteps_done) {
  if (timesteps_done <= target_timesteps_) return;
  const int64_t interval = config_.target_update_interval;
  const int64_t due = timesteps_done / interval - target_timesteps_ / interval;
  target_timesteps_ = timesteps_done;
  if (due <= 0) return;
  target_updates_ += due;
  torch::NoGradGuard no_grad;
  // k updates with a fixed online net fold into one with 1 - (1 - tau)^k.
  const double tau = config_.tau >= 1.0 ? 1.0 : 1.0 - std::pow(1.0 - config_.tau, static_cast<double>(due));
  if (tau >= 1.0) {
    flat_target_.copy_(flat_online_);
  } else {
    flat_target_.lerp_(flat_online_, tau);
  }
}

void DqnLearner::gradient_step(double beta) {
  const int64_t b = local_batch_size();
  draw_sample(b, beta);
  const bool applied = learn_from(sample_, prioritized_ != nullptr);
  if (applied && prioritized_ != nullptr) {  // a skipped step's TD errors may be the overflow's infs
    const torch::Tensor td_host = td_errors_.back().to(torch::kCPU).contiguous();
    prioritized_->update_priorities(sample_.indices.data(), td_host.data_ptr<float>(), b);
  }
}

void DqnLearner::draw_sample(int64_t b, double beta) {
  rng_.seed_with(dqn_draw_seed(seed_, hooks_.rank, num_gradient_steps_));
  if (prioritized_ == nullptr) {
    buffer_->sample(b, rng_, sample_);
    return;
  }
  prioritized_->sample(b, beta, rng_, sample_);
  if (hooks_.world_size > 1) {
    // Weights (N P(i))^-beta / max_j w_j over the global buffer: each rank draws b from its
    // shard, so P(i) = p_i / (M S_r) and the max weight belongs to min over ranks of
    // (min_r / S_r). The local weights used min_r / S_r; rescale them by the global minimum.
    const double local = prioritized_->min_priority() / prioritized_->total_priority();
    std::vector<double> global{local};
    hooks_.allreduce_host(global, ReduceOp::kMin);
    const float factor = static_cast<float>(std::pow(local / global[0], -beta));
    for (float& w : sample_.weights) w *= factor;
  }
}

void DqnLearner::gradient_step_on(const ReplaySample& sample) {
  if (sample.size() < 1) throw std::invalid_argument("DqnLearner::gradient_step_on needs at least one transition");
  clear_step_records();
  sample_ = sample;
  learn_from(sample_, prioritized_ != nullptr);
}

bool DqnLearner::learn_from(ReplaySample& s, bool weighted) {
  const DqnLossOutput out = loss_and_gradient(s, weighted);
  if (hooks_.world_size > 1) average_gradient_over_ranks();
  scaler_.unscale(flat_grad_);  // fp16: after the all-reduce of the scaled gradients
  const torch::Tensor grad_norm = flat_grad_.norm();
  const bool applied = clip_and_apply_gradient(out.loss, grad_norm);
  ++num_gradient_steps_;  // a skipped step too: the next one draws the next transitions
  if (!applied) return false;

  const torch::Tensor td = out.q.detach() - out.target;
  losses_.push_back(out.loss.detach());
  q_values_.push_back(out.q.detach());
  td_errors_.push_back(td);
  grad_norms_.push_back(grad_norm);
  return true;
}

torch::Tensor DqnLearner::host_tensor(float* data, torch::IntArrayRef shape) const {
  torch::Tensor t = torch::from_blob(data, shape, torch::kFloat);
  return device_.is_cpu() ? t : t.to(device_);
}

DqnBatch DqnLearner::stage_batch(ReplaySample& s, bool weighted) {
  const int64_t b = s.size();
  const int64_t o = model_config_.obs_size;
  const auto rows = static_cast<size_t>(b);
  if (s.obs.size() != rows * static_cast<size_t>(layout_.float_slots) || s.next_obs.size() != s.obs.size() ||
      s.obs_u8.size() != rows * static_cast<size_t>(layout_.byte_slots) || s.next_obs_u8.size() != s.obs_u8.size()) {
    throw std::invalid_argument("DQN sample of " + std::to_string(b) + " transitions does not hold observations of " +
                                std::to_string(layout_.float_slots) + " floats and " + std::to_string(layout_.byte_slots) +
                                " bytes");
  }
  bootstrap_.resize(rows);
  for (size_t i = 0; i < rows; ++i) bootstrap_[i] = s.terminated[i] != 0.0f ? 0.0f : s.discounts[i];
  float* obs = s.obs.data();
  float* next_obs = s.next_obs.data();
  if (!layout_.flat_is_floats) {  // else the stored floats are the input as they are
    staged_obs_.resize(rows * static_cast<size_t>(o));
    staged_next_obs_.resize(staged_obs_.size());
    flatten_observations(layout_, s.obs.data(), s.obs_u8.data(), b, staged_obs_.data());
    flatten_observations(layout_, s.next_obs.data(), s.next_obs_u8.data(), b, staged_next_obs_.data());
    obs = staged_obs_.data();
    next_obs = staged_next_obs_.data();
  }

  DqnBatch batch;
  batch.obs = host_tensor(obs, {b, o});
  batch.next_obs = host_tensor(next_obs, {b, o});
  batch.rewards = host_tensor(s.rewards.data(), {b});
  batch.bootstrap = host_tensor(bootstrap_.data(), {b});
  batch.actions = torch::from_blob(s.actions.data(), {b, 1}, torch::kLong);
  if (!device_.is_cpu()) batch.actions = batch.actions.to(device_);
  if (weighted) batch.weights = host_tensor(s.weights.data(), {b});
  if (layout_.mask_size > 0) {
    const int64_t n = layout_.mask_size;  // Discrete(n): one byte per action
    next_mask_.resize(rows * static_cast<size_t>(n));
    for (size_t i = 0; i < rows; ++i) {
      const uint8_t* mask = s.next_obs_u8.data() + i * static_cast<size_t>(layout_.byte_slots) + layout_.mask_offset;
      for (int64_t j = 0; j < n; ++j) next_mask_[i * static_cast<size_t>(n) + static_cast<size_t>(j)] = mask[j] != 0 ? 1 : 0;
    }
    batch.next_mask = torch::from_blob(next_mask_.data(), {b, n}, torch::kBool);
    if (!device_.is_cpu()) batch.next_mask = batch.next_mask.to(device_);
  }
  return batch;
}

DqnLossOutput DqnLearner::loss_and_gradient(ReplaySample& s, bool weighted) {
  const DqnBatch batch = stage_batch(s, weighted);
  if (backprop_) return backprop_->dqn_gradients(batch, config_.double_q, config_.huber_delta);  // overwrites flat_grad_
  DqnLossOutput out;
  {
    const AutocastGuard autocast(precision_, device_);  // the forward passes and the loss; backward outside, as AMP's
    out = dqn_loss(*online_, *target_, batch, config_.double_q, config_.huber_delta);
  }
  flat_grad_.zero_();
  scaler_.scale_loss(out.loss).backward();
  return out;
}

void DqnLearner::average_gradient_over_ranks() {
  torch::NoGradGuard no_grad;
  flat_grad_.mul_(1.0 / static_cast<double>(hooks_.world_size));
  std::vector<torch::Tensor> grads{flat_grad_};
  hooks_.allreduce_gradients(grads);
  if (!grads.at(0).is_same(flat_grad_)) flat_grad_.copy_(grads.at(0));
}

bool DqnLearner::clip_and_apply_gradient(const torch::Tensor& loss, const torch::Tensor& grad_norm) {
  if (device_.is_cpu()) {
    // The same checks and clipping with host scalars: a few ops fewer on the CPU.
    const double norm = grad_norm.item<double>();
    const double loss_value = hooks_.world_size > 1 ? 0.0 : loss.item<double>();
    if (!admit_step(std::isfinite(norm) && std::isfinite(loss_value), loss, grad_norm)) return false;
    const double scale = clip_scale(norm, config_.grad_clip);
    if (config_.grad_clip > 0.0 && scale < 1.0) flat_grad_.mul_(scale);
    flat_adam_step(*optimizer_, flat_online_, flat_grad_);
  } else {
    // The norm is global when data-parallel (the same on every rank), the loss this rank's: a
    // data-parallel step checks the norm alone so that every rank decides (and scales) alike.
    const bool finite =
        all_finite(hooks_.world_size > 1 ? grad_norm : torch::stack({grad_norm, loss.detach().to(grad_norm.dtype())}));
    if (!admit_step(finite, loss, grad_norm)) return false;
    if (config_.grad_clip > 0.0) {
      torch::Tensor flat = flat_grad_;
      clip_flat_gradient(flat, grad_norm, config_.grad_clip);
    }
    optimizer_->step();
  }
  return true;
}

bool DqnLearner::admit_step(bool finite, const torch::Tensor& loss, const torch::Tensor& grad_norm) {
  switch (scaler_.update(finite)) {
    case ScaledStep::kApply: return true;
    case ScaledStep::kSkip: return false;
    case ScaledStep::kNonFinite: break;
  }
  throw_non_finite(loss, grad_norm);
}

void DqnLearner::throw_non_finite(const torch::Tensor& loss, const torch::Tensor& grad_norm) const {
  const std::string fp16 = scaler_.enabled()
                               ? ", or precision bf16 or fp32: fp16 at loss scale " + std::to_string(scaler_.scale())
                               : std::string();
  throw NonFiniteLearnerError("DQN gradient step " + std::to_string(num_gradient_steps_ + 1) + ": loss " +
                              std::to_string(loss.item<double>()) + ", gradient norm " +
                              std::to_string(grad_norm.item<double>()) +
                              " (not finite); stopped before the step, no weight changed (try a smaller lr or grad_clip" +
                              fp16 + ")");
}

void DqnLearner::clear_step_records() {
  losses_.clear();
  q_values_.clear();
  td_errors_.clear();
  grad_norms_.clear();
}

}  // namespace rlx
