#include "learner/torch_recurrent.h"

#include <torch/torch.h>

#include <stdexcept>
#include <string>

#include "learner/recurrent_sequence.h"
#include "models/recurrent_layers.h"

namespace rlx {

std::pair<torch::Tensor, torch::Tensor> torch_recurrent_step(const LayerSpec& layer, const std::vector<torch::Tensor>& params,
                                                             const torch::Tensor& x, const torch::Tensor& state) {
  const int64_t hidden = recurrent_hidden(layer);
  if (recurrent_cell(layer) == RecurrentCell::kLstm) {
    const auto [h, c] = torch::lstm_cell(x, {state.narrow(1, 0, hidden), state.narrow(1, hidden, hidden)}, params[0],
                                         params[1], params[2], params[3]);
    return {h, torch::cat({h, c}, 1)};
  }
  const torch::Tensor h = torch::gru_cell(x, state, params[0], params[1], params[2], params[3]);
  return {h, h};
}

namespace {

// The layer over whole sequences [B, T, in] without resets: ATen's lstm / gru, which projects
// every step's input in one product (the same cell math as torch_recurrent_step, fewer ops).
RecurrentRun run_whole_sequences(const LayerSpec& layer, const std::vector<torch::Tensor>& params,
                                 const torch::Tensor& steps, const torch::Tensor& state) {
  const int64_t hidden = recurrent_hidden(layer), batch = steps.size(0), num_steps = steps.size(1);
  RecurrentRun run;
  if (recurrent_cell(layer) == RecurrentCell::kLstm) {
    const auto [out, h, c] = torch::lstm(steps, {state.narrow(1, 0, hidden).unsqueeze(0), state.narrow(1, hidden, hidden).unsqueeze(0)},
                                         params, /*has_biases=*/true, /*num_layers=*/1, /*dropout=*/0.0,
                                         /*train=*/false, /*bidirectional=*/false, /*batch_first=*/true);
    run.outputs = out.reshape({batch * num_steps, hidden});
    run.final_state = torch::cat({h.squeeze(0), c.squeeze(0)}, 1);
  } else {
    const auto [out, h] = torch::gru(steps, state.unsqueeze(0), params, /*has_biases=*/true, /*num_layers=*/1,
                                     /*dropout=*/0.0, /*train=*/false, /*bidirectional=*/false, /*batch_first=*/true);
    run.outputs = out.reshape({batch * num_steps, hidden});
    run.final_state = h.squeeze(0);
  }
  return run;
}

}  // namespace

RecurrentRun run_recurrent_layer(const LayerSpec& layer, const std::vector<torch::Tensor>& params, const torch::Tensor& x,
                                 int64_t num_steps, torch::Tensor state, const torch::Tensor& resets, bool record_states) {
  const int64_t batch = state.size(0);
  if (num_steps < 1 || x.size(0) != batch * num_steps) {
    throw std::invalid_argument("recurrent layer " + layer.name + ": " + std::to_string(x.size(0)) + " rows for " +
                                std::to_string(batch) + " sequences of " + std::to_string(num_steps) + " steps");
  }
  const torch::Tensor keep = resets.defined() ? (1.0 - resets).to(state.dtype()) : torch::Tensor();
  if (recurrent_sequence_supported(x, state)) {  // the CPU's one-node run with its own backward
    return run_recurrent_sequence(recurrent_cell(layer), params, x, num_steps, state, keep, record_states);
  }
  const torch::Tensor steps = x.view({batch, num_steps, x.size(1)});
  if (!resets.defined() && !record_states) return run_whole_sequences(layer, params, steps, state);
  std::vector<torch::Tensor> outputs, states;
  outputs.reserve(static_cast<size_t>(num_steps));
  for (int64_t t = 0; t < num_steps; ++t) {
    if (keep.defined()) state = state * keep.select(1, t).unsqueeze(1);
    auto [y, next] = torch_recurrent_step(layer, params, steps.select(1, t), state);
    outputs.push_back(std::move(y));
    state = std::move(next);
    if (record_states) states.push_back(state);
  }
  RecurrentRun run;
  run.outputs = torch::stack(outputs, 1).view({batch * num_steps, -1});
  run.final_state = state;
  if (record_states) run.states_after = torch::stack(states, 1);
  return run;
}

}  // namespace rlx
