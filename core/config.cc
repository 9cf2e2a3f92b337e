// Config: typed storage of the resolved values.
#include "core/config.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace rlx {
namespace {

const KeySpec& schema_key(std::string_view key) {
  const KeySpec* spec = find_key(key);
  if (!spec) throw std::logic_error("config key '" + std::string(key) + "' is not in the schema");
  return *spec;
}

template <typename T>
const T& typed(const ConfigValue& value, std::string_view key, const char* getter) {
  if (const T* v = std::get_if<T>(&value)) return *v;
  throw std::logic_error(std::string(getter) + "(\"" + std::string(key) + "\"): the key is " +
                         type_description(schema_key(key).type));
}

}  // namespace

Config::Config() {
  for (const auto& key : config_schema()) values_.emplace(key.name, key.default_value);
}

const ConfigValue& Config::get(std::string_view key) const {
  const auto it = values_.find(key);
  if (it == values_.end()) schema_key(key);  // throws
  return it->second;
}

int64_t Config::get_int(std::string_view key) const { return typed<int64_t>(get(key), key, "get_int"); }
double Config::get_double(std::string_view key) const { return typed<double>(get(key), key, "get_double"); }
bool Config::get_bool(std::string_view key) const { return typed<bool>(get(key), key, "get_bool"); }
const std::string& Config::get_string(std::string_view key) const {
  return typed<std::string>(get(key), key, "get_string");
}
const IntList& Config::get_int_list(std::string_view key) const { return typed<IntList>(get(key), key, "get_int_list"); }

void Config::set(std::string_view key, ConfigValue value) {
  const KeySpec& spec = schema_key(key);
  values_.find(key)->second = checked_value(spec, std::move(value));
}

void Config::set_json(std::string_view key, const nlohmann::json& value) {
  const KeySpec& spec = schema_key(key);
  auto converted = value_from_json(spec.type, value);
  if (!converted) {
    throw ConfigError("config key '" + spec.name + "': got " + value.dump() + ", expected " + spec.expected());
  }
  set(key, std::move(*converted));
}

nlohmann::json Config::to_json(AlgorithmKind algorithm) const {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& key : config_schema()) {
    if (key.applies_to(algorithm)) out[key.name] = value_to_json(get(key.name));
  }
  return out;
}

ConfigValue checked_value(const KeySpec& key, ConfigValue value) {
  if (key.type == ConfigType::kFloat) {
    if (const int64_t* i = std::get_if<int64_t>(&value)) value = static_cast<double>(*i);
  }
  const bool type_ok = (key.type == ConfigType::kInt && std::holds_alternative<int64_t>(value)) ||
                       (key.type == ConfigType::kFloat && std::holds_alternative<double>(value)) ||
                       (key.type == ConfigType::kBool && std::holds_alternative<bool>(value)) ||
                       (key.type == ConfigType::kString && std::holds_alternative<std::string>(value)) ||
                       (key.type == ConfigType::kIntList && std::holds_alternative<IntList>(value));
  if (type_ok && key.type == ConfigType::kFloat && !std::isfinite(std::get<double>(value))) {
    throw ConfigError("config key '" + key.name + "': got " + format_value(value) + ", expected a finite " +
                      key.expected().substr(2));
  }
  if (!type_ok) {
    throw ConfigError("config key '" + key.name + "': got " + format_value(value) + ", expected " + key.expected());
  }
  if (auto problem = key.problem_with(value)) {
    throw ConfigError("config key '" + key.name + "': got " + format_value(value) + ", expected " + key.expected() +
                      " (" + *problem + ")");
  }
  return value;
}

std::optional<ConfigValue> value_from_json(ConfigType type, const nlohmann::json& value) {
  switch (type) {
    case ConfigType::kInt:
      if (value.is_number_integer()) return ConfigValue(value.get<int64_t>());
      if (value.is_number_float()) {
        const double v = value.get<double>();
        if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9.2e18) return ConfigValue(static_cast<int64_t>(v));
      }
      return std::nullopt;
    case ConfigType::kFloat:
      if (value.is_number()) return ConfigValue(value.get<double>());
      return std::nullopt;
    case ConfigType::kBool:
      if (value.is_boolean()) return ConfigValue(value.get<bool>());
      return std::nullopt;
    case ConfigType::kString:
      if (value.is_string()) return ConfigValue(value.get<std::string>());
      return std::nullopt;
    case ConfigType::kIntList: {
      if (!value.is_array()) return std::nullopt;
      IntList list;
      for (const auto& element : value) {
        auto v = value_from_json(ConfigType::kInt, element);
        if (!v) return std::nullopt;
        list.push_back(std::get<int64_t>(*v));
      }
      return ConfigValue(std::move(list));
    }
  }
  return std::nullopt;
}

nlohmann::json value_to_json(const ConfigValue& value) {
  return std::visit([](const auto& v) { return nlohmann::json(v); }, value);
}

int64_t effective_train_batch_size(const Config& config) {
  const int64_t fragment = config.get_int("num_envs_per_worker") * config.get_int("rollout_fragment_length");
  int64_t size = config.get_int("train_batch_size");
  if (size == 0) size = std::max<int64_t>(config.get_int("num_workers"), 1) * fragment;
  return std::max(size, fragment);
}

}  // namespace rlx
