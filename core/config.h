// Config: the resolved value of every schema key (defaults until set), held in the typed structs
// of core/algorithm_config.h; written only through set()/set_json(), which check against the schema.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/config_error.h"
#include "core/config_schema.h"

namespace rlx {

class Config {
 public:
  // Every schema key at its default.
  Config() = default;

  // The keys every run reads, and each algorithm's own (a shared key such as lr is in both).
  const CommonConfig& common() const { return common_; }
  const PpoConfig& ppo() const { return ppo_; }
  const DqnConfig& dqn() const { return dqn_; }
  const AppoConfig& appo() const { return appo_; }
  const SacConfig& sac() const { return sac_; }

  // The value of any key, by name (for tools that handle keys generically: tune, checkpoints);
  // std::logic_error when the key is not in the schema.
  ConfigValue get(std::string_view key) const;

  // Sets a key (an int is accepted for a float key); std::logic_error on a key not in the
  // schema, ConfigError (naming key, value and what was expected) on a wrong type or range.
  void set(std::string_view key, ConfigValue value);
  // Sets a key from JSON (as a tuner's sampled value or a checkpoint holds it); errors as set().
  void set_json(std::string_view key, const nlohmann::json& value);

  // Sets every key whose default differs by algorithm (KeySpec::algorithm_defaults) to
  // `algorithm`'s default, except those `keep` names (set explicitly).
  void apply_algorithm_defaults(AlgorithmKind algorithm, const std::function<bool(const std::string&)>& keep = {});

  // {key: value} for the keys that apply to `algorithm`, in schema order as JSON objects sort.
  nlohmann::json to_json(AlgorithmKind algorithm) const;

  // Every key equal.
  bool operator==(const Config& other) const;
  bool operator!=(const Config& other) const { return !(*this == other); }

 private:
  // The section a binding's member lives in.
  const CommonConfig& section(const MemberBinding<CommonConfig>&) const { return common_; }
  const PpoConfig& section(const MemberBinding<PpoConfig>&) const { return ppo_; }
  const DqnConfig& section(const MemberBinding<DqnConfig>&) const { return dqn_; }
  const AppoConfig& section(const MemberBinding<AppoConfig>&) const { return appo_; }
  const SacConfig& section(const MemberBinding<SacConfig>&) const { return sac_; }
  CommonConfig& section(const MemberBinding<CommonConfig>&) { return common_; }
  PpoConfig& section(const MemberBinding<PpoConfig>&) { return ppo_; }
  DqnConfig& section(const MemberBinding<DqnConfig>&) { return dqn_; }
  AppoConfig& section(const MemberBinding<AppoConfig>&) { return appo_; }
  SacConfig& section(const MemberBinding<SacConfig>&) { return sac_; }

  CommonConfig common_;
  PpoConfig ppo_;
  DqnConfig dqn_;
  AppoConfig appo_;
  SacConfig sac_;
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
