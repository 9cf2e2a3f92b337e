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

}  // namespace

ConfigValue Config::get(std::string_view key) const {
  const KeySpec& spec = schema_key(key);
  return std::visit([this](const auto& member) { return member.read(section(member)); }, spec.bindings.at(0));
}

void Config::set(std::string_view key, ConfigValue value) {
  const KeySpec& spec = schema_key(key);
  const ConfigValue checked = checked_value(spec, std::move(value));
  for (const auto& binding : spec.bindings) {
    std::visit([this, &checked](const auto& member) { member.write(section(member), checked); }, binding);
  }
}

void Config::set_json(std::string_view key, const nlohmann::json& value) {
  const KeySpec& spec = schema_key(key);
  auto converted = value_from_json(spec.type, value);
  if (!converted) {
    throw ConfigError("config key '" + spec.name + "': got " + value.dump() + ", expected " + spec.expected() +
                      (value.is_number() ? lone_integer_hint(spec, value.dump(), ListSyntax::kFile) : ""));
  }
  set(key, std::move(*converted));
}

bool Config::operator==(const Config& other) const {
  for (const auto& key : config_schema()) {
    if (get(key.name) != other.get(key.name)) return false;
  }
  return true;
}

void Config::apply_algorithm_defaults(AlgorithmKind algorithm, const std::function<bool(const std::string&)>& keep) {
  for (const auto& key : config_schema()) {
    if (key.algorithm_defaults.empty() || (keep && keep(key.name))) continue;
    set(key.name, key.default_value_for(algorithm));
  }
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
  const CommonConfig& common = config.common();
  const int64_t fragment = common.num_envs_per_worker * common.rollout_fragment_length;
  int64_t size = config.ppo().train_batch_size;
  if (size == 0) size = std::max<int64_t>(common.num_workers, 1) * fragment;
  return std::max(size, fragment);
}

}  // namespace rlx
