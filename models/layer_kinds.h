// Where a new kind of layer or encoder goes. A model's chains (models/network_layout.h) hold
// "dense" layers and layers of kinds registered here; a ModelSpec's encoder is "mlp" or a kind
// registered here. A layer kind is described once for the spec (its parameters, width and
// initialisation) with its torch-free forward (workers, `rlx evaluate`, rlx::Policy), and once
// for LibTorch (learner/torch_layers.h: autograd on the learner, CPU and CUDA). The hand-written
// backward passes (learner/*_backprop.h, native/) are speed-ups for dense MLPs only: a model with
// another kind trains on LibTorch's autograd, and the native learners refuse it.
// tests/learner/toy_layer_test.cc adds a kind this way. Registration is thread-safe; register
// before building models that use the kind. Built in, in every process that links rlx_models:
// "conv2d" (models/conv2d_layer.h; its LibTorch forward is learner/torch_conv2d.h), the recurrent
// "lstm" and "gru" (models/recurrent_layers.h), and the encoder kinds "mlp" and "cnn"
// (models/cnn_encoder.h).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/rng.h"
#include "models/model_spec.h"
#include "models/network_layout.h"

namespace rlx {

// A layer kind besides "dense". output_size and parameters are asked before the layer's `out` and
// `parameters` are set: they read its `in` and `attributes`, and throw std::invalid_argument
// naming the layer and the attribute when those do not fit the kind.
struct LayerKind {
  // The width of its output for the layer's `in` input features and attributes.
  std::function<int64_t(const LayerSpec& layer)> output_size;
  // Its parameters' names (the part after "layer."), with their shapes, in flat order.
  std::function<std::vector<std::pair<std::string, std::vector<int64_t>>>(const LayerSpec& layer)> parameters;
  // Fresh values of its parameters: params[i] points to parameter i's values (layer.parameters order).
  std::function<void(const LayerSpec& layer, float* const* params, Rng& rng)> initialize;
  // y[rows, out] = the layer's map of x[rows, in] (the chain applies layer.activation after it);
  // params[i] points to parameter i's values. y never aliases x.
  std::function<void(const LayerSpec& layer, const float* const* params, const float* x, int64_t rows, float* y)>
      forward;
  // Optional: how many leading features of each output row the chain's activation applies to, for
  // a kind that carries features through unchanged after its own (empty: all `out`).
  std::function<int64_t(const LayerSpec& layer)> activated_outputs;
  // A recurrent kind (models/recurrent_layers.h) sets these two instead of forward: the floats of
  // state one row carries from step to step, and one step, y[rows, out] = its map of x[rows, in]
  // with each row's state [rows, state_size] read and overwritten in place.
  std::function<int64_t(const LayerSpec& layer)> state_size;
  std::function<void(const LayerSpec& layer, const float* const* params, const float* x, int64_t rows, float* state,
                     float* y)>
      step;
  // Optional: buffers computed from the parameters once per weight load (e.g. transposed weights
  // for a faster product), which the torch-free kernel passes to forward / step after the
  // parameters, params[P], params[P + 1], ... in this order.
  std::function<std::vector<std::vector<float>>(const LayerSpec& layer, const float* const* params)> derive;
};

// One layer an encoder kind asks for: a dense layer of `size` units, or a registered kind.
struct EncoderLayer {
  std::string kind = kDenseLayer;
  int64_t size = 0;  // dense: its width; other kinds: ignored (the kind decides)
  Activation activation = Activation::kNone;
  std::map<std::string, int64_t> attributes = {};  // other kinds: the layer's LayerSpec::attributes; dense: empty
};

// An encoder kind: the layers, in order, an encoder of a spec is made of.
using EncoderKind = std::function<std::vector<EncoderLayer>(const ModelSpec& spec)>;

// Adds a layer kind (forward, or state_size and step); throws std::invalid_argument when the name
// is "dense", empty or taken ("conv2d", "lstm" and "gru" are built in).
void register_layer_kind(const std::string& name, LayerKind kind);
// The registered kind; throws std::invalid_argument naming the known kinds otherwise.
const LayerKind& find_layer_kind(const std::string& name);

// The leading features of each of the layer's output rows that its activation applies to: `out`
// for a dense layer or a kind without activated_outputs.
int64_t activated_outputs(const LayerSpec& layer);
// The floats of state each row of the layer carries between steps: 0 unless its kind is recurrent.
int64_t layer_state_size(const LayerSpec& layer);

// Adds an encoder kind; throws std::invalid_argument when the name is empty or taken ("mlp" is built in).
void register_encoder_kind(const std::string& name, EncoderKind kind);
// True when the encoder kind is built in or registered.
bool encoder_kind_known(const std::string& name);
// The names of every encoder kind, sorted.
std::vector<std::string> encoder_kind_names();
// The layers of the spec's encoder (its `encoder` kind); throws std::invalid_argument naming the
// known kinds when that kind is unknown.
std::vector<EncoderLayer> encoder_layers(const ModelSpec& spec);

}  // namespace rlx
