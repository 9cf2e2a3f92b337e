// What a training run's checkpoint holds besides the learner's files (its manifest), and
// resuming from it: the checks that it fits this run, then the learner's state, the counters,
// the episode window and (a synchronous run) the envs restored.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "algorithms/algorithm.h"
#include "algorithms/episode_window.h"
#include "algorithms/sampler.h"
#include "algorithms/training_counters.h"
#include "core/checkpoint_dir.h"
#include "core/env_spec.h"
#include "core/experiment.h"

namespace rlx {

// The manifest of a training run's checkpoint: algorithm, env_spec (check_experiment_env's), model,
// experiment, counters (with the attempt and `sampling`'s counts over every attempt so far),
// episode_window, algorithm_state and sampler_state (null when the checkpoint holds none).
nlohmann::json training_manifest(const Experiment& experiment, const nlohmann::json& env_spec, const Algorithm& algorithm,
                                 const TrainingCounters& counters, const SamplerStats& sampling,
                                 const EpisodeWindow& window, const nlohmann::json& sampler_state);

// ConfigError naming the first setting that shapes the learner (algorithm, env, network) and
// differs between the checkpoint and this run: its weights cannot be loaded into another shape.
void check_resume_compatible(const Checkpoint& checkpoint, const Experiment& experiment);

// Where a resumed run continues from.
struct ResumePoint {
  TrainingCounters counters;  // the checkpoint's: its attempt is the one that wrote it
  SamplerStats earlier_sampling;  // the sampler's counts over the attempts up to the checkpoint
  EpisodeWindow window;
};

// Restores `checkpoint` into `algorithm` once it fits this run (check_resume_compatible, then
// check_checkpoint_model), and returns its counters and episode window. CheckpointRefused for
// non-finite weights, or (naming `source`, the --resume path) an episode window that does not fit.
ResumePoint restore_training(const Checkpoint& checkpoint, const Experiment& experiment, Algorithm& algorithm,
                             const std::string& source);

// A synchronous run (num_workers: 0) continues its envs, observations and action sampling
// exactly where the checkpoint left them, when the checkpoint holds them for the same setup;
// otherwise the envs start afresh (with a note when the state does not fit).
void restore_sampler(const Checkpoint& checkpoint, const Experiment& experiment, Sampler& sampler);

// result.json's account of a resumed run that trains nothing: `counters` (counters_json)
// without the sampler's figures, and exploited_from when a PBT exploit brought the weights.
nlohmann::json held_weights_json(const Checkpoint& checkpoint, nlohmann::json counters);

}  // namespace rlx
