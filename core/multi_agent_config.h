// The multi-agent part of an experiment (RLlib's `multi_agent()` settings): the policies, each
// with config keys of its own, the policy_mapping from agent ids to policies, and the
// policies_to_train (the others act, frozen).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config.h"

namespace rlx {

// The policy every agent shares when an experiment declares no `policies` (RLlib's name).
constexpr const char* kDefaultPolicyName = "default_policy";

// One entry of policy_mapping: the agents it covers and the policy (or policies) they get.
struct PolicyMappingRule {
  std::string agents;                 // an agent id, or a pattern with * and ? ("agent_*")
  std::vector<std::string> policies;  // one: that policy; several: one drawn per agent and episode (seeded)

  bool operator==(const PolicyMappingRule& other) const { return agents == other.agents && policies == other.policies; }
};

struct MultiAgentSetup {
  std::map<std::string, nlohmann::json> policies;  // name -> {config key: value}; empty: one shared policy
  std::vector<PolicyMappingRule> policy_mapping;   // ordered by `agents`
  std::vector<std::string> policies_to_train;      // empty: every policy trains

  // True when the experiment sets none of the three fields.
  bool empty() const { return policies.empty() && policy_mapping.empty() && policies_to_train.empty(); }
  // The policies in name order: {kDefaultPolicyName} when none is declared.
  std::vector<std::string> policy_names() const;
  // True when `policy` learns (policies_to_train names it, or is empty).
  bool trains(const std::string& policy) const;
  // {"policies", "policy_mapping", "policies_to_train"}, each only when set: the experiment file's form.
  nlohmann::json to_json() const;

  bool operator==(const MultiAgentSetup& other) const {
    return policies == other.policies && policy_mapping == other.policy_mapping &&
           policies_to_train == other.policies_to_train;
  }
};

// Reads the experiment's `policies`, `policy_mapping` and `policies_to_train` (each null when
// absent) for an experiment of `algorithm`. where(field) says where a field was written
// ("file.yaml:12: experiment 'x'"). Throws ConfigError naming the place, the field path
// (policies.NAME.KEY, policy_mapping.AGENTS) and what was expected: a config key that is unknown,
// belongs to another algorithm or to the whole run (workers, envs, seed, ...), a value of the wrong
// type, a mapping to an undeclared policy, a policy to train that is not declared.
MultiAgentSetup read_multi_agent_setup(const nlohmann::json& policies, const nlohmann::json& policy_mapping,
                                       const nlohmann::json& policies_to_train, AlgorithmKind algorithm,
                                       const std::function<std::string(const std::string& field)>& where);

// The config `policy` learns and acts with: `base` with the policy's own keys set. Throws
// std::out_of_range for a policy the setup does not declare (kDefaultPolicyName always exists).
Config policy_config(const Config& base, const MultiAgentSetup& setup, const std::string& policy);

// True when agent_id matches `pattern`: '*' any run of characters, '?' one character, the rest literally.
bool agent_pattern_matches(const std::string& pattern, const std::string& agent_id);

// True when `key` is a config key a policy may set for itself (not one of the whole run's: workers,
// envs, fragments, seed, learners, devices, checkpoints, logging).
bool is_policy_key(const std::string& key);

}  // namespace rlx
