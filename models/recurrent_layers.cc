#include "models/recurrent_layers.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/rng.h"
#include "models/kernel_clones.h"
#include "models/network_kernel.h"
#include "models/product_block.h"

namespace rlx {

namespace {

std::string where(const LayerSpec& layer) { return "recurrent layer " + layer.name + " (" + layer.kind + "): "; }

// c[rows, n] = bias + a[rows, k] w[n, k]^T with w_t = w^T [k, n]: the kernel's register-blocked
// product in its no-FMA clones (the same bits on every x86-64 CPU).
RLX_VECTOR_CLONES void gate_products(const float* __restrict a, int64_t rows, int64_t k, const float* __restrict w_t,
                                     const float* __restrict w, int64_t n, const float* __restrict bias,
                                     float* __restrict c) {
  product::rows(a, rows, k, w_t, w, n, bias, c);
}

// A weight [rows, cols] transposed, as a derived buffer.
std::vector<float> transposed(const float* in, int64_t rows, int64_t cols) {
  std::vector<float> out(static_cast<size_t>(rows * cols));
  product::transpose(in, rows, cols, out.data());
  return out;
}

// values[0..count) = sigmoid(values), as (1 + tanh(x / 2)) / 2 with the kernel's tanh.
void sigmoid_in_place(float* values, int64_t count) {
  for (int64_t j = 0; j < count; ++j) values[j] *= 0.5f;
  apply_activation(values, count, Activation::kTanh);
  for (int64_t j = 0; j < count; ++j) values[j] = 0.5f + 0.5f * values[j];
}

}  // namespace

RecurrentCell recurrent_cell(const LayerSpec& layer) {
  if (layer.kind == kLstmLayer) return RecurrentCell::kLstm;
  if (layer.kind == kGruLayer) return RecurrentCell::kGru;
  throw std::invalid_argument("layer " + layer.name + " of kind '" + layer.kind + "' is not recurrent (lstm or gru)");
}

int64_t recurrent_gates(RecurrentCell cell) { return cell == RecurrentCell::kLstm ? 4 : 3; }

int64_t recurrent_hidden(const LayerSpec& layer) {
  for (const auto& [name, value] : layer.attributes) {
    if (name != "hidden") throw std::invalid_argument(where(layer) + "unknown attribute '" + name + "'; known: hidden");
  }
  const auto it = layer.attributes.find("hidden");
  if (it == layer.attributes.end()) throw std::invalid_argument(where(layer) + "attribute 'hidden' is missing");
  if (it->second < 1 || it->second > kMaxRecurrentHidden) {
    throw std::invalid_argument(where(layer) + "attribute 'hidden' is " + std::to_string(it->second) + ", outside [1, " +
                                std::to_string(kMaxRecurrentHidden) + "]");
  }
  if (layer.in < 1 || layer.in > kMaxRecurrentHidden * 64) {
    throw std::invalid_argument(where(layer) + "it reads " + std::to_string(layer.in) + " features, outside [1, " +
                                std::to_string(kMaxRecurrentHidden * 64) + "]");
  }
  return it->second;
}

void recurrent_cell_update(RecurrentCell cell, int64_t hidden, float* gi, const float* gh, float* state, float* y) {
  if (cell == RecurrentCell::kLstm) {
    for (int64_t j = 0; j < 4 * hidden; ++j) gi[j] += gh[j];
    sigmoid_in_place(gi, 2 * hidden);                              // input, forget
    apply_activation(gi + 2 * hidden, hidden, Activation::kTanh);  // cell
    sigmoid_in_place(gi + 3 * hidden, hidden);                     // output
    float* c = state + hidden;
    for (int64_t j = 0; j < hidden; ++j) c[j] = gi[hidden + j] * c[j] + gi[j] * gi[2 * hidden + j];
    for (int64_t j = 0; j < hidden; ++j) y[j] = c[j];
    apply_activation(y, hidden, Activation::kTanh);
    for (int64_t j = 0; j < hidden; ++j) y[j] *= gi[3 * hidden + j];
  } else {
    for (int64_t j = 0; j < 2 * hidden; ++j) gi[j] += gh[j];
    sigmoid_in_place(gi, 2 * hidden);  // reset, update
    for (int64_t j = 0; j < hidden; ++j) gi[2 * hidden + j] += gi[j] * gh[2 * hidden + j];
    apply_activation(gi + 2 * hidden, hidden, Activation::kTanh);  // new
    for (int64_t j = 0; j < hidden; ++j) {
      const float z = gi[hidden + j];
      y[j] = (1.0f - z) * gi[2 * hidden + j] + z * state[j];
    }
  }
  for (int64_t j = 0; j < hidden; ++j) state[j] = y[j];
}

void recurrent_step(RecurrentCell cell, int64_t in, int64_t hidden, const float* const* params, const float* x,
                    int64_t rows, float* state, float* y) {
  thread_local std::vector<float> from_input, from_state, h;
  const int64_t g = recurrent_gates(cell) * hidden;
  const int64_t s = cell == RecurrentCell::kLstm ? 2 * hidden : hidden;
  from_input.resize(static_cast<size_t>(rows * g));
  from_state.resize(static_cast<size_t>(rows * g));
  h.resize(static_cast<size_t>(rows * hidden));
  for (int64_t r = 0; r < rows; ++r) std::copy(state + r * s, state + r * s + hidden, h.data() + r * hidden);
  gate_products(x, rows, in, params[4], params[0], g, params[2], from_input.data());
  gate_products(h.data(), rows, hidden, params[5], params[1], g, params[3], from_state.data());
  for (int64_t r = 0; r < rows; ++r) {
    recurrent_cell_update(cell, hidden, from_input.data() + r * g, from_state.data() + r * g, state + r * s, y + r * hidden);
  }
}

LayerKind recurrent_layer_kind(RecurrentCell cell) {
  LayerKind kind;
  kind.output_size = [](const LayerSpec& layer) { return recurrent_hidden(layer); };
  kind.state_size = [cell](const LayerSpec& layer) {
    return (cell == RecurrentCell::kLstm ? 2 : 1) * recurrent_hidden(layer);
  };
  kind.parameters = [cell](const LayerSpec& layer) {
    const int64_t h = recurrent_hidden(layer), g = recurrent_gates(cell) * h;
    return std::vector<std::pair<std::string, std::vector<int64_t>>>{
        {"weight_ih", {g, layer.in}}, {"weight_hh", {g, h}}, {"bias_ih", {g}}, {"bias_hh", {g}}};
  };
  kind.initialize = [cell](const LayerSpec& layer, float* const* params, Rng& rng) {
    const int64_t h = recurrent_hidden(layer), g = recurrent_gates(cell) * h;
    if (layer.orthogonal_init) {
      orthogonal_fill(params[0], g, layer.in, layer.init_gain, rng);
      orthogonal_fill(params[1], g, h, layer.init_gain, rng);
      std::fill(params[2], params[2] + g, 0.0f);
      std::fill(params[3], params[3] + g, 0.0f);
      return;
    }
    const double bound = 1.0 / std::sqrt(static_cast<double>(h));
    const std::pair<float*, int64_t> all[] = {{params[0], g * layer.in}, {params[1], g * h}, {params[2], g}, {params[3], g}};
    for (const auto& [values, count] : all) {
      for (int64_t i = 0; i < count; ++i) values[i] = static_cast<float>(rng.uniform(-bound, bound));
    }
  };
  kind.derive = [cell](const LayerSpec& layer, const float* const* params) {
    const int64_t h = recurrent_hidden(layer), g = recurrent_gates(cell) * h;
    return std::vector<std::vector<float>>{transposed(params[0], g, layer.in), transposed(params[1], g, h)};
  };
  kind.step = [cell](const LayerSpec& layer, const float* const* params, const float* x, int64_t rows, float* state,
                     float* y) { recurrent_step(cell, layer.in, recurrent_hidden(layer), params, x, rows, state, y); };
  return kind;
}

}  // namespace rlx
