// PpoLearner::update as named steps: check the shard, snapshot, prepare the train batch, run the
// epochs of minibatch steps, report the means. And evaluate(), the loss without a step.
#include "learner/ppo_learner.h"

#include <torch/torch.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "core/stop_signal.h"
#include "learner/actor_critic_backprop.h"
#include "learner/gradient_clip.h"
#include "learner/non_finite.h"
#include "learner/sequence_shards.h"
#include "learner/tensor_copies.h"
#include "native/ppo_checks.h"
#include "native/ppo_update_steps.h"

namespace rlx {

namespace {

static_assert(PpoLossStat::kCount == kPpoLossSums, "native/ppo_update_steps.h sums PpoLossStat's statistics");

// Local row of every global sample of a shard (-1: held by another rank); throws
// std::invalid_argument when a fragment lies outside the global batch or two overlap.
std::vector<int64_t> shard_local_rows(const std::vector<SampleBatch>& batches, const PpoShard& shard) {
  const int64_t global_n = shard.global_samples;
  std::vector<int64_t> local_row(static_cast<size_t>(global_n), -1);
  int64_t row = 0;
  for (size_t f = 0; f < batches.size(); ++f) {
    const int64_t offset = shard.fragment_offsets[f];
    const int64_t k = batches[f].num_envs;
    const int64_t stride = shard.fragment_strides.empty() ? k : shard.fragment_strides.at(f);
    for (int64_t t = 0; t < batches[f].num_steps; ++t) {
      for (int64_t e = 0; e < k; ++e) {
        const int64_t global = offset + t * stride + e;
        if (stride < k || global < 0 || global >= global_n) throw std::invalid_argument("PpoShard fragment lies outside the global batch");
        if (local_row[static_cast<size_t>(global)] != -1) throw std::invalid_argument("PpoShard fragments overlap");
        local_row[static_cast<size_t>(global)] = row++;
      }
    }
  }
  return local_row;
}

// This rank's rows in the order of an epoch's global permutation (local_order), and how many of
// them fall in each global minibatch (local_counts).
void select_local_rows(const PpoMinibatchOrder& minibatches, const std::vector<int64_t>& permutation,
                       const std::vector<int64_t>& local_row, std::vector<int64_t>& local_order,
                       std::vector<int64_t>& local_counts) {
  local_order.clear();
  local_counts.assign(static_cast<size_t>(minibatches.num_minibatches()), 0);
  for (int64_t mb = 0; mb < minibatches.num_minibatches(); ++mb) {
    const int64_t start = minibatches.minibatch_start(mb);
    for (int64_t i = start; i < start + minibatches.minibatch_size(mb); ++i) {
      const int64_t r = local_row[static_cast<size_t>(permutation[static_cast<size_t>(i)])];
      if (r < 0) continue;
      local_order.push_back(r);
      ++local_counts[static_cast<size_t>(mb)];
    }
  }
}

// [M, 3] float64 rows (sum A, sum A^2, count) of this rank's advantages in each of the epoch's
// M minibatches; `advantages` holds the rank's samples in minibatch order, counts[m] of them
// in minibatch m.
torch::Tensor advantage_moments_per_minibatch(const torch::Tensor& advantages, const std::vector<int64_t>& counts,
                                              torch::Device device) {
  const auto num_minibatches = static_cast<int64_t>(counts.size());
  const torch::Tensor count_tensor = device_copy(counts.data(), {num_minibatches}, torch::kLong, device);
  const torch::Tensor a = advantages.to(torch::kDouble);
  const torch::Tensor minibatch_of_row = torch::repeat_interleave(count_tensor);  // m repeated counts[m] times
  torch::Tensor moments = torch::zeros({num_minibatches, 3}, a.options());
  moments.select(1, 0).index_add_(0, minibatch_of_row, a);
  moments.select(1, 1).index_add_(0, minibatch_of_row, a * a);
  moments.select(1, 2).copy_(count_tensor);
  return moments;
}

// The network's outputs in float32: under autocast they come out in the low dtype, and the
// distribution (log-softmax), the value loss and the entropy run in float32, as AMP keeps them.
PolicyOutput float_outputs(PolicyOutput out) {
  out.policy = to_float32(out.policy);
  out.value = to_float32(out.value);
  return out;
}

// A sharded update normalising advantages with global moments: every minibatch's moments over
// all ranks (one collective for the epoch, not one per minibatch: the advantages are fixed for
// the whole update); else undefined.
torch::Tensor epoch_advantage_moments(const torch::Tensor& advantages, const std::vector<int64_t>& counts, bool sharded,
                                      const PpoLossOptions& options, torch::Device device) {
  if (!sharded || !options.normalize_advantages || !options.reduce_advantage_moments) return torch::Tensor();
  torch::Tensor moments = advantage_moments_per_minibatch(advantages, counts, device);
  options.reduce_advantage_moments(moments);
  return moments;
}

}  // namespace

struct PpoLearner::StepSums {
  torch::Tensor loss;       // [PpoLossStat::kCount] the steps' loss statistics, on the device
  torch::Tensor grad_norm;  // scalar: the steps' gradient norms before clipping, on the device
  int64_t steps = 0;        // applied steps (the sums are theirs)
  int64_t skipped = 0;      // fp16: steps skipped for a non-finite gradient
};

struct PpoLearner::MinibatchSlot {
  int epoch = 0;            // in the update, 0-based
  int64_t index = 0;        // the global minibatch within the epoch, 0-based
  int64_t start = 0;        // this rank's first row of it in the epoch's order
  int64_t size = 0;         // this rank's rows of it
  int64_t global_size = 0;  // its rows over all ranks
};

PpoUpdateMetrics PpoLearner::update(const std::vector<SampleBatch>& batches, int64_t timesteps_done,
                                    const PpoShard* shard) {
  check_batches(batches);
  if (shard != nullptr) check_shard(batches, *shard);
  const std::vector<int64_t> local_row = shard != nullptr ? shard_local_rows(batches, *shard) : std::vector<int64_t>();
  const Snapshot before = take_snapshot();
  if (config_.kl_coeff > 0.0 && num_updates_ % config_.target_update_frequency == 0) refresh_target();
  const TrainBatch data = prepare(batches, /*update_statistics=*/true, shard);
  const int64_t global_n = shard != nullptr ? shard->global_samples : data.num_samples;

  PpoUpdateMetrics metrics = scheduled_metrics(timesteps_done, data, global_n);
  optimizer_->param_groups()[0].options().set_lr(metrics.lr);
  const PpoLossOptions options = loss_options(metrics.clip_param);
  reattach_gradients();
  StepSums sums;
  if (data.plan) {
    GlobalSequences sequences;
    try {
      sequences = update_sequences(batches, data, shard);
    } catch (const std::invalid_argument&) {
      restore_snapshot(before);  // shards that do not tile the global batch: every rank undoes alike
      throw;
    }
    sums = run_sequence_epochs(data, sequences, shard != nullptr, options, before);
  } else {
    sums = run_epochs(data, shard, local_row, global_n, options, before);
  }
  set_step_means(sums, shard != nullptr, metrics);
  ++num_updates_;
  return metrics;
}

void PpoLearner::check_shard(const std::vector<SampleBatch>& batches, const PpoShard& shard) const {
  if (!hooks_.allreduce_host || !hooks_.allreduce_gradients) {
    throw std::logic_error("a sharded PPO update needs the data-parallel hooks installed");
  }
  if (shard.fragment_offsets.size() != batches.size() ||
      (!shard.fragment_strides.empty() && shard.fragment_strides.size() != batches.size())) {
    throw std::invalid_argument("PpoShard has " + std::to_string(shard.fragment_offsets.size()) + " fragment offsets for " +
                                std::to_string(batches.size()) + " fragments");
  }
}

PpoUpdateMetrics PpoLearner::scheduled_metrics(int64_t timesteps_done, const TrainBatch& data, int64_t num_samples) const {
  PpoUpdateMetrics metrics;
  metrics.lr = config_.lr_at(timesteps_done);
  metrics.clip_param = config_.clip_param_at(timesteps_done);
  metrics.explained_variance = data.explained_variance;
  metrics.num_samples = num_samples;
  return metrics;
}

void PpoLearner::reattach_gradients() {
  int64_t offset = 0;
  for (auto& p : model_->parameters()) {
    const int64_t size = p.numel();
    if (!p.grad().defined() || p.grad().data_ptr() != flat_grads_.narrow(0, offset, size).data_ptr()) {
      p.mutable_grad() = flat_grads_.narrow(0, offset, size).view(p.sizes());
    }
    offset += size;
  }
  flat_params_.mutable_grad() = flat_grads_;
}

PpoLearner::StepSums PpoLearner::run_epochs(const TrainBatch& data, const PpoShard* shard,
                                            const std::vector<int64_t>& local_row, int64_t global_n,
                                            const PpoLossOptions& options, const Snapshot& before) {
  const auto tensor_options = torch::TensorOptions().dtype(torch::kFloat).device(device_);
  StepSums sums{torch::zeros({PpoLossStat::kCount}, tensor_options), torch::zeros({}, tensor_options), 0};
  std::vector<torch::Tensor> grads{flat_grads_};
  minibatches_.start(seed_, num_updates_, global_n, config_.minibatch_size);
  std::vector<int64_t> local_order;    // local rows in global permutation order
  std::vector<int64_t> local_counts;   // local rows in each global minibatch

  for (int epoch = 0; epoch < config_.num_epochs; ++epoch) {
    const std::vector<int64_t>& permutation = minibatches_.next_epoch();
    if (shard != nullptr) select_local_rows(minibatches_, permutation, local_row, local_order, local_counts);
    const TrainBatch shuffled = rows_in_order(data, shard != nullptr ? local_order : permutation);
    const torch::Tensor epoch_moments = epoch_advantage_moments(shuffled.columns[TrainBatch::kAdvantages], local_counts,
                                                                shard != nullptr, options, device_);
    MinibatchSlot slot;
    slot.epoch = epoch;
    for (slot.index = 0; slot.index < minibatches_.num_minibatches(); ++slot.index) {
      slot.global_size = minibatches_.minibatch_size(slot.index);
      slot.size = shard != nullptr ? local_counts[static_cast<size_t>(slot.index)] : slot.global_size;
      minibatch_step(shuffled, slot, options, epoch_moments, shard != nullptr, grads, before, sums);
      slot.start += slot.size;
    }
  }
  return sums;
}

GlobalSequences PpoLearner::update_sequences(const std::vector<SampleBatch>& batches, const TrainBatch& data,
                                             const PpoShard* shard) const {
  if (!data.plan) return GlobalSequences();
  if (shard == nullptr) return single_rank_sequences(*data.plan);
  std::vector<double> layout = sequence_layout_term(*data.plan, batches, *shard);
  hooks_.allreduce_host(layout);
  return global_sequences(layout, *data.plan, batches, *shard);
}

PpoLearner::StepSums PpoLearner::run_sequence_epochs(const TrainBatch& data, const GlobalSequences& global, bool sharded,
                                                     const PpoLossOptions& options, const Snapshot& before) {
  const SequencePlan& plan = *data.plan;
  const auto tensor_options = torch::TensorOptions().dtype(torch::kFloat).device(device_);
  StepSums sums{torch::zeros({PpoLossStat::kCount}, tensor_options), torch::zeros({}, tensor_options), 0};
  std::vector<torch::Tensor> grads{flat_grads_};
  minibatches_.start(seed_, num_updates_, global.num_sequences(),
                     sequences_per_minibatch(global.num_samples, global.num_sequences(), config_.minibatch_size));
  const int64_t num_minibatches = minibatches_.num_minibatches();
  std::vector<int64_t> members;  // this rank's sequences in the epoch's order
  // Per minibatch: this rank's sequences of it, their samples, and its samples over all ranks.
  std::vector<int64_t> member_counts, local_counts, global_counts;
  for (int epoch = 0; epoch < config_.num_epochs; ++epoch) {
    const std::vector<int64_t>& permutation = minibatches_.next_epoch();
    members.clear();
    member_counts.assign(static_cast<size_t>(num_minibatches), 0);
    local_counts.assign(static_cast<size_t>(num_minibatches), 0);
    global_counts.assign(static_cast<size_t>(num_minibatches), 0);
    for (int64_t mb = 0; mb < num_minibatches; ++mb) {
      const int64_t first = minibatches_.minibatch_start(mb);
      for (int64_t i = first; i < first + minibatches_.minibatch_size(mb); ++i) {
        const auto q = static_cast<size_t>(permutation[static_cast<size_t>(i)]);
        global_counts[static_cast<size_t>(mb)] += global.length[q];
        if (global.local[q] < 0) continue;
        members.push_back(global.local[q]);
        ++member_counts[static_cast<size_t>(mb)];
        local_counts[static_cast<size_t>(mb)] += global.length[q];
      }
    }
    const TrainBatch shuffled =
        rows_in_order(data, sequence_sample_rows(plan, members.data(), static_cast<int64_t>(members.size())));
    const torch::Tensor epoch_moments =
        epoch_advantage_moments(shuffled.columns[TrainBatch::kAdvantages], local_counts, sharded, options, device_);
    MinibatchSlot slot;
    slot.epoch = epoch;
    int64_t first_member = 0;
    for (slot.index = 0; slot.index < num_minibatches; ++slot.index) {
      const int64_t count = member_counts[static_cast<size_t>(slot.index)];
      MinibatchSequences sequences;
      if (count > 0) {
        const int64_t* member = members.data() + first_member;
        for (int64_t j = 0; j < count; ++j) sequences.lengths.push_back(plan.sequence_length[static_cast<size_t>(member[j])]);
        sequences.states = data.sequence_states.index_select(0, device_copy(member, {count}, torch::kLong, device_));
      }
      slot.size = local_counts[static_cast<size_t>(slot.index)];
      slot.global_size = global_counts[static_cast<size_t>(slot.index)];
      minibatch_step(shuffled, slot, options, epoch_moments, sharded, grads, before, sums, &sequences);
      slot.start += slot.size;
      first_member += count;
    }
  }
  return sums;
}

PpoLearner::TrainBatch PpoLearner::rows_in_order(const TrainBatch& data, const std::vector<int64_t>& order) const {
  const torch::Tensor perm = device_copy(order.data(), {static_cast<int64_t>(order.size())}, torch::kLong, device_);
  TrainBatch rows;
  rows.num_samples = static_cast<int64_t>(order.size());
  rows.obs = data.obs.index_select(0, perm);
  rows.columns = data.columns.index_select(1, perm);
  rows.actions = data.actions.index_select(0, perm);
  if (data.masks.defined()) rows.masks = data.masks.index_select(0, perm);
  if (data.target_policy.defined()) rows.target_policy = data.target_policy.index_select(0, perm);
  rows.explained_variance = data.explained_variance;
  rows.plan = data.plan;
  rows.sequence_states = data.sequence_states;
  return rows;
}

void PpoLearner::minibatch_step(const TrainBatch& epoch, const MinibatchSlot& slot, const PpoLossOptions& options,
                                const torch::Tensor& epoch_moments, bool sharded, std::vector<torch::Tensor>& grads,
                                const Snapshot& before, StepSums& sums, const MinibatchSequences* sequences) {
  // Abandoning is one learner's decision: a data-parallel rank's would leave the others in a collective.
  if (!sharded && !hooks_.allreduce_gradients && stop_check_ && stop_check_()) {
    restore_snapshot(before);
    throw StopRequested(ppo_abandoned_message(slot.epoch, slot.index, config_.num_epochs, minibatches_.num_minibatches()));
  }
  torch::Tensor loss_stats;
  if (slot.size > 0) {
    PpoLossOptions minibatch_options = options;
    if (epoch_moments.defined()) {
      const torch::Tensor global_moments = epoch_moments[slot.index];
      minibatch_options.reduce_advantage_moments = [global_moments](torch::Tensor& moments) { moments.copy_(global_moments); };
    }
    const auto rows = [&slot](const torch::Tensor& t, int64_t dim) { return t.narrow(dim, slot.start, slot.size); };
    loss_stats = minibatch_gradients(rows(epoch.obs, 0), rows(epoch.actions, 0),
                                     epoch.masks.defined() ? rows(epoch.masks, 0) : torch::Tensor(), rows(epoch.columns, 1),
                                     epoch.target_policy.defined() ? rows(epoch.target_policy, 0) : torch::Tensor(),
                                     minibatch_options, sequences);
  } else {
    // None of this minibatch is ours: a zero gradient, but the gradient all-reduce all the same.
    flat_grads_.zero_();
    loss_stats = torch::zeros({PpoLossStat::kCount}, torch::TensorOptions().dtype(torch::kFloat).device(device_));
  }
  torch::NoGradGuard no_grad;
  if (slot.size != slot.global_size) {
    const double weight = static_cast<double>(slot.size) / static_cast<double>(slot.global_size);
    flat_grads_.mul_(weight);
    loss_stats = loss_stats * weight;
  }
  if (hooks_.allreduce_gradients) {
    hooks_.allreduce_gradients(grads);
    if (!grads.at(0).is_same(flat_grads_)) flat_grads_.copy_(grads.at(0));
  }
  scaler_.unscale(flat_grads_);  // fp16: after the all-reduce of the scaled gradients, as under DDP
  const torch::Tensor norm = flat_grads_.norm();
  // The norm is global (the same on every rank); the loss statistics are this rank's, so a
  // sharded update checks the norm alone and every rank decides (and scales) alike.
  const bool finite = all_finite(sharded ? norm : torch::cat({norm.view({1}), loss_stats.to(norm.dtype())}));
  const ScaledStep outcome = scaler_.update(finite);
  if (outcome == ScaledStep::kSkip) {
    ++sums.skipped;
    return;
  }
  if (outcome == ScaledStep::kNonFinite) {
    const torch::Tensor stats = loss_stats.to(torch::kCPU, torch::kDouble);
    const NonFiniteLearnerError error =
        ppo_non_finite_error(num_updates_, slot.epoch, slot.index, norm.item<double>(),
                             stats[PpoLossStat::kPolicyLoss].item<double>(), stats[PpoLossStat::kVfLoss].item<double>());
    const std::string fp16 = scaler_.enabled() ? "; precision fp16 at loss scale " + std::to_string(scaler_.scale()) +
                                                     ": try precision bf16 or fp32"
                                               : std::string();
    restore_snapshot(before);
    throw NonFiniteLearnerError(error.what() + fp16);
  }
  sums.grad_norm.add_(norm);
  if (config_.grad_clip > 0.0) {
    clip_flat_gradient(flat_grads_, norm, config_.grad_clip);
  }
  optimizer_->step();
  sums.loss.add_(loss_stats);
  ++sums.steps;
}

torch::Tensor PpoLearner::minibatch_gradients(const torch::Tensor& obs, const torch::Tensor& actions,
                                              const torch::Tensor& masks, const torch::Tensor& columns,
                                              const torch::Tensor& target_policy, const PpoLossOptions& options,
                                              const MinibatchSequences* sequences) {
  if (backprop_ && sequences == nullptr) {  // never with a precision other than fp32 (refresh_backprop)
    return backprop_->ppo_gradients(obs, actions, masks, columns[TrainBatch::kOldLogProbs], columns[TrainBatch::kAdvantages],
                                    columns[TrainBatch::kReturns], columns[TrainBatch::kOldValues], options);
  }
  PpoLoss loss;
  {
    const AutocastGuard autocast(precision_, device_);  // the forward and the loss; backward outside, as AMP's
    const PolicyOutput out = float_outputs(minibatch_outputs(obs, sequences));
    const ActionDistribution dist = model_->distribution(out.policy, masks);
    PpoLossInputs in;
    in.log_probs = dist.log_prob(actions);
    in.values = out.value;
    set_column_inputs(columns, in);
    if (target_policy.defined()) {
      // The target's distribution: the same segments and mask, the target network's outputs.
      const ActionDistribution target = target_model_->distribution(target_policy, masks, /*constant=*/true);
      in.kl_to_target = target.kl_divergence_to(dist);
    }
    if (options.entropy_coeff != 0.0) {
      in.entropy = dist.entropy();
    } else {
      torch::NoGradGuard no_grad;  // only a statistic: keep it out of the graph
      in.entropy = dist.entropy();
    }
    loss = ppo_loss(in, options);
  }
  flat_grads_.zero_();
  scaler_.scale_loss(loss.total).backward();
  return loss.stats;
}

void PpoLearner::set_column_inputs(const torch::Tensor& columns, PpoLossInputs& in) {
  in.old_log_probs = columns[TrainBatch::kOldLogProbs];
  in.advantages = columns[TrainBatch::kAdvantages];
  in.returns = columns[TrainBatch::kReturns];
  in.old_values = columns[TrainBatch::kOldValues];
}

void PpoLearner::set_step_means(const StepSums& sums, bool sharded, PpoUpdateMetrics& metrics) const {
  const torch::Tensor host = torch::cat({sums.loss, sums.grad_norm.view({1})}).to(torch::kCPU, torch::kDouble).contiguous();
  std::vector<double> s(host.data_ptr<double>(), host.data_ptr<double>() + host.numel());
  if (sharded) {
    // Loss statistics were weighted by each rank's share: their sum is the global means'. The
    // gradient norm is already global (identical on every rank).
    std::vector<double> loss_sums(s.begin(), s.begin() + PpoLossStat::kCount);
    hooks_.allreduce_host(loss_sums);
    std::copy(loss_sums.begin(), loss_sums.end(), s.begin());
  }
  set_ppo_step_means(s.data(), s[PpoLossStat::kCount], sums.steps, metrics);
  metrics.skipped_steps = sums.skipped;
  metrics.loss_scale = scaler_.enabled() ? scaler_.scale() : 0.0;
}

PpoUpdateMetrics PpoLearner::evaluate(const std::vector<SampleBatch>& batches, int64_t timesteps_done) {
  check_batches(batches);
  TrainBatch data = prepare(batches, /*update_statistics=*/false);
  PpoUpdateMetrics metrics = scheduled_metrics(timesteps_done, data, data.num_samples);
  torch::NoGradGuard no_grad;
  const AutocastGuard autocast(precision_, device_);  // the loss as update() computes it
  MinibatchSequences sequences;
  if (data.plan) data = all_sequences(data, sequences);
  const PolicyOutput out = float_outputs(minibatch_outputs(data.obs, data.plan ? &sequences : nullptr));
  const ActionDistribution dist = model_->distribution(out.policy, data.masks);
  PpoLossInputs in;
  in.log_probs = dist.log_prob(data.actions);
  in.entropy = dist.entropy();
  in.values = out.value;
  set_column_inputs(data.columns, in);
  const PpoLoss loss = ppo_loss(in, loss_options(metrics.clip_param));
  const torch::Tensor stats = loss.stats.to(torch::kCPU, torch::kDouble);
  metrics.policy_loss = stats[PpoLossStat::kPolicyLoss].item<double>();
  metrics.vf_loss = stats[PpoLossStat::kVfLoss].item<double>();
  metrics.entropy = stats[PpoLossStat::kEntropy].item<double>();
  metrics.approx_kl = stats[PpoLossStat::kApproxKl].item<double>();
  metrics.clip_fraction = stats[PpoLossStat::kClipFraction].item<double>();
  return metrics;
}

}  // namespace rlx
