#include "models/layer_kinds.h"

#include <stdexcept>

#include "core/named_registry.h"
#include "models/cnn_encoder.h"
#include "models/conv2d_layer.h"
#include "models/recurrent_layers.h"

namespace rlx {

namespace {

constexpr const char* kMlpEncoder = "mlp";

// The MLP encoder: one dense layer per hidden size, each with the spec's activation.
std::vector<EncoderLayer> mlp_layers(const ModelSpec& spec) {
  std::vector<EncoderLayer> layers;
  for (int64_t width : spec.hidden_sizes) layers.push_back({kDenseLayer, width, parse_activation(spec.activation)});
  return layers;
}

NamedRegistry<LayerKind>& layer_kinds() {
  static NamedRegistry<LayerKind> registry("layer kind");
  // The built-in kinds, once, thread-safe; referenced from here, so no process that links
  // rlx_models (a static library) can lose them.
  static const bool built_in = (registry.add(kConv2dLayer, conv2d_layer_kind()),
                                registry.add(kLstmLayer, recurrent_layer_kind(RecurrentCell::kLstm)),
                                registry.add(kGruLayer, recurrent_layer_kind(RecurrentCell::kGru)), true);
  (void)built_in;
  return registry;
}

NamedRegistry<EncoderKind>& encoder_kinds() {
  static NamedRegistry<EncoderKind> registry("encoder kind");
  static const bool built_in =  // once, thread-safe
      (registry.add(kMlpEncoder, mlp_layers), registry.add(kCnnEncoder, cnn_encoder_layers), true);
  (void)built_in;
  return registry;
}

}  // namespace

void register_layer_kind(const std::string& name, LayerKind kind) {
  if (name == kDenseLayer) throw std::invalid_argument("layer kind 'dense' is built in");
  const bool recurrent = kind.state_size && kind.step;
  if (!kind.output_size || !kind.parameters || !kind.initialize || (!kind.forward && !recurrent) ||
      (kind.forward && (kind.state_size || kind.step))) {
    throw std::invalid_argument("layer kind '" + name +
                                "' needs output_size, parameters, initialize and either forward or state_size and step");
  }
  layer_kinds().add(name, std::move(kind));
}

const LayerKind& find_layer_kind(const std::string& name) {
  if (const LayerKind* kind = layer_kinds().find(name)) return *kind;
  std::vector<std::string> known = layer_kinds().names();
  known.insert(known.begin(), kDenseLayer);
  throw std::invalid_argument("unknown layer kind '" + name + "' (known: " + joined_names(known) + ")");
}

int64_t activated_outputs(const LayerSpec& layer) {
  if (layer.dense()) return layer.out;
  const LayerKind& kind = find_layer_kind(layer.kind);
  return kind.activated_outputs ? kind.activated_outputs(layer) : layer.out;
}

int64_t layer_state_size(const LayerSpec& layer) {
  if (layer.dense()) return 0;
  const LayerKind& kind = find_layer_kind(layer.kind);
  return kind.state_size ? kind.state_size(layer) : 0;
}

void register_encoder_kind(const std::string& name, EncoderKind kind) {
  if (!kind) throw std::invalid_argument("encoder kind '" + name + "': an empty function");
  encoder_kinds().add(name, std::move(kind));
}

bool encoder_kind_known(const std::string& name) { return encoder_kinds().find(name) != nullptr; }

std::vector<std::string> encoder_kind_names() { return encoder_kinds().names(); }

std::vector<EncoderLayer> encoder_layers(const ModelSpec& spec) {
  const EncoderKind* kind = encoder_kinds().find(spec.encoder);
  if (kind == nullptr) {
    throw std::invalid_argument("unknown encoder kind '" + spec.encoder + "' (known: " +
                                joined_names(encoder_kind_names()) + ")");
  }
  return (*kind)(spec);
}

}  // namespace rlx
