#include "algorithms/algorithm.h"

#include <filesystem>
#include <sstream>

#include "algorithms/model_from_config.h"
#include "algorithms/multi_agent_algorithm.h"
#include "algorithms/training_checkpoint.h"
#include "core/config_error.h"
#include "core/error_text.h"
#include "core/log.h"
#include "core/space_json.h"
#include "envs/plugin_loader.h"
#include "envs/experiment_envs.h"
#include "envs/registry.h"
#include "rollout/policy_factory.h"
#include "models/model_spec_json.h"
#include "models/rollout_policy.h"

namespace rlx {

WorkerSetup common_worker_setup(const Experiment& experiment) {
  const CommonConfig& c = experiment.config.common();
  WorkerSetup setup;
  setup.env_id = experiment.env;
  setup.env_config = experiment.env_config.dump();
  setup.num_envs = static_cast<int>(c.num_envs_per_worker);
  setup.fragment_length = static_cast<int>(c.rollout_fragment_length);
  setup.seed = static_cast<uint64_t>(c.seed);
  setup.frame_stack = static_cast<int>(c.frame_stack);
  setup.model = model_from_config(experiment, experiment_env_spec(experiment));
  setup.drop_nonfinite_episodes = c.drop_nonfinite_episodes;
  setup.weight_delay = static_cast<int>(c.worker_weight_delay);
  return setup;
}

void merge_columns(nlohmann::json& into, const nlohmann::json& from) {
  for (const auto& [key, value] : from.items()) {
    if (value.is_object() && into.contains(key) && into[key].is_object()) {
      merge_columns(into[key], value);
    } else {
      into[key] = value;
    }
  }
}

nlohmann::json Algorithm::model_json() const { return model_spec_to_json(worker_setup().model); }

void Algorithm::check_model_of(const Checkpoint& checkpoint) const { check_checkpoint_model(checkpoint, worker_setup().model); }

std::optional<std::string> Algorithm::non_finite_weights() const { return non_finite_weight(*current_weights()); }

void check_checkpoint_model(const Checkpoint& checkpoint, const ModelSpec& built) {
  const auto recorded = checkpoint.manifest.find("model");
  if (recorded == checkpoint.manifest.end()) return;
  ModelSpec model;
  try {
    model = model_spec_from_json(*recorded);
  } catch (const std::invalid_argument& error) {
    throw CheckpointRefused(checkpoint.path.string() + ": " + kCheckpointManifestName + ": " + error.what());
  }
  if (model != built) {
    throw CheckpointRefused(checkpoint.path.string() + ": its model " + recorded->dump() +
                            " differs from the one its config builds, " + model_spec_to_json(built).dump() +
                            " (a checkpoint of another rlx version? evaluate or resume it with that one)");
  }
}

void restore_learner_state(const Checkpoint& checkpoint, const std::string& file_name, const std::string& what,
                           const std::function<void(std::istream& file, const nlohmann::json& state)>& restore) {
  auto it = checkpoint.files.find(file_name);
  if (it == checkpoint.files.end()) {
    throw CheckpointRefused(checkpoint.path.string() + ": no " + file_name + " (not a checkpoint of " + what + "?)");
  }
  try {
    std::istringstream file(it->second);
    restore(file, checkpoint.manifest.at("algorithm_state"));
  } catch (const std::exception& e) {
    throw CheckpointRefused(checkpoint.path.string() + ": cannot restore " + what + ": " + error_text(e));
  }
}

void restore_replay_file(const Checkpoint& checkpoint, const std::string& file_name,
                         const std::function<void(const std::string& bytes)>& load) {
  const auto replay = checkpoint.files.find(file_name);
  if (replay == checkpoint.files.end()) return;
  try {
    load(replay->second);
  } catch (const std::invalid_argument& error) {
    throw CheckpointRefused(checkpoint.path.string() + ": cannot restore the replay buffer: " + error.what());
  }
}

nlohmann::json check_experiment_env(const Experiment& experiment) {
  for (const PluginRef& plugin : experiment.plugins) {
    if (!std::filesystem::is_regular_file(plugin.path)) {
      throw EnvPluginError(experiment.source + ": env plugin '" + plugin.path +
                           "': no such file (pass --env-plugin PATH to load it from elsewhere)");
    }
  }
  load_experiment_envs(experiment);
  if (is_multi_agent_experiment(experiment)) return check_multi_agent_experiment(experiment);
  if (!experiment.multi_agent.empty()) {
    throw ConfigError(experiment.source + ": experiment '" + experiment.name + "': policies, policy_mapping and "
                      "policies_to_train are for multi-agent envs; '" + experiment.env + "' has one agent");
  }
  const EnvSpec spec = experiment_env_spec(experiment);  // frame_stack suits the env (ConfigError)
  experiment_env_factory(experiment)();  // an instance must carry the registered spec (EnvContractError)
  model_from_config(experiment, spec);  // the algorithm suits the env's action space (ConfigError)
  return env_spec_to_json(spec);
}

std::unique_ptr<RolloutPolicy> weighted_evaluation_policy(const WorkerSetup& setup, const EnvSpec& spec,
                                                          const Weights& weights, bool deterministic, uint64_t seed) {
  WorkerSetup evaluation = setup;
  evaluation.seed = seed;
  evaluation.worker_index = 0;
  evaluation.deterministic = deterministic;
  std::unique_ptr<RolloutPolicy> policy = make_rollout_policy(evaluation, spec);
  apply_weights(*policy, weights);
  return policy;
}

}  // namespace rlx
