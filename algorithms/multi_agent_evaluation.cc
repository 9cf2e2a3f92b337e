#include "algorithms/multi_agent_evaluation.h"

#include "core/config_error.h"
#include "envs/registry.h"
#include "models/rollout_policy.h"
#include "rollout/multi_agent_collector.h"

namespace rlx {

EvaluationResult evaluate_multi_agent(const RestoredAlgorithm& restored, const MultiAgentAlgorithm& algorithm,
                                      const EvaluationOptions& options) {
  const Experiment& experiment = restored.experiment;
  if (options.env_id && *options.env_id != experiment.env) {
    throw ConfigError("--env: a multi-agent checkpoint is evaluated on its own env, " + experiment.env);
  }
  if (options.on_state || options.on_action) {
    throw ConfigError("--record and --trace take single-agent checkpoints; " + experiment.env + " is multi-agent");
  }
  const PolicyMap& map = algorithm.policy_map();
  std::vector<std::unique_ptr<RolloutPolicy>> policies;
  std::vector<RolloutPolicy*> borrowed;
  for (int p = 0; p < map.num_policies(); ++p) {
    policies.push_back(algorithm.policy_evaluation_policy(p, options.deterministic, options.seed));
    borrowed.push_back(policies.back().get());
  }
  std::vector<std::unique_ptr<MultiAgentEnv>> envs;
  envs.push_back(global_env_registry().make_multi_agent(experiment.env));
  const std::vector<AgentSpec> agents = envs[0]->spec().agents;
  MultiAgentCollector collector(std::move(envs), map, std::move(borrowed), /*fragment_length=*/1, options.seed);
  EvaluationResult result;
  result.algorithm = algorithm_name(experiment.algorithm);
  result.env_id = experiment.env;
  std::vector<double> agent_sums(agents.size()), policy_sums(static_cast<size_t>(map.num_policies()));
  std::vector<int64_t> agent_counts(agents.size()), policy_counts(policy_sums.size());
  while (static_cast<int>(result.returns.size()) < options.episodes) {
    collector.step();
    for (int p = 0; p < map.num_policies(); ++p) collector.take_fragments(p);  // evaluation keeps no transitions
    for (const MultiAgentEpisode& episode : collector.take_finished_episodes()) {
      if (static_cast<int>(result.returns.size()) == options.episodes) break;
      result.returns.push_back(episode.total_return);
      result.lengths.push_back(episode.length);
      for (size_t a = 0; a < agents.size(); ++a) {
        if (!episode.agent_entered[a]) continue;
        agent_sums[a] += episode.agent_returns[a];
        ++agent_counts[a];
        const auto p = static_cast<size_t>(episode.agent_policies[a]);
        policy_sums[p] += episode.agent_returns[a];
        ++policy_counts[p];
      }
    }
  }
  result.summarise();
  for (size_t a = 0; a < agents.size(); ++a) {
    if (agent_counts[a] > 0) result.agent_return_means[agents[a].id] = agent_sums[a] / static_cast<double>(agent_counts[a]);
  }
  for (size_t p = 0; p < policy_sums.size(); ++p) {
    if (policy_counts[p] > 0) {
      result.policy_return_means[map.policy_names()[p]] = policy_sums[p] / static_cast<double>(policy_counts[p]);
    }
  }
  return result;
}

}  // namespace rlx
