#include "algorithms/evaluation.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "algorithms/make_algorithm.h"
#include "algorithms/multi_agent_evaluation.h"
#include "core/checkpoint_dir.h"
#include "core/config_error.h"
#include "core/config_schema.h"
#include "core/log.h"
#include "core/space_json.h"
#include "envs/experiment_envs.h"
#include "envs/registry.h"

namespace rlx {

void EvaluationResult::summarise() {
  const double n = static_cast<double>(returns.size());
  double sum = 0, sum_sq = 0, len_sum = 0;
  for (size_t i = 0; i < returns.size(); ++i) {
    sum += returns[i];
    sum_sq += returns[i] * returns[i];
    len_sum += static_cast<double>(lengths[i]);
  }
  return_mean = sum / n;
  return_std = std::sqrt(std::max(0.0, sum_sq / n - return_mean * return_mean));
  return_min = *std::min_element(returns.begin(), returns.end());
  return_max = *std::max_element(returns.begin(), returns.end());
  len_mean = len_sum / n;
}

RestoredAlgorithm::RestoredAlgorithm() = default;
RestoredAlgorithm::RestoredAlgorithm(RestoredAlgorithm&&) noexcept = default;
RestoredAlgorithm::~RestoredAlgorithm() = default;

RestoredAlgorithm restore_algorithm(const std::filesystem::path& checkpoint, const std::vector<std::string>& env_plugins) {
  RestoredAlgorithm restored;
  restored.checkpoint = read_checkpoint_dir(checkpoint);
  restored.experiment = experiment_from_json(restored.checkpoint.manifest.at("experiment"),
                                             (restored.checkpoint.path / kCheckpointManifestName).string());
  // The checkpoint's plugins, pointed at --env-plugin files where they moved.
  for (const std::string& warning : relocate_plugins(restored.experiment.plugins, env_plugins)) {
    logger().warn("{}", warning);
  }
  load_experiment_envs(restored.experiment);
  restored.experiment.config.set("num_learners", int64_t{1});  // acting needs no data-parallel group
  if (restored.experiment.algorithm == AlgorithmKind::kDQN || restored.experiment.algorithm == AlgorithmKind::kSAC) {
    // nor a replay buffer: a checkpoint copied without its trial's replay/ still evaluates
    restored.experiment.config.set("checkpoint_replay_buffer", false);
  }
  restored.algorithm = make_algorithm(restored.experiment);
  restored.algorithm->check_model_of(restored.checkpoint);
  restored.algorithm->restore(restored.checkpoint);
  return restored;
}

EvaluationResult evaluate_checkpoint(const EvaluationOptions& options) {
  if (options.episodes < 1) throw std::invalid_argument("evaluation needs at least one episode");
  const RestoredAlgorithm restored = restore_algorithm(options.checkpoint, options.env_plugins);
  if (const auto* multi = dynamic_cast<const MultiAgentAlgorithm*>(restored.algorithm.get())) {
    return evaluate_multi_agent(restored, *multi, options);
  }
  if (!options.policy.empty() || !options.against.empty()) {
    throw ConfigError("--policy and --against take multi-agent checkpoints; " + restored.experiment.env + " has one agent");
  }
  const Experiment& experiment = restored.experiment;
  const std::string env_id = options.env_id.value_or(experiment.env);
  if (env_id != experiment.env) load_experiment_envs(experiment, env_id);  // --env: another Python env gets the env_config too
  const EnvSpec& spec = global_env_registry().spec(env_id);
  const EnvSpec& trained = global_env_registry().spec(experiment.env);
  if (spec.observation_space != trained.observation_space || spec.action_space != trained.action_space) {
    throw std::invalid_argument("env '" + env_id + "' has other spaces than '" + experiment.env +
                                "' the checkpoint was trained on: observation " + spec.observation_space.to_string() +
                                " vs " + trained.observation_space.to_string() + ", action " +
                                spec.action_space.to_string() + " vs " + trained.action_space.to_string());
  }
  std::unique_ptr<RolloutPolicy> policy = restored.algorithm->evaluation_policy(options.deterministic, options.seed);

  // The policy sees what it was trained on: the env's observations stacked by frame_stack.
  std::unique_ptr<Env> env = experiment_env_factory(experiment, env_id)();
  const Space& actions = spec.action_space;
  std::vector<float> obs(static_cast<size_t>(env->observation_layout().float_slots));
  std::vector<uint8_t> obs_bytes(static_cast<size_t>(env->observation_layout().byte_slots));  // uint8 leaves, the mask
  const ObsRow row(obs.data(), obs_bytes.data());
  std::vector<float> values(static_cast<size_t>(actions.is_box() ? actions.size() : 0));
  std::vector<float> clipped(values.size());
  // Indexed actions as the policy gives them (from 0) and as the env gets them (its values).
  std::vector<int64_t> indices(static_cast<size_t>(policy->action_components()));
  std::vector<int64_t> env_indices(indices.size());
  const std::vector<int64_t> starts = action_starts(actions);
  float log_prob = 0, value = 0;
  ActOutput out{indices.data(), values.data(), policy->has_policy_outputs() ? &log_prob : nullptr,
                policy->has_policy_outputs() ? &value : nullptr};
  EvaluationResult result;
  result.algorithm = algorithm_name(experiment.algorithm);
  result.env_id = env_id;
  for (int episode = 0; episode < options.episodes; ++episode) {
    env->reset(options.seed + static_cast<uint64_t>(episode), row);
    policy->reset_state(0);  // a recurrent policy starts each episode from zeros (memoryless: nothing)
    if (options.on_state) options.on_state(episode, unstacked_env(*env));
    double episode_return = 0;
    int64_t length = 0;
    for (;;) {
      policy->act(ObsBatch(obs.data(), obs_bytes.data()), 1, out);
      Action action;
      for (size_t j = 0; j < indices.size() && !actions.is_box(); ++j) env_indices[j] = indices[j] + starts[j];
      action.index = env_indices[0];
      if (actions.is_multi_discrete() || actions.is_multi_binary()) action.indices = env_indices.data();
      if (actions.is_box()) {  // as in training: the env gets the sample clipped to its space
        for (size_t j = 0; j < values.size(); ++j) clipped[j] = std::clamp(values[j], actions.low[j], actions.high[j]);
        action.values = clipped.data();
      }
      if (options.on_action) options.on_action(episode, length, *env, row, action);
      const StepResult step = env->step(action, row);
      if (options.on_state) options.on_state(episode, unstacked_env(*env));
      episode_return += step.reward;
      ++length;
      if (step.terminated || step.truncated) break;
    }
    result.returns.push_back(episode_return);
    result.lengths.push_back(length);
  }
  result.summarise();
  return result;
}

}  // namespace rlx
