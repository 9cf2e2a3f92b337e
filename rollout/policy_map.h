// PolicyMap: the experiment's policy_mapping resolved against a multi-agent env's agents: which
// policy (or which policies, one drawn per episode) drives each agent, and the single-agent spec
// each policy is built for.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/multi_agent_config.h"
#include "core/rng.h"
#include "envs/multi_agent/multi_agent_spec.h"

namespace rlx {

class PolicyMap {
 public:
  // An agent takes the rule naming its id, else the one pattern matching it (no rules: every agent
  // gets the only policy). Throws ConfigError naming the env and the agent when no rule covers an
  // agent, when patterns give it different policies, or when a policy's agents differ in their
  // spaces; naming the policy when it drives no agent.
  PolicyMap(const MultiAgentEnvSpec& env, const MultiAgentSetup& setup);

  // The policies in name order; a policy's index is its place here.
  const std::vector<std::string>& policy_names() const { return names_; }
  int num_policies() const { return static_cast<int>(names_.size()); }
  // The env's agents.
  int num_agents() const { return static_cast<int>(choices_.size()); }
  // The index of a policy, std::nullopt for a name not among them.
  std::optional<int> policy_index(const std::string& name) const;
  // True when the policy learns (policies_to_train); frozen policies only act.
  bool trains(int policy) const { return trains_.at(static_cast<size_t>(policy)); }
  // The agents the policy may drive (in spec order).
  const std::vector<int>& agents_of(int policy) const { return agents_of_.at(static_cast<size_t>(policy)); }
  // The spec of the policy's agents as one single-agent env (id "ENV, policy 'NAME'").
  const EnvSpec& policy_env_spec(int policy) const { return specs_.at(static_cast<size_t>(policy)); }

  // The policy of every agent for one episode (policy_of_agent resized to the env's agents); draws
  // from rng once for each agent whose rule picks at random among several policies, an order for
  // each shuffle rule, and nothing otherwise.
  void choose(Rng& rng, std::vector<int>& policy_of_agent) const;

 private:
  std::vector<std::string> names_;
  std::vector<bool> trains_;
  std::vector<std::vector<int>> choices_;    // per agent: the policies it may get
  // Shuffle rules: the agents each covers, in spec order, and the policies dealt to them.
  struct Shuffle {
    std::vector<int> agents, policies;
  };
  std::vector<Shuffle> shuffles_;
  std::vector<std::string> shuffle_rules_;   // per shuffle: its rule's agents text
  bool in_shuffle(int agent) const;
  std::vector<std::vector<int>> agents_of_;  // per policy
  std::vector<EnvSpec> specs_;               // per policy
};

}  // namespace rlx
