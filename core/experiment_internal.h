// Helpers shared by experiment.cc and experiment_yaml.cc (not part of the public API).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/experiment.h"

namespace rlx {

// The schema entry (type and range) of a stop criterion; nullptr for an unknown name.
const KeySpec* find_stop_spec(std::string_view name);
// Sets the criterion `spec` names to `value` (already checked against spec).
void set_stop(StopCriteria& stop, const KeySpec& spec, const ConfigValue& value);
// A plain (unquoted) YAML scalar as the JSON value it denotes ("3" -> 3, "true" -> true, "x" -> "x").
nlohmann::json plain_scalar_to_json(const std::string& text);
// "a, b, c".
std::string join_names(const std::vector<std::string>& names);
// The algorithms that read `key`: "PPO and APPO", "DQN and SAC", ... or "all algorithms".
std::string scope_name(const KeySpec& key);
// The hint after "unknown config key 'name'" for an experiment of `algorithm`, e.g. " (did you
// mean 'lr', rlx's name for learning_rate?)"; "" when nothing is close. Looks
// at the algorithm's own keys first, then the names other frameworks use, then the other
// algorithms' keys (saying whose they are).
std::string unknown_key_hint(std::string_view name, AlgorithmKind algorithm);

}  // namespace rlx
