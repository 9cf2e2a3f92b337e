// Config: resolved values of every schema key (defaults until set), with typed getters.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/config_error.h"
#include "core/config_schema.h"

namespace rlx {

class Config {
 public:
  // Every schema key at its default.
  Config();

  // Typed getters; std::logic_error when the key is not in the schema or has another type.
  int64_t get_int(std::string_view key) const;
  double get_double(std::string_view key) const;
  bool get_bool(std::string_view key) const;
  const std::string& get_string(std::string_view key) const;
  const IntList& get_int_list(std::string_view key) const;
  // The value of any key; std::logic_error when the key is not in the schema.
  const ConfigValue& get(std::string_view key) const;

  // Sets a key (an int is accepted for a float key); std::logic_error on a key not in the
  // schema, ConfigError (naming key, value and what was expected) on a wrong type or range.
  void set(std::string_view key, ConfigValue value);
  // Sets a key from JSON (as a tuner's sampled value or a checkpoint holds it); errors as set().
  void set_json(std::string_view key, const nlohmann::json& value);

  // {key: value} for the keys that apply to `algorithm`, in schema order as JSON objects sort.
  nlohmann::json to_json(AlgorithmKind algorithm) const;

  bool operator==(const Config& other) const { return values_ == other.values_; }
  bool operator!=(const Config& other) const { return !(*this == other); }

 private:
  std::map<std::string, ConfigValue, std::less<>> values_;
};

// `value` converted to the key's type and range-checked; ConfigError "key 'k': got V, expected E".
ConfigValue checked_value(const KeySpec& key, ConfigValue value);
// A JSON value as a value of the key's type (range not checked); nullopt on a type mismatch.
std::optional<ConfigValue> value_from_json(ConfigType type, const nlohmann::json& value);
// A value as JSON (numbers, bool, string, array of ints).
nlohmann::json value_to_json(const ConfigValue& value);

// Samples per PPO iteration: train_batch_size, or max(num_workers, 1) * num_envs_per_worker *
// rollout_fragment_length when it is 0; never less than one fragment.
int64_t effective_train_batch_size(const Config& config);

}  // namespace rlx
