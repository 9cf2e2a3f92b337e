// Algorithm: what PPO, APPO, DQN or SAC adds to the shared training loop (algorithms/trainer.h): the
// workers' setup, one training iteration over a sampler, and the state a checkpoint keeps.
#pragma once

#include <cstdint>
#include <functional>
#include <istream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "algorithms/data_parallel_options.h"
#include "algorithms/sampler.h"
#include "core/checkpoint_dir.h"
#include "core/env_spec.h"
#include "core/experiment.h"
#include "models/rollout_policy.h"
#include "rollout/worker_setup.h"
#include "transport/messages.h"

namespace rlx {

// What one iteration did.
struct IterationResult {
  int64_t env_steps = 0;      // transitions consumed this iteration
  nlohmann::json learner;     // the learner's metrics (losses, lr, ...)
  nlohmann::json columns = nlohmann::json::object();  // more of the results row (a multi-agent run's per policy and agent)
};

// Copies `from`'s entries into `into`, merging nested objects key by key (unlike a JSON merge
// patch, a null value is kept as a value).
void merge_columns(nlohmann::json& into, const nlohmann::json& from);

class Algorithm {
 public:
  virtual ~Algorithm() = default;

  // The setup every worker gets (env, fragment length, policy kind and network, seed).
  virtual WorkerSetup worker_setup() const = 0;
  // The weights workers should act with now (version = updates so far).
  virtual std::shared_ptr<Weights> current_weights() const = 0;
  // One training iteration: collect from the sampler, learn, publish the new weights.
  // timesteps_done counts env steps before this iteration.
  virtual IterationResult train_iteration(Sampler& sampler, int64_t timesteps_done) = 0;
  // The files a checkpoint holds (model, optimiser) and the JSON state beside them.
  virtual std::vector<CheckpointFile> checkpoint_files() const = 0;
  // Before checkpoint_files: writes the replay transitions taken in since the last checkpoint as
  // a segment in replay_dir (native/replay_segments.h) and returns the listing the checkpoint's
  // manifest keeps under "replay"; null for an algorithm without segmented replay.
  virtual nlohmann::json write_replay_segments(const std::filesystem::path& replay_dir) {
    (void)replay_dir;
    return nullptr;
  }
  virtual nlohmann::json checkpoint_state() const = 0;
  // Restores what checkpoint_files()/checkpoint_state() saved; throws CheckpointRefused on a
  // mismatch (e.g. another network shape).
  virtual void restore(const Checkpoint& checkpoint) = 0;
  // A policy for evaluation with the current weights (argmax / mean actions when deterministic).
  virtual std::unique_ptr<RolloutPolicy> evaluation_policy(bool deterministic, uint64_t seed) const = 0;
  // Learner ranks >= 1: carries out one command of the driver (data-parallel update, sync).
  virtual void follow(const LearnerCommand& command) = 0;
  // After train_iteration threw: the env steps the learner took in from that unfinished
  // iteration when its state is still sound (so a checkpoint of it, counting those steps, is
  // consistent), nullopt when the failure left it mid-update.
  virtual std::optional<int64_t> steps_of_failed_iteration() const = 0;
  // Fragments each of num_workers workers may have in flight or queued at the learner (its
  // credits): enough to keep sampling while the learner updates, few enough to bound staleness.
  virtual int worker_credits(int64_t num_workers) const {
    (void)num_workers;
    return kDefaultWorkerCredits;
  }

  static constexpr int kDefaultWorkerCredits = 2;

  // Gives the sampler the weights workers act with now (a multi-agent algorithm: each policy's).
  virtual void publish_weights(Sampler& sampler) const { sampler.publish(current_weights()); }
  // The checkpoint manifest's "model": the model spec as JSON ({"policies": {NAME: spec}} for a
  // multi-agent run).
  virtual nlohmann::json model_json() const;
  // Throws CheckpointRefused unless the model a checkpoint records (if any) is this algorithm's.
  virtual void check_model_of(const Checkpoint& checkpoint) const;
  // The first non-finite value of the weights workers get, named (non_finite_weight); nullopt
  // when all are finite.
  virtual std::optional<std::string> non_finite_weights() const;
};

// Calls restore with the bytes of the checkpoint's `file_name` and its "algorithm_state" JSON;
// any failure becomes a CheckpointRefused naming the checkpoint and `what` (e.g. "the PPO learner").
void restore_learner_state(const Checkpoint& checkpoint, const std::string& file_name, const std::string& what,
                           const std::function<void(std::istream& file, const nlohmann::json& state)>& restore);

// Calls load with the bytes of the checkpoint's replay file `file_name` when it has one (a
// checkpoint written without its replay has none: the replay then refills); a load's
// std::invalid_argument becomes a CheckpointRefused naming the checkpoint.
void restore_replay_file(const Checkpoint& checkpoint, const std::string& file_name,
                         const std::function<void(const std::string& bytes)>& load);

// Builds the algorithm of an experiment (make_algorithm in algorithms/make_algorithm.h, or the
// torch-free make_native_algorithm in algorithms/native_algorithms.h).
using AlgorithmFactory = std::function<std::unique_ptr<Algorithm>(const Experiment&, const DataParallelOptions&)>;

// Checks, before anything starts, that the experiment can run here: loads its plugins, resolves
// its env id (UnknownEnvError with a did-you-mean and the plugin hint), makes one instance
// (EnvContractError when its spec differs from the registered one) and checks that the env's
// spaces suit the algorithm (ConfigError naming both); a multi-agent env's experiment is checked
// by check_multi_agent_experiment. Returns the env's spec as JSON (what checkpoints record).
nlohmann::json check_experiment_env(const Experiment& experiment);

// A policy for evaluation: setup's policy (with this seed, worker 0, argmax / mean actions when
// deterministic) acting with `weights`.
std::unique_ptr<RolloutPolicy> weighted_evaluation_policy(const WorkerSetup& setup, const EnvSpec& spec,
                                                          const Weights& weights, bool deterministic, uint64_t seed);

// Throws CheckpointRefused unless the model a checkpoint's manifest records (its "model"; a
// checkpoint of an rlx before model specs has none and passes) is `built`, the model its
// config builds now.
void check_checkpoint_model(const Checkpoint& checkpoint, const ModelSpec& built);

// The WorkerSetup fields every algorithm shares (env, K, T, seed, the model spec of model_from_config).
WorkerSetup common_worker_setup(const Experiment& experiment);

}  // namespace rlx
