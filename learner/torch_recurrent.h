// The LibTorch back end of the recurrent layer kinds (models/recurrent_layers.h): one step by
// ATen's lstm_cell and gru_cell (PyTorch's own nn.LSTMCell and nn.GRUCell math, autograd on CPU
// and CUDA), and a layer run over sequences of steps with its state carried, zeroed where an
// episode starts, for the learner's recurrent ActorCritic (learner/policy_networks.h).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include <torch/types.h>

#include "models/network_layout.h"

namespace rlx {

// One step of a recurrent layer: (y [B, H], new state [B, S]) for x [B, in] and state [B, S]
// (LSTM: [h, c]; GRU: [h]); params in flat order (weight_ih, weight_hh, bias_ih, bias_hh).
std::pair<torch::Tensor, torch::Tensor> torch_recurrent_step(const LayerSpec& layer, const std::vector<torch::Tensor>& params,
                                                             const torch::Tensor& x, const torch::Tensor& state);

// A recurrent layer over B sequences of T steps.
struct RecurrentRun {
  torch::Tensor outputs;       // [B * T, H], rows b-major (b * T + t)
  torch::Tensor final_state;   // [B, S] after step T - 1
  torch::Tensor states_after;  // [B, T, S] after each step (when asked for), else undefined
};

// Runs the layer on x [B * T, in] (rows b-major) from state [B, S]; before step t each sequence's
// state is multiplied by 1 - resets[b, t] (resets [B, T] of 0 and 1; undefined: none). Without
// resets or recorded states it runs ATen's whole-sequence lstm / gru (one input product for all steps).
// Float32 on the CPU runs learner/recurrent_sequence.h instead (one autograd node, its own backward).
RecurrentRun run_recurrent_layer(const LayerSpec& layer, const std::vector<torch::Tensor>& params, const torch::Tensor& x,
                                 int64_t num_steps, torch::Tensor state, const torch::Tensor& resets, bool record_states);

}  // namespace rlx
