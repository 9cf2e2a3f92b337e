// The recurrent layer kinds (models/layer_kinds.h), built in: "lstm" and "gru", PyTorch's
// nn.LSTMCell and nn.GRUCell, the model's recurrent core (ModelSpec::core). One attribute,
// "hidden" (H); a layer reads `in` features and gives H. Parameters in flat order, PyTorch's names
// and layouts: weight_ih [G*H, in], weight_hh [G*H, H], bias_ih [G*H], bias_hh [G*H], the gates
// stacked in PyTorch's order (LSTM, G = 4: input, forget, cell, output; GRU, G = 3: reset,
// update, new). The state a row carries: LSTM [h, c] (2H floats), GRU [h] (H); zeros at an
// episode's start. The output is the new h.
//
//   LSTM: i, f, o = sigmoid(gates), g = tanh(gate); c' = f c + i g; h' = o tanh(c')
//   GRU:  r, z = sigmoid(W_i x + b_i + W_h h + b_h); n = tanh(W_in x + b_in + r (W_hn h + b_hn));
//         h' = (1 - z) n + z h
//
// Initialised as CleanRL's ppo_atari_lstm does: both weights orthogonal with layer.init_gain and
// zero biases; without orthogonal_init, PyTorch's default: every parameter ~ U(-1/sqrt(H), 1/sqrt(H)).
// The torch-free step (workers, rlx::Policy) runs the register-blocked products of
// models/product_block.h (over transposed weight copies made at each load) in the kernel's no-FMA clones and the kernel's tanh (sigmoid(x) = (1 + tanh(x / 2)) / 2); LibTorch's is
// learner/torch_recurrent.h (ATen's lstm_cell and gru_cell).
#pragma once

#include <cstdint>

#include "models/layer_kinds.h"
#include "models/network_layout.h"

namespace rlx {

// The kinds' names in LayerSpec::kind.
constexpr const char* kLstmLayer = "lstm";
constexpr const char* kGruLayer = "gru";
// The largest H a layer may have (sizes stay far from overflow for an untrusted spec).
constexpr int64_t kMaxRecurrentHidden = int64_t{1} << 14;

enum class RecurrentCell { kLstm, kGru };

// The cell of a layer of kind "lstm" or "gru"; nullopt-free: throws std::invalid_argument otherwise.
RecurrentCell recurrent_cell(const LayerSpec& layer);
// Gates stacked in the weights: 4 (LSTM) or 3 (GRU).
int64_t recurrent_gates(RecurrentCell cell);
// H of a recurrent layer: its "hidden" attribute, checked in [1, kMaxRecurrentHidden] with no other
// attribute and in >= 1; throws std::invalid_argument naming the layer and attribute otherwise.
int64_t recurrent_hidden(const LayerSpec& layer);

// The cell's pointwise part for one row, the one definition of its math: gi = W_ih x + b_ih and
// gh = W_hh h + b_hh (G*H each) in, state [S] read and overwritten, y [H] = the new h. Leaves the
// activated gates in gi (LSTM: i, f, g, o; GRU: r, z, n) and gh's n-part (GRU) as it was: what a
// backward pass needs (learner/recurrent_sequence.h).
void recurrent_cell_update(RecurrentCell cell, int64_t hidden, float* gi, const float* gh, float* state, float* y);

// One step of rows: y [rows, H] = the new h; state [rows, S] (S = 2H for LSTM, H for GRU) read and
// overwritten; params in flat order (weight_ih, weight_hh, bias_ih, bias_hh) then the kind's
// derived buffers (weight_ih^T, weight_hh^T: LayerKind::derive). y never aliases x or state.
// Scratch is per thread.
void recurrent_step(RecurrentCell cell, int64_t in, int64_t hidden, const float* const* params, const float* x,
                    int64_t rows, float* state, float* y);

// The kind's spec and torch-free step, as models/layer_kinds.cc registers it built in.
LayerKind recurrent_layer_kind(RecurrentCell cell);

}  // namespace rlx
