// MultiAgentAlgorithm: a run over a multi-agent env, one algorithm per policy (each its own model,
// settings, learner state and checkpoint files); each iteration trains the policies_to_train in
// turn on their own agents' fragments, while frozen policies only act.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "algorithms/algorithm.h"
#include "algorithms/multi_agent_sampler.h"
#include "algorithms/remote_sampler.h"
#include "algorithms/self_play_pool.h"
#include "rollout/policy_map.h"

namespace rlx {

// True when the experiment's env is a registered multi-agent env (its plugins loaded) and the
// experiment is not already one policy's share of such a run.
bool is_multi_agent_experiment(const Experiment& experiment);

// Checks a multi-agent experiment before anything starts: the policy mapping covers the env's
// agents, each policy's model suits its agents' spaces, and the run asks nothing not built for
// several agents yet. Throws ConfigError naming the env, agent, policy or key. Returns the env's
// spec as the checkpoint manifest records it.
nlohmann::json check_multi_agent_experiment(const Experiment& experiment);

// The experiment policy p is built and trained with: the policy's config, its agents' spec, no
// multi-agent fields.
Experiment policy_experiment(const Experiment& experiment, const PolicyMap& map, int policy);

class MultiAgentAlgorithm : public Algorithm {
 public:
  // Builds every policy's algorithm with make_policy_algorithm (make_algorithm or
  // make_native_algorithm). Throws as check_multi_agent_experiment and the factory do.
  MultiAgentAlgorithm(const Experiment& experiment, const DataParallelOptions& options,
                      const AlgorithmFactory& make_policy_algorithm);

  // Per policy: these two throw std::logic_error (make_local_sampler and publish_weights act per policy).
  WorkerSetup worker_setup() const override;
  std::shared_ptr<Weights> current_weights() const override;
  // Trains each policy to train in turn on a PolicySampler of `sampler` (a MultiAgentSampler),
  // the self-play opponent playing a snapshot from the pool;
  // env_steps counts what count_steps_by names. Columns: policy/NAME/learner/..., the sampler's
  // per-policy and per-agent returns, num_env_steps_sampled and num_agent_steps_sampled.
  IterationResult train_iteration(Sampler& sampler, int64_t timesteps_done) override;
  // Every policy's files as policy.NAME.FILE, and {"policies": {NAME: state}, step counts}.
  std::vector<CheckpointFile> checkpoint_files() const override;
  nlohmann::json checkpoint_state() const override;
  void restore(const Checkpoint& checkpoint) override;
  // Throws std::logic_error: a multi-agent run's policies act through policy_evaluation_policy.
  std::unique_ptr<RolloutPolicy> evaluation_policy(bool deterministic, uint64_t seed) const override;
  // A learner rank: select_policy names the policy whose learner carries out the next command.
  void follow(const LearnerCommand& command) override;
  // 0 when every policy's state is sound (nullopt otherwise): the failed iteration counts no steps.
  // A stop cuts it short in one policy's turn, whose update (PPO, APPO) is undone; a policy trained
  // earlier in the iteration keeps its update, as undoing it would take a copy of every learner
  // each iteration.
  std::optional<int64_t> steps_of_failed_iteration() const override;

  void publish_weights(Sampler& sampler) const override;
  // A worker's fragments are lanes ([T, 1]), one per agent of each env: the most credits a
  // trained policy's algorithm gives a worker, times the env's agents (measured: more only adds
  // stale lanes for PPO).
  int worker_credits(int64_t num_workers) const override;
  nlohmann::json model_json() const override;
  void check_model_of(const Checkpoint& checkpoint) const override;
  std::optional<std::string> non_finite_weights() const override;

  const PolicyMap& policy_map() const { return *map_; }
  const Experiment& experiment() const { return experiment_; }
  // Policy p's evaluation policy (its current weights; argmax / mean actions when deterministic; a
  // scripted policy's rule).
  std::unique_ptr<RolloutPolicy> policy_evaluation_policy(int policy, bool deterministic, uint64_t seed) const;
  // The sampler for this run (num_workers: 0): LocalMultiAgentSampler over the policies' setups.
  std::unique_ptr<MultiAgentSampler> make_local_sampler() const;
  // The sampler of a run with worker processes: a RemoteMultiAgentSampler of `options` (the
  // run's workers, endpoint, keys) with the setup and contracts of every policy filled in.
  std::unique_ptr<MultiAgentSampler> make_remote_sampler(RemoteSamplerOptions options) const;

 private:
  // The checkpoint as policy p's algorithm wrote it: its files and its share of the manifest.
  Checkpoint policy_checkpoint(const Checkpoint& checkpoint, int policy) const;
  // Self-play: the opponent takes a snapshot from the pool for this iteration.
  void start_self_play_iteration(MultiAgentSampler& sampler);
  // Self-play: the iteration's games scored against the snapshot played, a new snapshot when
  // due; returns the self_play columns.
  nlohmann::json finish_self_play_iteration(const std::vector<MultiAgentEpisode>& episodes);

  Experiment experiment_;
  std::unique_ptr<PolicyMap> map_;
  std::vector<std::unique_ptr<Algorithm>> policies_;  // null for a scripted policy
  std::vector<std::string> scripted_;                 // per policy: its rule, "" for one with a model
  bool count_agent_steps_ = false;
  int64_t env_steps_total_ = 0, agent_steps_total_ = 0;
  int64_t iterations_ = 0;
  std::unique_ptr<SelfPlayPool> pool_;  // with self_play
  int self_play_policy_ = -1, opponent_ = -1;
  size_t playing_ = 0;                  // the snapshot the opponent plays this iteration
  int following_ = -1;                  // a learner rank: the policy the next command is for (select_policy)
};

}  // namespace rlx
