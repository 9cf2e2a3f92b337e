// A recurrent layer (LSTM or GRU, models/recurrent_layers.h) over whole sequences on the CPU as
// one autograd node with a hand-written backward through time: the input products of all steps
// in one matrix product, one [B, H] x [H, G*H] product per step, the cell's pointwise math from
// models/recurrent_layers.h (the workers' own), and the weight gradients in two products over all
// steps. ATen's cell-by-cell path (learner/torch_recurrent.h) records about a dozen autograd nodes
// per step and is bound by their overhead; this one records one node per layer and sequence batch.
#pragma once

#include <cstdint>
#include <vector>

#include <torch/types.h>

#include "learner/torch_recurrent.h"
#include "models/recurrent_layers.h"

namespace rlx {

// True when run_recurrent_sequence can run these tensors: float32 on the CPU.
bool recurrent_sequence_supported(const torch::Tensor& x, const torch::Tensor& state);

// The cell over B sequences of num_steps steps: x [B * T, in] (rows b-major), state [B, S], params
// (weight_ih, weight_hh, bias_ih, bias_hh); keep [B, T] (undefined: all ones) multiplies each
// sequence's state before step t (0 where an episode starts). Gradients flow to x, state and the
// params (not to states_after). Throws std::invalid_argument on shapes that do not fit.
RecurrentRun run_recurrent_sequence(RecurrentCell cell, const std::vector<torch::Tensor>& params,
                                    const torch::Tensor& x, int64_t num_steps, const torch::Tensor& state,
                                    const torch::Tensor& keep, bool record_states);

}  // namespace rlx
