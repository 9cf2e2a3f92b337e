#include "core/multi_agent_config.h"

#include <algorithm>
#include <set>

#include "core/config_error.h"
#include "core/config_schema.h"
#include "core/named_registry.h"

namespace rlx {

namespace {

// Keys that shape the whole run (its workers, envs, fragments, seeds, learners and files): one
// value for every policy.
const std::set<std::string>& run_wide_keys() {
  static const std::set<std::string> keys = {
      "seed", "num_workers", "num_envs_per_worker", "rollout_fragment_length", "max_policy_lag", "worker_weight_delay",
      "max_worker_restarts", "max_workers", "num_learners", "device", "learner_backend", "learner_threads",
      "learner_timeout_s", "worker_learner_timeout_s", "elastic", "min_learners", "max_learners", "learner_sync",
      "max_staleness", "debug_slow_rank", "debug_slow_factor", "drop_nonfinite_episodes", "tensorboard", "record_video_every",
      "checkpoint_freq", "frame_stack", "count_steps_by"};
  return keys;
}

bool is_policy_name(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
  });
}

// The self_play field, checked against the policies.
SelfPlaySetup read_self_play(const nlohmann::json& json, const MultiAgentSetup& setup,
                             const std::function<std::string(const std::string& field)>& where) {
  const auto fail = [&](const std::string& field, const std::string& what) {
    return ConfigError(where("self_play." + field) + ": 'self_play." + field + "': " + what);
  };
  if (!json.is_object()) throw fail("", "got " + json.dump() + ", expected {policy, opponent, snapshot_every, pool_size, sampling}");
  SelfPlaySetup play;
  for (const auto& [key, value] : json.items()) {
    if (key == "policy" || key == "opponent" || key == "sampling") {
      if (!value.is_string()) throw fail(key, "got " + value.dump() + ", expected a name");
      (key == "policy" ? play.policy : key == "opponent" ? play.opponent : play.sampling) = value.get<std::string>();
    } else if (key == "league") {
      if (!value.is_array()) throw fail(key, "got " + value.dump() + ", expected a list of scripted rules");
      for (const auto& rule : value) {
        if (!rule.is_string()) throw fail(key, "got " + rule.dump() + ", expected a scripted rule's name");
        play.league.push_back(rule.get<std::string>());
      }
    } else if (key == "snapshot_every" || key == "pool_size") {
      if (!value.is_number_integer() || value.get<int64_t>() < 1) throw fail(key, "got " + value.dump() + ", expected an integer >= 1");
      (key == "snapshot_every" ? play.snapshot_every : play.pool_size) = value.get<int64_t>();
    } else {
      throw fail(key, "unknown key, expected policy, opponent, snapshot_every, pool_size, sampling or league");
    }
  }
  const std::vector<std::string> names = setup.policy_names();
  const auto declared = [&](const std::string& name) { return std::find(names.begin(), names.end(), name) != names.end(); };
  if (!declared(play.policy)) throw fail("policy", "no policy '" + play.policy + "'");
  if (!declared(play.opponent)) throw fail("opponent", "no policy '" + play.opponent + "'");
  if (!setup.trains(play.policy)) throw fail("policy", "'" + play.policy + "' does not train: its snapshots would never change");
  if (setup.trains(play.opponent) || !setup.scripted(play.opponent).empty()) {
    throw fail("opponent", "'" + play.opponent + "' must be a frozen policy with a model (left out of policies_to_train): it plays the pool's snapshots");
  }
  if (play.sampling != "uniform" && play.sampling != "pfsp") throw fail("sampling", "got '" + play.sampling + "', expected uniform or pfsp");
  return play;
}

}  // namespace

std::vector<std::string> MultiAgentSetup::policy_names() const {
  if (policies.empty()) return {kDefaultPolicyName};
  std::vector<std::string> names;
  for (const auto& [name, keys] : policies) names.push_back(name);
  return names;
}

bool MultiAgentSetup::trains(const std::string& policy) const {
  if (policies_to_train.empty()) return scripted(policy).empty();
  return std::find(policies_to_train.begin(), policies_to_train.end(), policy) != policies_to_train.end();
}

std::string MultiAgentSetup::scripted(const std::string& policy) const {
  const auto it = policies.find(policy);
  if (it == policies.end() || !it->second.contains("scripted")) return "";
  return it->second.at("scripted").get<std::string>();
}

nlohmann::json MultiAgentSetup::to_json() const {
  nlohmann::json json = nlohmann::json::object();
  if (!policies.empty()) {
    json["policies"] = nlohmann::json::object();
    for (const auto& [name, keys] : policies) json["policies"][name] = keys;
  }
  if (!policy_mapping.empty()) {
    json["policy_mapping"] = nlohmann::json::object();
    for (const PolicyMappingRule& rule : policy_mapping) {
      json["policy_mapping"][rule.agents] = rule.shuffle               ? nlohmann::json{{"shuffle", rule.policies}}
                                            : rule.policies.size() == 1 ? nlohmann::json(rule.policies[0])
                                                                        : nlohmann::json{{"random", rule.policies}};
    }
  }
  if (!policies_to_train.empty()) json["policies_to_train"] = policies_to_train;
  if (self_play.enabled()) {
    json["self_play"] = {{"policy", self_play.policy},
                         {"opponent", self_play.opponent},
                         {"snapshot_every", self_play.snapshot_every},
                         {"pool_size", self_play.pool_size},
                         {"sampling", self_play.sampling}};
    if (!self_play.league.empty()) json["self_play"]["league"] = self_play.league;
  }
  return json;
}

bool is_policy_key(const std::string& key) { return run_wide_keys().count(key) == 0; }

bool agent_pattern_matches(const std::string& pattern, const std::string& agent_id) {
  // Iterative glob: on a mismatch, let the last '*' swallow one more character.
  size_t p = 0, a = 0, star = std::string::npos, star_a = 0;
  while (a < agent_id.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == agent_id[a])) {
      ++p;
      ++a;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      star_a = a;
    } else if (star != std::string::npos) {
      p = star + 1;
      a = ++star_a;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

MultiAgentSetup read_multi_agent_setup(const nlohmann::json& policies, const nlohmann::json& policy_mapping,
                                       const nlohmann::json& policies_to_train, const nlohmann::json& self_play,
                                       AlgorithmKind algorithm,
                                       const std::function<std::string(const std::string& field)>& where) {
  MultiAgentSetup setup;
  if (!policies.is_null()) {
    if (!policies.is_object() || policies.empty()) {
      throw ConfigError(where("policies") + ": 'policies': got " + policies.dump() +
                        ", expected a mapping of policy names to their own config keys ({} for none)");
    }
    for (const auto& [name, keys] : policies.items()) {
      const std::string path = "policies." + name;
      if (!is_policy_name(name)) {
        throw ConfigError(where(path) + ": '" + path + "': a policy name is 1 to 64 letters, digits, '_', '-' or '.'");
      }
      if (!keys.is_null() && !keys.is_object()) {
        throw ConfigError(where(path) + ": '" + path + "': got " + keys.dump() + ", expected a mapping of config keys");
      }
      Config check;
      check.apply_algorithm_defaults(algorithm);
      const nlohmann::json own = keys.is_null() ? nlohmann::json::object() : keys;
      if (own.contains("scripted")) {
        if (!own["scripted"].is_string() || own.size() != 1) {
          throw ConfigError(where(path) + ": '" + path + "': a scripted policy is {scripted: RULE} alone, got " + own.dump());
        }
        setup.policies[name] = own;
        continue;
      }
      for (const auto& [key, value] : own.items()) {
        const std::string key_path = path + "." + key;
        const KeySpec* spec = find_key(key);
        if (!spec) throw ConfigError(where(key_path) + ": '" + key_path + "': unknown config key '" + key + "'");
        if (!spec->applies_to(algorithm)) {
          throw ConfigError(where(key_path) + ": '" + key_path + "': config key '" + key + "' does not apply to " +
                            algorithm_name(algorithm));
        }
        if (!is_policy_key(key)) {
          throw ConfigError(where(key_path) + ": '" + key_path + "': " + key +
                            " applies to the whole run, not to one policy: set it under config:");
        }
        try {
          check.set_json(key, value);
        } catch (const ConfigError& error) {
          throw ConfigError(where(key_path) + ": '" + key_path + "': " + error.what());
        }
      }
      setup.policies[name] = own;
    }
  }
  const std::vector<std::string> names = setup.policy_names();
  auto declared = [&](const std::string& policy, const std::string& path) {
    if (std::find(names.begin(), names.end(), policy) == names.end()) {
      throw ConfigError(where(path) + ": '" + path + "': no policy '" + policy + "' (the policies: " + joined_names(names) + ")");
    }
  };
  if (!policy_mapping.is_null()) {
    if (!policy_mapping.is_object() || policy_mapping.empty()) {
      throw ConfigError(where("policy_mapping") + ": 'policy_mapping': got " + policy_mapping.dump() +
                        ", expected a mapping of agent ids or patterns (agent_*) to a policy or {random: [policies]}");
    }
    for (const auto& [agents, target] : policy_mapping.items()) {
      const std::string path = "policy_mapping." + agents;
      PolicyMappingRule rule{agents, {}};
      if (target.is_string()) {
        rule.policies.push_back(target.get<std::string>());
      } else if (target.is_object() && target.size() == 1 && (target.contains("random") || target.contains("shuffle")) &&
                 target.begin()->is_array() && !target.begin()->empty()) {
        rule.shuffle = target.contains("shuffle");
        for (const auto& policy : *target.begin()) {
          if (!policy.is_string()) {
            throw ConfigError(where(path) + ": '" + path + "." + target.begin().key() + "': got " + policy.dump() + ", expected a policy name");
          }
          rule.policies.push_back(policy.get<std::string>());
        }
      } else {
        throw ConfigError(where(path) + ": '" + path + "': got " + target.dump() +
                          ", expected a policy name, {random: [policy, ...]} or {shuffle: [policy, ...]}");
      }
      for (const std::string& policy : rule.policies) declared(policy, path);
      setup.policy_mapping.push_back(std::move(rule));
    }
  } else if (setup.policies.size() > 1) {
    throw ConfigError(where("policies") + ": " + std::to_string(setup.policies.size()) +
                      " policies need a 'policy_mapping' saying which agents each one drives");
  }
  if (!policies_to_train.is_null()) {
    if (!policies_to_train.is_array()) {
      throw ConfigError(where("policies_to_train") + ": 'policies_to_train': got " + policies_to_train.dump() +
                        ", expected a list of policy names");
    }
    for (const auto& policy : policies_to_train) {
      if (!policy.is_string()) {
        throw ConfigError(where("policies_to_train") + ": 'policies_to_train': got " + policy.dump() + ", expected a policy name");
      }
      declared(policy.get<std::string>(), "policies_to_train");
      if (!setup.scripted(policy.get<std::string>()).empty()) {
        throw ConfigError(where("policies_to_train") + ": 'policies_to_train': policy '" + policy.get<std::string>() +
                          "' is scripted and has nothing to learn");
      }
      setup.policies_to_train.push_back(policy.get<std::string>());
    }
    if (setup.policies_to_train.empty()) {
      throw ConfigError(where("policies_to_train") + ": 'policies_to_train' is empty: at least one policy must train");
    }
  }
  if (!self_play.is_null()) setup.self_play = read_self_play(self_play, setup, where);
  const std::vector<std::string> all = setup.policy_names();
  if (std::none_of(all.begin(), all.end(), [&](const std::string& name) { return setup.trains(name); })) {
    throw ConfigError(where("policies") + ": every policy is scripted: at least one must learn");
  }
  return setup;
}

Config policy_config(const Config& base, const MultiAgentSetup& setup, const std::string& policy) {
  Config config = base;
  if (setup.policies.empty() && policy == kDefaultPolicyName) return config;
  if (!setup.scripted(policy).empty()) return config;
  for (const auto& [key, value] : setup.policies.at(policy).items()) config.set_json(key, value);
  return config;
}

}  // namespace rlx
