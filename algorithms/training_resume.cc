#include "algorithms/training_resume.h"

#include <stdexcept>

#include "algorithms/training_checkpoint.h"
#include "core/config_error.h"
#include "core/config_schema.h"
#include "core/log.h"
#include "core/space_json.h"
#include "models/model_spec_json.h"

namespace rlx {

namespace {

// In the manifest's "counters", which a PBT exploit keeps as the receiving trial's own.
nlohmann::json counters_manifest(const TrainingCounters& counters, const SamplerStats& sampling) {
  return {{"training_iteration", counters.iteration},
          {"timesteps_total", counters.timesteps},
          {"episodes_total", counters.episodes},
          {"time_total_s", counters.time_s},
          {"attempt", counters.attempt},
          {"sampler", sampler_counts_json(sampling)}};
}

TrainingCounters counters_from_manifest(const nlohmann::json& counters) {
  TrainingCounters c;
  c.iteration = counters.at("training_iteration").get<int64_t>();
  c.timesteps = counters.at("timesteps_total").get<int64_t>();
  c.episodes = counters.at("episodes_total").get<int64_t>();
  c.time_s = counters.at("time_total_s").get<double>();
  c.attempt = counters.value("attempt", int64_t{1});  // checkpoints from before attempts were counted
  return c;
}

}  // namespace

nlohmann::json training_manifest(const Experiment& experiment, const nlohmann::json& env_spec, const Algorithm& algorithm,
                                 const TrainingCounters& counters, const SamplerStats& sampling,
                                 const EpisodeWindow& window, const nlohmann::json& sampler_state) {
  return {{"algorithm", algorithm_name(experiment.algorithm)},
          {"env_spec", env_spec},
          {"model", algorithm.model_json()},
          {"experiment", experiment_to_json(experiment)},
          {"counters", counters_manifest(counters, sampling)},
          {"episode_window", window.to_json()},
          {"algorithm_state", algorithm.checkpoint_state()},
          {"sampler_state", sampler_state}};
}

void check_resume_compatible(const Checkpoint& checkpoint, const Experiment& experiment) {
  const Experiment saved = experiment_from_json(checkpoint.manifest.at("experiment"),
                                                (checkpoint.path / kCheckpointManifestName).string());
  const auto refuse = [&](const std::string& key, const std::string& there, const std::string& here) {
    throw ConfigError("--resume " + checkpoint.path.string() + ": " + key + " is " + here + " here but " + there +
                      " in the checkpoint; the learner's shape must match to resume (start a new run to change it)");
  };
  if (saved.algorithm != experiment.algorithm) {
    refuse("algorithm", algorithm_name(saved.algorithm), algorithm_name(experiment.algorithm));
  }
  if (saved.env != experiment.env) refuse("env", saved.env, experiment.env);
  for (const char* key : {"hidden_sizes", "head_fcnet_hiddens", "activation", "vf_share_layers", "dueling", "frame_stack"}) {
    if (!find_key(key)->applies_to(experiment.algorithm)) continue;
    if (saved.config.get(key) != experiment.config.get(key)) {
      refuse(key, format_value(saved.config.get(key)), format_value(experiment.config.get(key)));
    }
  }
}

ResumePoint restore_training(const Checkpoint& checkpoint, const Experiment& experiment, Algorithm& algorithm,
                             const std::string& source) {
  check_resume_compatible(checkpoint, experiment);
  algorithm.check_model_of(checkpoint);
  algorithm.restore(checkpoint);
  if (const auto bad = algorithm.non_finite_weights()) {
    throw CheckpointRefused(checkpoint.path.string() + " holds non-finite weights (" + *bad +
                            "); resume from an earlier checkpoint");
  }
  ResumePoint point;
  const nlohmann::json& counters = checkpoint.manifest.at("counters");
  point.counters = counters_from_manifest(counters);
  if (const auto sampling = counters.find("sampler"); sampling != counters.end() && sampling->is_object()) {
    point.earlier_sampling = sampler_counts_from_json(*sampling);
  }
  // The episode window travels with the checkpoint, so the reward criterion and the metric
  // continue across resumes (a tuner's segments) instead of starting empty.
  if (const auto window = checkpoint.manifest.find("episode_window"); window != checkpoint.manifest.end()) {
    point.window = EpisodeWindow::from_json(*window, source);
  }
  return point;
}

void restore_sampler(const Checkpoint& checkpoint, const Experiment& experiment, Sampler& sampler) {
  const auto state = checkpoint.manifest.find("sampler_state");
  if (state == checkpoint.manifest.end() || state->is_null() || experiment.config.common().num_workers != 0) return;
  try {
    sampler.restore(*state);
  } catch (const std::invalid_argument& error) {
    logger().info("note: the envs start afresh ({})", error.what());
  }
}

nlohmann::json held_weights_json(const Checkpoint& checkpoint, nlohmann::json counters) {
  counters.erase("sampler");  // nothing was sampled: the last row's figures stand
  if (const auto from = checkpoint.manifest.find("exploited_from"); from != checkpoint.manifest.end()) {
    counters["exploited_from"] = {{"trial", from->value("trial", "")}, {"checkpoint", from->value("checkpoint", "")}};
  }
  return counters;
}

}  // namespace rlx
