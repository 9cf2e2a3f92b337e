#include "rollout/policy_map.h"

#include <algorithm>

#include "core/config_error.h"
#include "core/named_registry.h"

namespace rlx {

namespace {

// The rule for an agent: its exact id first, else the patterns matching it (which must agree).
const PolicyMappingRule* rule_for(const MultiAgentEnvSpec& env, const std::vector<PolicyMappingRule>& rules,
                                  const std::string& agent) {
  for (const PolicyMappingRule& rule : rules) {
    if (rule.agents == agent) return &rule;
  }
  const PolicyMappingRule* found = nullptr;
  for (const PolicyMappingRule& rule : rules) {
    if (!agent_pattern_matches(rule.agents, agent)) continue;
    if (found && found->policies != rule.policies) {
      throw ConfigError("policy_mapping: agent '" + agent + "' of env '" + env.id + "' matches both '" + found->agents +
                        "' (" + joined_names(found->policies) + ") and '" + rule.agents + "' (" + joined_names(rule.policies) +
                        "); name the agent itself to settle it");
    }
    found = &rule;
  }
  return found;
}

}  // namespace

PolicyMap::PolicyMap(const MultiAgentEnvSpec& env, const MultiAgentSetup& setup) : names_(setup.policy_names()) {
  for (const std::string& name : names_) trains_.push_back(setup.trains(name));
  agents_of_.resize(names_.size());
  std::vector<std::string> ids;
  for (const AgentSpec& agent : env.agents) ids.push_back(agent.id);
  for (size_t a = 0; a < env.agents.size(); ++a) {
    const std::string& agent = env.agents[a].id;
    std::vector<int> choices;
    if (setup.policy_mapping.empty()) {
      if (names_.size() != 1) throw ConfigError("policy_mapping is needed to map the agents of '" + env.id + "' to " + joined_names(names_));
      choices.push_back(0);
    } else {
      const PolicyMappingRule* rule = rule_for(env, setup.policy_mapping, agent);
      if (!rule) {
        throw ConfigError("policy_mapping: no entry covers agent '" + agent + "' of env '" + env.id + "' (its agents: " +
                          joined_names(ids) + ")");
      }
      for (const std::string& policy : rule->policies) choices.push_back(*policy_index(policy));
      if (rule->shuffle) {  // the agents one shuffle rule covers share its deal
        auto found = std::find(shuffle_rules_.begin(), shuffle_rules_.end(), rule->agents);
        if (found == shuffle_rules_.end()) {
          shuffles_.push_back({{}, choices});
          shuffle_rules_.push_back(rule->agents);
          found = shuffle_rules_.end() - 1;
        }
        const auto group = shuffles_.begin() + (found - shuffle_rules_.begin());
        group->agents.push_back(static_cast<int>(a));
      }
    }
    for (int p : choices) {
      auto& agents = agents_of_[static_cast<size_t>(p)];
      if (agents.empty() || agents.back() != static_cast<int>(a)) agents.push_back(static_cast<int>(a));
    }
    choices_.push_back(std::move(choices));
  }
  for (size_t g = 0; g < shuffles_.size(); ++g) {
    if (shuffles_[g].agents.size() != shuffles_[g].policies.size()) {
      throw ConfigError("policy_mapping: '" + shuffle_rules_[g] + "' deals " + std::to_string(shuffles_[g].policies.size()) +
                        " policies to the " + std::to_string(shuffles_[g].agents.size()) + " agents of env '" + env.id +
                        "' it covers: a shuffle gives each agent one, so the counts must match");
    }
  }
  for (size_t p = 0; p < names_.size(); ++p) {
    const std::vector<int>& agents = agents_of_[p];
    if (agents.empty()) {
      throw ConfigError("policy '" + names_[p] + "' drives no agent of env '" + env.id + "': policy_mapping maps none to it");
    }
    const AgentSpec& first = env.agents[static_cast<size_t>(agents[0])];
    for (int a : agents) {
      const AgentSpec& other = env.agents[static_cast<size_t>(a)];
      if (other.observation_space != first.observation_space || other.action_space != first.action_space ||
          other.action_mask != first.action_mask) {
        throw ConfigError("policy '" + names_[p] + "' drives agents '" + first.id + "' and '" + other.id + "' of env '" +
                          env.id + "', whose spaces differ (" + first.observation_space.to_string() + " -> " +
                          first.action_space.to_string() + " against " + other.observation_space.to_string() + " -> " +
                          other.action_space.to_string() + "); map them to different policies");
      }
    }
    EnvSpec spec = env.agent_env_spec(agents[0]);
    spec.id = env.id + ", policy '" + names_[p] + "'";
    specs_.push_back(std::move(spec));
  }
}

std::optional<int> PolicyMap::policy_index(const std::string& name) const {
  const auto it = std::find(names_.begin(), names_.end(), name);
  if (it == names_.end()) return std::nullopt;
  return static_cast<int>(it - names_.begin());
}

void PolicyMap::choose(Rng& rng, std::vector<int>& policy_of_agent) const {
  policy_of_agent.resize(choices_.size());
  for (size_t a = 0; a < choices_.size(); ++a) {
    const std::vector<int>& choices = choices_[a];
    if (choices.size() == 1) {
      policy_of_agent[a] = choices[0];
    } else if (!in_shuffle(static_cast<int>(a))) {
      policy_of_agent[a] = choices[static_cast<size_t>(rng.uniform_int(static_cast<int64_t>(choices.size())))];
    }
  }
  for (const Shuffle& shuffle : shuffles_) {
    std::vector<int> order = shuffle.policies;
    for (size_t i = order.size(); i > 1; --i) {  // Fisher-Yates
      std::swap(order[i - 1], order[static_cast<size_t>(rng.uniform_int(static_cast<int64_t>(i)))]);
    }
    for (size_t i = 0; i < order.size(); ++i) policy_of_agent[static_cast<size_t>(shuffle.agents[i])] = order[i];
  }
}

bool PolicyMap::in_shuffle(int agent) const {
  for (const Shuffle& shuffle : shuffles_) {
    if (std::find(shuffle.agents.begin(), shuffle.agents.end(), agent) != shuffle.agents.end()) return true;
  }
  return false;
}

}  // namespace rlx
