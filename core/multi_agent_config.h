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
  bool shuffle = false;               // the agents it covers get `policies` in an order drawn per episode (one each)

  bool operator==(const PolicyMappingRule& other) const {
    return agents == other.agents && policies == other.policies && shuffle == other.shuffle;
  }
};

// Self-play (`self_play:`): every snapshot_every iterations `policy`'s weights join a pool of at
// most pool_size snapshots (the oldest leave), and each iteration `opponent`, a frozen policy of
// the same model, plays one snapshot drawn from the pool: uniformly, or "pfsp" (prioritised
// fictitious self-play) weighting each by (1 - the policy's win rate against it)^2. Scripted
// players named in `league` are members of the pool from the start and never leave it.
struct SelfPlaySetup {
  std::string policy;             // "" when the experiment has no self-play
  std::string opponent;
  int64_t snapshot_every = 10;    // iterations
  int64_t pool_size = 20;
  std::string sampling = "uniform";  // or "pfsp"
  std::vector<std::string> league;   // scripted rules (rollout/scripted_policy.h) that stay in the pool for good

  bool enabled() const { return !policy.empty(); }
  bool operator==(const SelfPlaySetup& other) const {
    return policy == other.policy && opponent == other.opponent && snapshot_every == other.snapshot_every &&
           pool_size == other.pool_size && sampling == other.sampling && league == other.league;
  }
};

struct MultiAgentSetup {
  // name -> {config key: value}, or {"scripted": RULE} for a scripted player (rollout/scripted_policy.h,
  // which never trains); empty: one shared policy
  std::map<std::string, nlohmann::json> policies;
  std::vector<PolicyMappingRule> policy_mapping;   // ordered by `agents`
  std::vector<std::string> policies_to_train;      // empty: every policy trains
  SelfPlaySetup self_play;

  // True when the experiment sets none of the four fields.
  bool empty() const { return policies.empty() && policy_mapping.empty() && policies_to_train.empty() && !self_play.enabled(); }
  // The policies in name order: {kDefaultPolicyName} when none is declared.
  std::vector<std::string> policy_names() const;
  // True when `policy` learns: policies_to_train names it, or is empty and it is not scripted.
  bool trains(const std::string& policy) const;
  // The scripted rule a policy plays by; "" for a policy with a model.
  std::string scripted(const std::string& policy) const;
  // {"policies", "policy_mapping", "policies_to_train", "self_play"}, each only when set: the experiment file's form.
  nlohmann::json to_json() const;

  bool operator==(const MultiAgentSetup& other) const {
    return policies == other.policies && policy_mapping == other.policy_mapping &&
           policies_to_train == other.policies_to_train && self_play == other.self_play;
  }
};

// Reads the experiment's `policies`, `policy_mapping`, `policies_to_train` and `self_play` (each
// null when absent) for an experiment of `algorithm`. where(field) says where a field was written
// ("file.yaml:12: experiment 'x'"). Throws ConfigError naming the place, the field path
// (policies.NAME.KEY, policy_mapping.AGENTS) and what was expected: a config key that is unknown,
// belongs to another algorithm or to the whole run (workers, envs, seed, ...), a value of the wrong
// type, a mapping to an undeclared policy, a policy to train that is not declared, a self-play
// policy that does not train or an opponent that does.
MultiAgentSetup read_multi_agent_setup(const nlohmann::json& policies, const nlohmann::json& policy_mapping,
                                       const nlohmann::json& policies_to_train, const nlohmann::json& self_play,
                                       AlgorithmKind algorithm,
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
