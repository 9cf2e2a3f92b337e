// PpoLearner for a recurrent model (native/sequence_plan.h): the no-gradient pass over every
// fragment's streams that recomputes the states, values and log-probs the targets need, the
// epochs over shuffled whole sequences, and a minibatch's forward by sequence, padded and masked.
//
// Later sequences of a stream start from states recomputed with the weights the update begins
// with, not from states the worker shipped (it ships one per fragment): the same weights that
// give the values GAE and V-trace use, so within an update every sequence is consistent with one
// network, and a fragment costs one state on the wire whatever max_seq_len is.
#include "learner/ppo_learner.h"

#include <torch/torch.h>

#include <algorithm>
#include <numeric>

#include "learner/tensor_copies.h"

namespace rlx {

namespace {

torch::Tensor long_tensor(const std::vector<int64_t>& values, torch::Device device) {
  return device_copy(values.data(), {static_cast<int64_t>(values.size())}, torch::kLong, device);
}

}  // namespace

torch::Tensor PpoLearner::prepare_sequences(const std::vector<SampleBatch>& batches, const torch::Tensor& obs_all,
                                            int64_t n, TrainBatch& out) {
  torch::NoGradGuard no_grad;
  auto plan = std::make_shared<SequencePlan>(plan_sequences(batches, config_.max_seq_len));
  const int64_t streams = plan->num_streams, steps = plan->max_steps, s = plan->state_size;
  if (s != model_->state_size()) {
    throw std::invalid_argument("fragments carry recurrent states of " + std::to_string(s) + " floats, the model's are " +
                                std::to_string(model_->state_size()));
  }
  // The stream grid's rows (padding reads row 0: it lies after every stream's end, so no step reads it).
  std::vector<int64_t> grid_rows(plan->stream_rows), positions, rows;
  for (size_t p = 0; p < grid_rows.size(); ++p) {
    if (grid_rows[p] < 0) {
      grid_rows[p] = 0;
      continue;
    }
    positions.push_back(static_cast<int64_t>(p));
    rows.push_back(grid_rows[p]);
  }
  const torch::Tensor grid_obs = obs_all.index_select(0, long_tensor(grid_rows, device_));
  SequenceInput input;
  input.num_steps = steps;
  input.initial_state = device_copy(plan->initial_states.data(), {streams, s}, torch::kFloat, device_);
  input.resets = device_copy(plan->stream_resets.data(), {streams, steps}, torch::kFloat, device_);
  input.record_states = true;
  const SequenceOutput grid = model_->forward_sequences(grid_obs, input);
  const torch::Tensor position_index = long_tensor(positions, device_), row_index = long_tensor(rows, device_);
  // Grid outputs back in sample-row order.
  const auto by_row = [&](const torch::Tensor& grid_values) {
    std::vector<int64_t> shape = grid_values.sizes().vec();
    shape[0] = n;
    return grid_values.new_zeros(shape).index_copy_(0, row_index, grid_values.index_select(0, position_index));
  };

  // Each sequence's start: shipped (stream row), zeros, or the state after the step before it.
  const torch::Tensor table = torch::cat({input.initial_state, input.initial_state.new_zeros({1, s}), grid.states_after});
  std::vector<int64_t> sources(static_cast<size_t>(plan->num_sequences()));
  for (int64_t q = 0; q < plan->num_sequences(); ++q) {
    const int64_t source = sequence_state_source(*plan, q);
    sources[static_cast<size_t>(q)] =
        source == -1 ? plan->sequence_stream[static_cast<size_t>(q)] : source == -2 ? streams : streams + 1 + source;
  }
  out.sequence_states = table.index_select(0, long_tensor(sources, device_));

  // The extra rows' values, each one step on from the state after its stream step.
  SequenceInput extra;
  extra.num_steps = 1;
  extra.initial_state = grid.states_after.index_select(0, long_tensor(plan->extra_after_step, device_)) *
                        device_copy(plan->extra_keep.data(), {plan->num_extra, 1}, torch::kFloat, device_);
  const torch::Tensor extra_values = model_->forward_sequences(obs_all.narrow(0, n, plan->num_extra), extra).value;

  if (config_.vtrace || !config_.behaviour_ratio) stage_log_ratios(by_row(grid.policy), out.actions, out.masks, n);
  if (config_.kl_coeff > 0.0) {
    input.record_states = false;
    out.target_policy = by_row(target_model().forward_sequences(grid_obs, input).policy);
  }
  out.plan = std::move(plan);
  return torch::cat({by_row(grid.value), extra_values}).to(torch::kCPU).contiguous();
}

PolicyOutput PpoLearner::sequence_outputs(const torch::Tensor& obs, const MinibatchSequences& sequences) {
  const auto count = static_cast<int64_t>(sequences.lengths.size());
  const int64_t longest = *std::max_element(sequences.lengths.begin(), sequences.lengths.end());
  const int64_t m = obs.size(0);
  // Padded [count, longest] grid: row m (zeros) fills each sequence's tail; `valid` picks its steps back.
  std::vector<int64_t> grid(static_cast<size_t>(count * longest), m), valid;
  valid.reserve(static_cast<size_t>(m));
  int64_t row = 0;
  for (int64_t q = 0; q < count; ++q) {
    for (int64_t t = 0; t < sequences.lengths[static_cast<size_t>(q)]; ++t) {
      grid[static_cast<size_t>(q * longest + t)] = row++;
      valid.push_back(q * longest + t);
    }
  }
  const torch::Tensor padded = torch::cat({obs, obs.new_zeros({1, obs.size(1)})}).index_select(0, long_tensor(grid, device_));
  SequenceInput input;
  input.num_steps = longest;
  input.initial_state = sequences.states;
  const SequenceOutput out = model_->forward_sequences(padded, input);
  const torch::Tensor picked = long_tensor(valid, device_);
  return {out.policy.index_select(0, picked), out.value.index_select(0, picked)};
}

PolicyOutput PpoLearner::minibatch_outputs(const torch::Tensor& obs, const MinibatchSequences* sequences) {
  return sequences != nullptr ? sequence_outputs(obs, *sequences) : model_->forward(obs);
}

PpoLearner::TrainBatch PpoLearner::all_sequences(const TrainBatch& data, MinibatchSequences& sequences) const {
  const SequencePlan& plan = *data.plan;
  std::vector<int64_t> every(static_cast<size_t>(plan.num_sequences()));
  std::iota(every.begin(), every.end(), int64_t{0});
  sequences.lengths = plan.sequence_length;
  sequences.states = data.sequence_states;
  return rows_in_order(data, sequence_sample_rows(plan, every.data(), plan.num_sequences()));
}

}  // namespace rlx
