#include "models/policy_file.h"

#include <array>
#include <cstring>
#include <optional>
#include <system_error>

#include "core/file_read.h"
#include "core/space_json.h"
#include "models/layer_kinds.h"
#include "models/model_spec_json.h"
#include "models/network_layout.h"

namespace rlx {

namespace {

using nlohmann::json;

constexpr char kMagic[8] = {'\x89', 'R', 'L', 'X', 'P', '\r', '\n', '\x1a'};
constexpr size_t kPreambleBytes = 16;  // magic, version, header length
constexpr size_t kChecksumBytes = 4;
constexpr size_t kMaxHeaderBytes = size_t{1} << 26;

const char* activation_name(Activation activation) {
  switch (activation) {
    case Activation::kNone: return "none";
    case Activation::kTanh: return "tanh";
    case Activation::kRelu: return "relu";
  }
  return "?";
}

json chain_json(const LayerChain& chain) {
  json layers = json::array();
  for (const LayerSpec& layer : chain) {
    if (!layer.dense()) {  // a registered kind (models/layer_kinds.h): its parameters spelled out
      json parameters = json::array();
      for (const ParameterSpec& p : layer.parameters) {
        parameters.push_back({{"name", p.name}, {"shape", p.shape}, {"offset", p.offset}});
      }
      layers.push_back({{"kind", layer.kind},
                        {"name", layer.name},
                        {"in", layer.in},
                        {"out", layer.out},
                        {"attributes", json(layer.attributes)},
                        {"activation", activation_name(layer.activation)},
                        {"parameters", parameters}});
      // A recurrent layer: where its state lies in the model's (the header's "state_size" floats).
      if (layer_state_size(layer) > 0) layers.back()["state_offset"] = layer.state_offset;
      continue;
    }
    layers.push_back({{"name", layer.name},
                      {"in", layer.in},
                      {"out", layer.out},
                      {"activation", activation_name(layer.activation)},
                      {"weight_offset", layer.weight_offset()},
                      {"bias_offset", layer.bias_offset()}});
  }
  return layers;
}

// The network's layout as the header spells it: {"chains", "log_std_offset", "num_parameters"}
// and, for a recurrent model, "state_size".
json layout_json(const ModelSpec& model) {
  json out;
  switch (model.kind) {
    case ModelKind::kActorCritic: {
      const ActorCriticLayout layout = actor_critic_layout(model);
      out["chains"] = {{"trunk", chain_json(layout.trunk)},
                       {"policy", chain_json(layout.policy_chain)},
                       {"value", chain_json(layout.value_chain)}};
      out["log_std_offset"] = layout.log_std ? json(layout.log_std->offset) : json();
      out["num_parameters"] = layout.num_parameters;
      if (layout.recurrent()) out["state_size"] = layout.state_size;  // memoryless: no key, as before cores
      break;
    }
    case ModelKind::kQNetwork: {
      const QNetworkLayout layout = q_network_layout(model);
      out["chains"] = {{"trunk", chain_json(layout.trunk)}, {"heads", chain_json(layout.heads)}};
      out["log_std_offset"] = json();
      out["num_parameters"] = layout.num_parameters;
      break;
    }
    case ModelKind::kSquashedGaussian: {
      const SquashedGaussianLayout layout = squashed_gaussian_layout(model);
      out["chains"] = {{"policy", chain_json(layout.chain)}};
      out["log_std_offset"] = json();
      out["num_parameters"] = layout.num_parameters;
      break;
    }
  }
  return out;
}

// The first difference between a header's "chains" and the ones rlx builds, naming the chain,
// the layer and its field or attribute; "" when they are equal.
std::string chains_difference(const json& file, const json& expected) {
  if (!file.is_object()) return "the file's are " + file.dump();
  for (const auto& [chain, layers] : file.items()) {
    if (!expected.contains(chain)) return "the file has a chain \"" + chain + "\" the model does not";
  }
  for (const auto& [chain, want_layers] : expected.items()) {
    if (!file.contains(chain)) return "the file lacks chain \"" + chain + "\"";
    const json& layers = file.at(chain);
    if (!layers.is_array() || layers.size() != want_layers.size()) {
      return "chain \"" + chain + "\" has " + (layers.is_array() ? std::to_string(layers.size()) : layers.dump()) +
             " layers in the file, " + std::to_string(want_layers.size()) + " in the model";
    }
    for (size_t i = 0; i < layers.size(); ++i) {
      const json& have = layers[i];
      const json& want = want_layers[i];
      if (have == want) continue;
      const std::string where = "chain \"" + chain + "\" layer " + std::to_string(i) + " (" + want.at("name").dump() + ")";
      if (!have.is_object()) return where + " is " + have.dump();
      for (const auto& [key, value] : have.items()) {
        if (!want.contains(key)) return where + ": the file has a \"" + key + "\" the model does not";
      }
      for (const auto& [key, value] : want.items()) {
        if (!have.contains(key)) return where + ": the file lacks \"" + key + "\"";
        const json& got = have.at(key);
        if (key == "attributes" && got.is_object()) {
          for (const auto& [attribute, got_value] : got.items()) {
            if (!value.contains(attribute)) {
              return where + ": attribute \"" + attribute + "\" is " + got_value.dump() + " in the file, not in the model";
            }
          }
          for (const auto& [attribute, want_value] : value.items()) {
            if (!got.contains(attribute) || got.at(attribute) != want_value) {
              return where + ": attribute \"" + attribute + "\" is " +
                     (got.contains(attribute) ? got.at(attribute).dump() : std::string("missing")) + " in the file, " +
                     want_value.dump() + " in the model";
            }
          }
        }
        if (got != value) return where + ": \"" + key + "\" is " + got.dump() + " in the file, " + value.dump() + " in the model";
      }
    }
  }
  return "";
}

// A version-1 header's model: "policy", "observation_size", "action_space" and "network".
ModelSpec version_1_model(const json& header) {
  ModelSpec model;
  const std::string kind = header.at("policy").get<std::string>();
  const std::optional<ModelKind> parsed = parse_model_kind(kind);
  if (!parsed) {
    throw std::invalid_argument("\"policy\" must be \"actor_critic\", \"q_network\" or \"squashed_gaussian\", got \"" +
                                kind + "\"");
  }
  model.kind = *parsed;
  model.obs_size = header.at("observation_size").get<int64_t>();
  model.action_space = space_from_json(header.at("action_space"));
  const json& network = header.at("network");
  model.hidden_sizes = network.at("hidden_sizes").get<std::vector<int64_t>>();
  model.activation = network.at("activation").get<std::string>();
  model.shared_trunk = network.at("shared_trunk").get<bool>();
  model.log_std_init = network.at("log_std_init").get<double>();
  model.dueling = network.at("dueling").get<bool>();
  model.validate();
  return model;
}

void put_u32(std::string& out, uint32_t value) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xffu));
}

uint32_t get_u32(std::string_view bytes, size_t at) {
  uint32_t value = 0;
  for (int i = 0; i < 4; ++i) value |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[at + i])) << (8 * i);
  return value;
}

size_t padded(size_t size) { return (size + 7) / 8 * 8; }

// Appends floats little-endian (the byte order of every machine rlx builds on, checked below).
void put_floats(std::string& out, const std::vector<float>& values) {
  static_assert(sizeof(float) == 4, "float32 data");
  const size_t at = out.size();
  out.resize(at + 4 * values.size());
  if (!values.empty()) std::memcpy(&out[at], values.data(), 4 * values.size());
}

std::vector<float> get_floats(std::string_view data, size_t offset, size_t count) {
  std::vector<float> values(count);
  if (count > 0) std::memcpy(values.data(), data.data() + 4 * offset, 4 * count);
  return values;
}

// The decoder's errors: "<name>: <what>".
[[noreturn]] void refuse(const std::string& name, const std::string& what) {
  throw PolicyFileError(name + ": " + what);
}

}  // namespace

uint32_t crc32_ieee(std::string_view bytes) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1u) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t crc = 0xFFFFFFFFu;
  for (char byte : bytes) crc = table[(crc ^ static_cast<unsigned char>(byte)) & 0xffu] ^ (crc >> 8);
  return crc ^ 0xFFFFFFFFu;
}

std::string encode_policy_file(const PolicyFile& file) {
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "policy files are little-endian");
  file.model.validate();
  json header = layout_json(file.model);
  const size_t num_parameters = header.at("num_parameters").get<size_t>();
  if (file.parameters.size() != num_parameters) {
    throw std::invalid_argument("the policy has " + std::to_string(file.parameters.size()) +
                                " parameters, its network needs " + std::to_string(num_parameters));
  }
  const auto obs_size = static_cast<size_t>(file.model.obs_size);
  const bool normalized = !file.obs_mean.empty();
  if (normalized && (file.obs_mean.size() != obs_size || file.obs_var.size() != obs_size)) {
    throw std::invalid_argument("observation statistics need " + std::to_string(obs_size) + " means and variances");
  }
  header["format"] = "rlx-policy";
  header["version"] = kPolicyFileVersion;
  header["model"] = model_spec_to_json(file.model);
  header["arrays"] = {{"parameters", {{"offset", 0}, {"count", num_parameters}}}};
  size_t data_floats = num_parameters;
  if (normalized) {
    header["arrays"]["obs_mean"] = {{"offset", data_floats}, {"count", obs_size}};
    header["arrays"]["obs_var"] = {{"offset", data_floats + obs_size}, {"count", obs_size}};
    data_floats += 2 * obs_size;
    header["obs_normalization"] = {{"epsilon", kObsNormEpsilon}, {"clip", kObsNormClip}, {"count", file.obs_count}};
  } else {
    header["obs_normalization"] = json();
  }
  header["epsilon"] = file.epsilon;
  header["data_floats"] = data_floats;
  header["source"] = file.source;
  header["source"]["algorithm"] = file.algorithm;
  header["source"]["env"] = file.env_id;

  const std::string header_text = header.dump();
  std::string out(kMagic, sizeof(kMagic));
  put_u32(out, kPolicyFileVersion);
  put_u32(out, static_cast<uint32_t>(header_text.size()));
  out += header_text;
  out.resize(padded(out.size()), '\0');
  put_floats(out, file.parameters);
  if (normalized) {
    put_floats(out, file.obs_mean);
    put_floats(out, file.obs_var);
  }
  put_u32(out, crc32_ieee(out));
  return out;
}

PolicyFile decode_policy_file(std::string_view bytes, const std::string& name) {
  if (bytes.size() < kPreambleBytes + kChecksumBytes || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    refuse(name, "not an rlx policy file (no \\x89RLXP magic; write one with `rlx export CHECKPOINT -o FILE`)");
  }
  const uint32_t version = get_u32(bytes, 8);
  if (version != kPolicyFileVersion && version != kPolicyFileVersion - 1) {
    refuse(name, "format version " + std::to_string(version) + ", this rlx reads versions " +
                     std::to_string(kPolicyFileVersion - 1) + " and " + std::to_string(kPolicyFileVersion) +
                     (version > kPolicyFileVersion ? " (export it again with this rlx, or use a newer one)" : ""));
  }
  const size_t header_bytes = get_u32(bytes, 12);
  if (header_bytes > kMaxHeaderBytes || kPreambleBytes + header_bytes + kChecksumBytes > bytes.size()) {
    refuse(name, "truncated: " + std::to_string(bytes.size()) + " bytes cannot hold its " +
                     std::to_string(header_bytes) + "-byte header");
  }
  json header;
  try {
    header = json::parse(bytes.substr(kPreambleBytes, header_bytes));
  } catch (const json::exception& error) {
    refuse(name, std::string("damaged header (not JSON): ") + error.what());
  }
  const size_t data_start = padded(kPreambleBytes + header_bytes);
  size_t data_floats = 0;
  try {
    data_floats = header.at("data_floats").get<size_t>();
  } catch (const json::exception& error) {
    refuse(name, std::string("damaged header: ") + error.what());
  }
  const size_t expected_size = data_start + 4 * data_floats + kChecksumBytes;
  if (data_floats > bytes.size() || bytes.size() != expected_size) {
    refuse(name, (bytes.size() < expected_size ? "truncated: " : "trailing bytes: ") + std::to_string(bytes.size()) +
                     " bytes, its header promises " + std::to_string(expected_size));
  }
  const size_t body = bytes.size() - kChecksumBytes;
  if (crc32_ieee(bytes.substr(0, body)) != get_u32(bytes, body)) {
    refuse(name, "damaged: its CRC-32 does not match its contents");
  }

  PolicyFile file;
  try {
    if (header.at("format") != "rlx-policy") refuse(name, "header format is " + header.at("format").dump());
    file.model = version == 1 ? version_1_model(header) : model_spec_from_json(header.at("model"), "model");
    const json expected = layout_json(file.model);
    const std::string chains = chains_difference(header.at("chains"), expected.at("chains"));
    if (!chains.empty()) {
      refuse(name, "its \"chains\" differ from the network rlx builds for its model " +
                       model_spec_to_json(file.model).dump() + ": " + chains);
    }
    for (const char* key : {"log_std_offset", "num_parameters", "state_size"}) {
      const auto value = [key](const json& object) { return object.contains(key) ? object.at(key).dump() : "none"; };
      if (value(header) != value(expected)) {
        refuse(name, std::string("its \"") + key + "\" differ from the network rlx builds for its model " +
                         model_spec_to_json(file.model).dump() + ": file " + value(header) + ", expected " +
                         value(expected));
      }
    }
    const std::string_view data = bytes.substr(data_start, 4 * data_floats);
    const auto array = [&](const char* key, size_t count) {
      const json& entry = header.at("arrays").at(key);
      const size_t offset = entry.at("offset").get<size_t>();
      if (entry.at("count").get<size_t>() != count || offset > data_floats || count > data_floats - offset) {
        refuse(name, std::string("array \"") + key + "\" " + entry.dump() + " does not fit " + std::to_string(count) +
                         " values into " + std::to_string(data_floats) + " floats of data");
      }
      return get_floats(data, offset, count);
    };
    file.parameters = array("parameters", expected.at("num_parameters").get<size_t>());
    if (!header.at("obs_normalization").is_null()) {
      const auto obs_size = static_cast<size_t>(file.model.obs_size);
      file.obs_mean = array("obs_mean", obs_size);
      file.obs_var = array("obs_var", obs_size);
      file.obs_count = header.at("obs_normalization").at("count").get<double>();
    }
    file.epsilon = header.at("epsilon").get<double>();
    if (!(file.epsilon >= 0.0 && file.epsilon <= 1.0)) refuse(name, "epsilon must lie in [0, 1]");
    file.source = header.at("source");
    file.algorithm = file.source.at("algorithm").get<std::string>();
    file.env_id = file.source.at("env").get<std::string>();
  } catch (const json::exception& error) {
    refuse(name, std::string("damaged header: ") + error.what());
  } catch (const std::invalid_argument& error) {
    refuse(name, std::string("bad header: ") + error.what());
  }
  return file;
}

PolicyFile read_policy_file(const std::filesystem::path& path) {
  std::string contents;
  try {
    contents = read_file(path);
  } catch (const std::system_error& error) {
    throw PolicyFileError(path.string() + ": cannot read the policy file: " + file_error_reason(error));
  }
  return decode_policy_file(contents, path.string());
}

}  // namespace rlx
