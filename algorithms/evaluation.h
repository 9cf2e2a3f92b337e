// Evaluation of a saved policy: N episodes of its env, one after another, with the policy the
// checkpoint holds (sampling, or argmax / mean actions when deterministic). A recurrent policy
// steps its state with each action and starts every episode from zeros, as rlx::Policy's
// initial_state() and a trace's "step": 0 say (models/policy.h).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/checkpoint_dir.h"
#include "core/experiment.h"
#include "envs/env.h"

namespace rlx {

class Algorithm;
class RolloutPolicy;

// A checkpoint loaded back into its algorithm, ready to act.
struct RestoredAlgorithm {
  Checkpoint checkpoint;
  Experiment experiment;
  std::unique_ptr<Algorithm> algorithm;

  RestoredAlgorithm();
  RestoredAlgorithm(RestoredAlgorithm&&) noexcept;
  ~RestoredAlgorithm();
};

// Loads the checkpoint (checksums verified), its env plugins (pointed at env_plugins where they
// moved; a warning for each) and its algorithm with the saved state; throws CheckpointRefused for
// a damaged checkpoint, ConfigError for a plugin that cannot be found.
RestoredAlgorithm restore_algorithm(const std::filesystem::path& checkpoint,
                                    const std::vector<std::string>& env_plugins);

struct EvaluationOptions {
  std::filesystem::path checkpoint;
  int episodes = 10;
  bool deterministic = false;
  uint64_t seed = 0;                 // episode i resets with seed + i
  std::optional<std::string> env_id; // default: the checkpoint's env
  std::vector<std::string> env_plugins;  // --env-plugin: where the checkpoint's plugins are now (core/plugin_refs.h)
  // Called with the episode (0-based) and the env after its reset and after every step (e.g. to
  // film it: watch/episode_recorder.h), the raw env under any frame stacking; unset: nothing is called.
  std::function<void(int episode, const Env& env)> on_state;
  // Called before every step with the episode, its step, the raw observation the policy saw (its
  // floats and bytes, the action mask last: env.observation_layout()) and the action the env gets
  // (e.g. to trace them: `rlx evaluate --trace`); unset: nothing is called.
  std::function<void(int episode, int64_t step, const Env& env, const ObsRow& obs, const Action& action)> on_action;
  // A multi-agent checkpoint of a two-agent env: play its policy `policy` against `against`, a
  // scripted rule (rollout/scripted_policy.h) or another checkpoint's policy `against_policy`
  // (default: `policy`), the sides dealt at random each episode (multi_agent_evaluation.h).
  std::string policy, against, against_policy;
};

// Games of one policy against another, from the first one's side.
struct MatchRecord {
  std::string policy, against;
  int64_t wins = 0, draws = 0, losses = 0;
  int64_t games() const { return wins + draws + losses; }
  // The win rate and its 95% Wilson score interval.
  double win_rate() const;
  std::pair<double, double> win_rate_interval() const;
};

struct EvaluationResult {
  std::string algorithm;
  std::string env_id;
  std::vector<double> returns;
  std::vector<int64_t> lengths;
  double return_mean = 0, return_std = 0, return_min = 0, return_max = 0, len_mean = 0;
  // A multi-agent checkpoint's episodes (returns above summed over the agents): each agent's mean
  // return over the episodes it entered, and each policy's over the agents it drove.
  std::map<std::string, double> agent_return_means, policy_return_means;
  std::optional<MatchRecord> match;  // evaluations with `against`

  // Fills the means, std, min and max of `returns` and `lengths` (at least one episode).
  void summarise();
};

// Loads the checkpoint (checksums verified) and runs the episodes (a multi-agent checkpoint's:
// evaluate_multi_agent in algorithms/multi_agent_evaluation.h); throws CheckpointRefused for a
// damaged checkpoint, ConfigError for a plugin that cannot be found, std::invalid_argument when
// the env's spaces differ from the checkpoint's. Warns on stderr when a plugin's file differs
// from the one the checkpoint recorded.
EvaluationResult evaluate_checkpoint(const EvaluationOptions& options);

}  // namespace rlx
