#include "models/model_spec_json.h"

#include <set>
#include <stdexcept>

#include "core/space_json.h"
#include "models/conv2d_layer.h"
#include "models/layer_kinds.h"
#include "models/recurrent_layers.h"

namespace rlx {

namespace {

using nlohmann::json;

constexpr size_t kMaxHiddenLayers = 16;
constexpr int64_t kMaxWidth = int64_t{1} << 16;
constexpr int64_t kMaxObservationSize = int64_t{1} << 24;
constexpr int64_t kMaxActionSize = int64_t{1} << 16;
constexpr size_t kMaxConvFilters = 16;

[[noreturn]] void refuse(const std::string& path, const std::string& what) {
  throw std::invalid_argument(path + ": " + what);
}

// The object at path with the keys named (all required) and perhaps some of the optional ones.
const json& object_with_keys(const json& value, const std::string& path, const std::set<std::string>& keys,
                             const std::set<std::string>& optional = {}) {
  if (!value.is_object()) refuse(path, "expected a JSON object, got " + value.dump());
  for (const auto& item : value.items()) {
    if (keys.count(item.key()) == 0 && optional.count(item.key()) == 0) {
      refuse(path + "." + item.key(), "unknown key (a newer rlx's model? this one reads model version " +
                                          std::to_string(kModelSpecVersion) + ")");
    }
  }
  for (const std::string& key : keys) {
    if (!value.contains(key)) refuse(path + "." + key, "missing");
  }
  return value;
}

int64_t integer_in(const json& value, const std::string& path, int64_t low, int64_t high) {
  if (!value.is_number_integer()) refuse(path, "expected an integer, got " + value.dump());
  const auto number = value.get<int64_t>();
  if (number < low || number > high) {
    refuse(path, std::to_string(number) + " is outside [" + std::to_string(low) + ", " + std::to_string(high) + "]");
  }
  return number;
}

bool boolean(const json& value, const std::string& path) {
  if (!value.is_boolean()) refuse(path, "expected true or false, got " + value.dump());
  return value.get<bool>();
}

std::string string_of(const json& value, const std::string& path, const std::set<std::string>& allowed) {
  std::string choices;
  for (const std::string& choice : allowed) choices += (choices.empty() ? "" : ", ") + choice;
  if (!value.is_string() || allowed.count(value.get<std::string>()) == 0) {
    refuse(path, "expected one of " + choices + ", got " + value.dump());
  }
  return value.get<std::string>();
}

Space action_space_of(const json& value, const std::string& path) {
  if (value.is_object() && value.contains("shape") && value.at("shape").is_array()) {
    int64_t count = 1;
    for (const json& dim : value.at("shape")) count *= integer_in(dim, path + ".shape[]", 1, kMaxActionSize);
    if (count > kMaxActionSize) refuse(path, "more than " + std::to_string(kMaxActionSize) + " action values");
  }
  Space space;
  space = space_from_json(value, path);
  if (space.flat_size() > kMaxActionSize) refuse(path, "more than " + std::to_string(kMaxActionSize) + " actions");
  return space;
}

// {kind, hidden_sizes, activation, shared} and, for the cnn encoder, conv_filters [[out, kernel, stride], ...].
json encoder_to_json(const ModelSpec& spec) {
  json encoder = {{"kind", spec.encoder},
                  {"hidden_sizes", spec.hidden_sizes},
                  {"activation", spec.activation},
                  {"shared", spec.shared_trunk}};
  if (!spec.conv_filters.empty()) {
    json filters = json::array();
    for (const ConvFilter& f : spec.conv_filters) filters.push_back({f.out_channels, f.kernel, f.stride});
    encoder["conv_filters"] = filters;
  }
  return encoder;
}

std::vector<ConvFilter> conv_filters_of(const json& value, const std::string& path) {
  if (!value.is_array() || value.size() > kMaxConvFilters) {
    refuse(path, "expected a list of at most " + std::to_string(kMaxConvFilters) + " [out, kernel, stride] triples, got " +
                     value.dump());
  }
  std::vector<ConvFilter> filters;
  for (size_t i = 0; i < value.size(); ++i) {
    const std::string entry = path + "[" + std::to_string(i) + "]";
    const json& triple = value[i];
    if (!triple.is_array() || triple.size() != 3) refuse(entry, "expected [out, kernel, stride], got " + triple.dump());
    filters.push_back({integer_in(triple[0], entry + "[0]", 1, kMaxConv2dAttribute),
                       integer_in(triple[1], entry + "[1]", 1, kMaxConv2dAttribute),
                       integer_in(triple[2], entry + "[2]", 1, kMaxConv2dAttribute)});
  }
  return filters;
}

// A list of at most kMaxHiddenLayers layer widths, each in [1, kMaxWidth].
std::vector<int64_t> widths_of(const json& value, const std::string& path) {
  if (!value.is_array()) refuse(path, "expected a list of integers, got " + value.dump());
  if (value.size() > kMaxHiddenLayers) {
    refuse(path, std::to_string(value.size()) + " layers, at most " + std::to_string(kMaxHiddenLayers));
  }
  std::vector<int64_t> widths;
  for (size_t i = 0; i < value.size(); ++i) {
    widths.push_back(integer_in(value[i], path + "[" + std::to_string(i) + "]", 1, kMaxWidth));
  }
  return widths;
}

}  // namespace

json model_spec_to_json(const ModelSpec& spec) {
  json out = {{"version", kModelSpecVersion},
          {"kind", model_kind_name(spec.kind)},
          {"observation_size", spec.obs_size},
          {"observation_space", space_to_json(spec.input_space())},
          {"action_mask", spec.action_mask},
          {"action_space", space_to_json(spec.action_space)},
          {"encoder", encoder_to_json(spec)},
          {"heads", {{"log_std_init", spec.log_std_init}, {"dueling", spec.dueling}}},
          {"init", spec.ortho_init ? "orthogonal" : "torch_default"}};
  if (spec.recurrent()) out["core"] = {{"kind", spec.core}, {"size", spec.core_size}, {"layers", spec.core_layers}};
  // Only a model with head layers has the key: a model without is written as before them.
  if (!spec.head_sizes.empty()) out["heads"]["hidden_sizes"] = spec.head_sizes;
  // Likewise only a gSDE model has "sde"; a reader from before gSDE refuses it by name.
  if (spec.sde) out["heads"]["sde"] = {{"sample_freq", spec.sde_sample_freq}};
  return out;
}

ModelSpec model_spec_from_json(const json& value, const std::string& where) {
  int64_t version = kModelSpecVersion;
  if (value.is_object() && value.contains("version")) {
    const json& given = value.at("version");
    if (!given.is_number_integer() || given.get<int64_t>() < 1 || given.get<int64_t>() > kModelSpecVersion) {
      refuse(where + ".version", "model version " + given.dump() + ", this rlx reads versions 1 to " +
                                     std::to_string(kModelSpecVersion));
    }
    version = given.get<int64_t>();
  }
  std::set<std::string> keys = {"version", "kind", "observation_size", "action_space", "encoder", "heads", "init"};
  if (version >= 2) keys.insert({"observation_space", "action_mask"});  // version 1: a float32 Box, no mask
  const json& in = object_with_keys(value, where, keys, {"core"});
  ModelSpec spec;
  const std::string kind = string_of(in.at("kind"), where + ".kind", {"actor_critic", "q_network", "squashed_gaussian"});
  spec.kind = *parse_model_kind(kind);
  spec.obs_size = integer_in(in.at("observation_size"), where + ".observation_size", 1, kMaxObservationSize);
  spec.action_space = action_space_of(in.at("action_space"), where + ".action_space");
  if (version >= 2) {
    spec.observation_space = space_from_json(in.at("observation_space"), where + ".observation_space");
    spec.action_mask = boolean(in.at("action_mask"), where + ".action_mask");
  }

  const std::string encoder_path = where + ".encoder";
  const json& encoder = object_with_keys(in.at("encoder"), encoder_path, {"kind", "hidden_sizes", "activation", "shared"},
                                       {"conv_filters"});
  const std::vector<std::string> encoder_kinds = encoder_kind_names();
  spec.encoder = string_of(encoder.at("kind"), encoder_path + ".kind", {encoder_kinds.begin(), encoder_kinds.end()});
  const json& widths = encoder.at("hidden_sizes");
  spec.hidden_sizes = widths_of(widths, encoder_path + ".hidden_sizes");
  spec.activation = string_of(encoder.at("activation"), encoder_path + ".activation", {"relu", "tanh"});
  spec.shared_trunk = boolean(encoder.at("shared"), encoder_path + ".shared");
  if (encoder.contains("conv_filters")) spec.conv_filters = conv_filters_of(encoder.at("conv_filters"), encoder_path + ".conv_filters");

  const std::string heads_path = where + ".heads";
  const json& heads = object_with_keys(in.at("heads"), heads_path, {"log_std_init", "dueling"}, {"hidden_sizes", "sde"});
  const json& log_std = heads.at("log_std_init");
  if (!log_std.is_number() || !(log_std.get<double>() >= -20.0 && log_std.get<double>() <= 5.0)) {
    refuse(heads_path + ".log_std_init", "expected a number in [-20, 5], got " + log_std.dump());
  }
  spec.log_std_init = log_std.get<double>();
  spec.dueling = boolean(heads.at("dueling"), heads_path + ".dueling");
  if (heads.contains("hidden_sizes")) spec.head_sizes = widths_of(heads.at("hidden_sizes"), heads_path + ".hidden_sizes");
  if (heads.contains("sde")) {
    const json& sde = object_with_keys(heads.at("sde"), heads_path + ".sde", {"sample_freq"});
    spec.sde = true;
    spec.sde_sample_freq = integer_in(sde.at("sample_freq"), heads_path + ".sde.sample_freq", -1, int64_t{1} << 40);
  }
  spec.ortho_init = string_of(in.at("init"), where + ".init", {"orthogonal", "torch_default"}) == "orthogonal";
  if (in.contains("core")) {
    const std::string core_path = where + ".core";
    const json& core = object_with_keys(in.at("core"), core_path, {"kind", "size", "layers"});
    spec.core = string_of(core.at("kind"), core_path + ".kind", {kLstmLayer, kGruLayer});
    spec.core_size = integer_in(core.at("size"), core_path + ".size", 1, kMaxRecurrentHidden);
    spec.core_layers = integer_in(core.at("layers"), core_path + ".layers", 1, kMaxCoreLayers);
  }
  try {
    spec.validate();
  } catch (const std::invalid_argument& error) {
    refuse(where, error.what());
  }
  return spec;
}

}  // namespace rlx
