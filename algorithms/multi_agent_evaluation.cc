#include "algorithms/multi_agent_evaluation.h"

#include <cmath>
#include <filesystem>

#include "core/config_error.h"
#include "core/named_registry.h"
#include "envs/registry.h"
#include "models/rollout_policy.h"
#include "rollout/multi_agent_collector.h"
#include "rollout/scripted_policy.h"

namespace rlx {

namespace {

constexpr const char* kChallenger = "challenger";
constexpr const char* kOpponent = "opponent";

// What evaluate_multi_agent plays: the map, one acting policy per map policy, and for a match the
// names of the two sides.
struct Lineup {
  std::unique_ptr<PolicyMap> map;
  std::vector<std::unique_ptr<RolloutPolicy>> policies;
};

// The checkpoint's own policies under its own mapping.
Lineup own_lineup(const MultiAgentAlgorithm& algorithm, const EvaluationOptions& options) {
  Lineup lineup;
  lineup.map = std::make_unique<PolicyMap>(algorithm.policy_map());
  for (int p = 0; p < lineup.map->num_policies(); ++p) {
    lineup.policies.push_back(algorithm.policy_evaluation_policy(p, options.deterministic, options.seed + static_cast<uint64_t>(p)));
  }
  return lineup;
}

// The named policy of a restored multi-agent checkpoint; ConfigError naming `flag` when it has none.
int named_policy(const MultiAgentAlgorithm& algorithm, const std::string& name, const std::string& flag) {
  const std::optional<int> index = algorithm.policy_map().policy_index(name);
  if (!index) {
    throw ConfigError(flag + " " + name + ": no such policy (the checkpoint's: " + joined_names(algorithm.policy_map().policy_names()) + ")");
  }
  return *index;
}

// options.policy against options.against on a two-agent env, the sides dealt per episode.
Lineup match_lineup(const MultiAgentAlgorithm& algorithm, const EvaluationOptions& options, const MultiAgentEnvSpec& env) {
  if (env.agents.size() != 2) {
    throw ConfigError("--against: a match is between two agents, but " + env.id + " has " + std::to_string(env.agents.size()));
  }
  const int own = named_policy(algorithm, options.policy, "--policy");
  const EnvSpec spec = algorithm.policy_map().policy_env_spec(own);
  MultiAgentSetup setup;
  setup.policies = {{kChallenger, nlohmann::json::object()}, {kOpponent, nlohmann::json::object()}};
  setup.policy_mapping = {PolicyMappingRule{"*", {kChallenger, kOpponent}, true}};
  Lineup lineup;
  lineup.map = std::make_unique<PolicyMap>(env, setup);
  lineup.policies.push_back(algorithm.policy_evaluation_policy(own, options.deterministic, options.seed));
  const auto& rules = scripted_policy_names();
  if (std::find(rules.begin(), rules.end(), options.against) != rules.end()) {
    lineup.policies.push_back(make_scripted_policy(options.against, spec, options.seed + 1));
    return lineup;
  }
  if (!std::filesystem::is_directory(options.against)) {
    throw ConfigError("--against " + options.against + ": neither a scripted rule (" + joined_names(rules) + ") nor a checkpoint directory");
  }
  const RestoredAlgorithm other = restore_algorithm(options.against, options.env_plugins);
  const auto* rival = dynamic_cast<const MultiAgentAlgorithm*>(other.algorithm.get());
  if (!rival || other.experiment.env != env.id) {
    throw ConfigError("--against " + options.against + ": not a scripted rule nor a checkpoint of " + env.id);
  }
  const std::string name = options.against_policy.empty() ? options.policy : options.against_policy;
  lineup.policies.push_back(rival->policy_evaluation_policy(named_policy(*rival, name, "--against-policy"), options.deterministic,
                                                            options.seed + 1));
  return lineup;
}

}  // namespace

double MatchRecord::win_rate() const { return games() > 0 ? static_cast<double>(wins) / static_cast<double>(games()) : 0.0; }

std::pair<double, double> MatchRecord::win_rate_interval() const {
  const double n = static_cast<double>(games());
  if (n == 0) return {0.0, 1.0};
  const double z = 1.959964, p = win_rate();
  const double center = (p + z * z / (2 * n)) / (1 + z * z / n);
  const double half = z * std::sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n);
  return {std::max(0.0, center - half), std::min(1.0, center + half)};
}

EvaluationResult evaluate_multi_agent(const RestoredAlgorithm& restored, const MultiAgentAlgorithm& algorithm,
                                      const EvaluationOptions& options) {
  const Experiment& experiment = restored.experiment;
  if (options.env_id && *options.env_id != experiment.env) {
    throw ConfigError("--env: a multi-agent checkpoint is evaluated on its own env, " + experiment.env);
  }
  if (options.on_state || options.on_action) {
    throw ConfigError("--record and --trace take single-agent checkpoints; " + experiment.env + " is multi-agent");
  }
  const MultiAgentEnvSpec& env_spec = global_env_registry().multi_agent_spec(experiment.env);
  const bool match = !options.against.empty();
  if (!match && !options.policy.empty()) throw ConfigError("--policy " + options.policy + " names the side of a match: give --against too");
  Lineup lineup = match ? match_lineup(algorithm, options, env_spec) : own_lineup(algorithm, options);
  const PolicyMap& map = *lineup.map;
  std::vector<RolloutPolicy*> borrowed;
  for (const auto& policy : lineup.policies) borrowed.push_back(policy.get());
  std::vector<std::unique_ptr<MultiAgentEnv>> envs;
  envs.push_back(global_env_registry().make_multi_agent(experiment.env));
  MultiAgentCollector collector(std::move(envs), map, std::move(borrowed), /*fragment_length=*/1, options.seed);

  EvaluationResult result;
  result.algorithm = algorithm_name(experiment.algorithm);
  result.env_id = experiment.env;
  if (match) result.match = MatchRecord{options.policy, options.against, 0, 0, 0};
  const size_t agents = env_spec.agents.size();
  std::vector<double> agent_sums(agents), policy_sums(static_cast<size_t>(map.num_policies()));
  std::vector<int64_t> agent_counts(agents), policy_counts(policy_sums.size());
  while (static_cast<int>(result.returns.size()) < options.episodes) {
    collector.step();
    for (int p = 0; p < map.num_policies(); ++p) collector.take_fragments(p);  // evaluation keeps no transitions
    for (const MultiAgentEpisode& episode : collector.take_finished_episodes()) {
      if (static_cast<int>(result.returns.size()) == options.episodes) break;
      result.returns.push_back(episode.total_return);
      result.lengths.push_back(episode.length);
      double side[2] = {0.0, 0.0};
      for (size_t a = 0; a < agents; ++a) {
        if (!episode.agent_entered[a]) continue;
        agent_sums[a] += episode.agent_returns[a];
        ++agent_counts[a];
        const auto p = static_cast<size_t>(episode.agent_policies[a]);
        policy_sums[p] += episode.agent_returns[a];
        ++policy_counts[p];
        side[p == 0 ? 0 : 1] += episode.agent_returns[a];  // the challenger is policy 0
      }
      if (match) {
        MatchRecord& record = *result.match;
        (side[0] > side[1] ? record.wins : side[0] < side[1] ? record.losses : record.draws) += 1;
      }
    }
  }
  result.summarise();
  for (size_t a = 0; a < agents; ++a) {
    if (agent_counts[a] > 0) result.agent_return_means[env_spec.agents[a].id] = agent_sums[a] / static_cast<double>(agent_counts[a]);
  }
  for (size_t p = 0; p < policy_sums.size(); ++p) {
    if (policy_counts[p] == 0) continue;
    const std::string name = !match ? map.policy_names()[p] : p == 0 ? options.policy : options.against;
    result.policy_return_means[name] = policy_sums[p] / static_cast<double>(policy_counts[p]);
  }
  return result;
}

}  // namespace rlx
