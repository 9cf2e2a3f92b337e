#include "algorithms/policy_export.h"

#include <stdexcept>
#include <tuple>

#include "algorithms/algorithm.h"
#include "algorithms/multi_agent_algorithm.h"
#include "core/config_error.h"
#include "core/named_registry.h"
#include "envs/registry.h"
#include "core/version.h"
#include "models/rollout_policy.h"

namespace rlx {

namespace {

// The multi-agent checkpoint's policy called `name`, and its agents' ids.
std::pair<std::unique_ptr<RolloutPolicy>, nlohmann::json> multi_agent_policy(const MultiAgentAlgorithm& algorithm,
                                                                            const std::string& name) {
  const PolicyMap& map = algorithm.policy_map();
  if (name.empty()) {
    throw ConfigError("a multi-agent checkpoint holds the policies " + joined_names(map.policy_names()) +
                      ": pick one with --policy NAME");
  }
  const std::optional<int> index = map.policy_index(name);
  if (!index) throw ConfigError("--policy " + name + ": no such policy (the checkpoint's: " + joined_names(map.policy_names()) + ")");
  nlohmann::json agents = nlohmann::json::array();
  const MultiAgentEnvSpec& spec = global_env_registry().multi_agent_spec(algorithm.experiment().env);
  for (int agent : map.agents_of(*index)) agents.push_back(spec.agents[static_cast<size_t>(agent)].id);
  return {algorithm.policy_evaluation_policy(*index, /*deterministic=*/true, 0), agents};
}

}  // namespace

PolicyFile export_policy(const RestoredAlgorithm& restored, const std::string& policy_name) {
  const Algorithm& algorithm = *restored.algorithm;
  const auto* multi = dynamic_cast<const MultiAgentAlgorithm*>(&algorithm);
  if (!multi && !policy_name.empty()) {
    throw ConfigError("--policy " + policy_name + ": " + restored.experiment.env + " has one agent and one policy; leave --policy out");
  }
  nlohmann::json agents;
  std::unique_ptr<RolloutPolicy> policy;
  if (multi) {
    std::tie(policy, agents) = multi_agent_policy(*multi, policy_name);
  } else {
    policy = algorithm.evaluation_policy(/*deterministic=*/true, 0);
  }
  PolicyFile file;
  file.model = policy->config();
  if (file.model.kind == ModelKind::kQNetwork) {
    // Stochastic acting explores as the algorithm's own sampling evaluation does.
    const std::unique_ptr<RolloutPolicy> sampling = algorithm.evaluation_policy(/*deterministic=*/false, 0);
    file.epsilon = static_cast<const EpsilonGreedyQPolicy&>(*sampling).epsilon();
  }
  file.parameters = policy->weights();
  if (policy->obs_normalizer().active()) {
    file.obs_mean = policy->obs_normalizer().mean();
    file.obs_var = policy->obs_normalizer().var();
    file.obs_count = policy->obs_normalizer().count();
  }
  file.algorithm = algorithm_name(restored.experiment.algorithm);
  file.env_id = restored.experiment.env;
  const nlohmann::json& counters = restored.checkpoint.manifest.at("counters");
  file.source = {{"checkpoint", restored.checkpoint.path.string()},
                 {"experiment", restored.experiment.name},
                 {"iteration", counters.at("training_iteration")},
                 {"timesteps", counters.at("timesteps_total")},
                 {"rlx_version", kRlxVersion}};
  if (multi) {
    file.source["policy"] = policy_name;
    file.source["agents"] = agents;
  }
  return file;
}

}  // namespace rlx
