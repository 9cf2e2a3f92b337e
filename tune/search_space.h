// Search spaces: the `tune.param_space` domains (grid_search, choice, uniform, loguniform,
// randint, quniform), checked against the config schema, and the trial configs they expand to.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config_schema.h"
#include "core/rng.h"

namespace rlx {

enum class DomainKind { kConstant, kGridSearch, kChoice, kUniform, kLogUniform, kRandInt, kQUniform };

// One key's domain. Draws are converted to the key's type (ints stay ints) and lie in the
// key's allowed range (checked when the domain is parsed).
struct Domain {
  DomainKind kind = DomainKind::kConstant;
  ConfigType type = ConfigType::kFloat;  // the config key's type
  std::vector<nlohmann::json> values;    // constant (one), grid_search and choice values
  double low = 0, high = 0, q = 0;       // uniform/loguniform [low, high), randint [low, high), quniform step q

  // A random value (grid_search draws like choice); deterministic for a given Rng state.
  nlohmann::json sample(Rng& rng) const;
  // True for uniform, loguniform, randint and quniform.
  bool is_distribution() const;
  // The YAML/JSON form it was read from, e.g. {"loguniform": [1e-4, 1e-2]}.
  nlohmann::json to_json() const;
};

// `value` as the key's type (a float for an int key is rounded); nullopt when it cannot be.
std::optional<nlohmann::json> coerce_to_key(const KeySpec& key, const nlohmann::json& value);

// Reads one domain spec for config key `key`: a mapping with one of grid_search, choice,
// uniform, loguniform, randint, quniform, or a plain value (a constant). ConfigError
// "<where>: got <value>, expected <...>" on a bad form, bounds or a value the key refuses.
Domain parse_domain(const nlohmann::json& spec, const KeySpec& key, const std::string& where);

// The search space: config key -> domain, in key order.
struct ParamSpace {
  std::map<std::string, Domain> domains;
};

// Expands the space Ray Tune's way: the cartesian product of every grid_search, each grid
// point repeated num_samples times, the other keys drawn afresh per trial from Rng(seed).
// Each element is {key: value} for one trial, in trial order.
std::vector<nlohmann::json> generate_trial_params(const ParamSpace& space, int64_t num_samples, uint64_t seed);

}  // namespace rlx
