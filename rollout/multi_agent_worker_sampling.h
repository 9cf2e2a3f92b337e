// MultiAgentWorkerSampling: a rollout worker's sampling of a multi-agent env. It steps
// num_envs envs with one acting policy per policy of the run's map (a model policy that takes
// the learner's weights, or a scripted player), and sends the lanes of the policies that train:
// [T, 1] fragments, each naming its policy and lane. Its episode reports give every agent's
// return and policy, and the env steps taken since the last report.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "rollout/multi_agent_collector.h"
#include "rollout/policy_map.h"
#include "rollout/weight_delay.h"
#include "rollout/worker_sampling.h"

namespace rlx {

class MultiAgentWorkerSampling final : public WorkerSampling {
 public:
  // Builds the map from setup.multi_agent (non-null), one acting policy per policy (policy p
  // samples from seed worker_seed() + 7919 * p), and setup.num_envs envs of setup.env_id. Throws
  // std::invalid_argument naming "worker setup: multi_agent" when that part does not fit the
  // env: its keys, its mapping, a policies list of another size than the map's, a model for a
  // scripted policy or none for one that is not, a model that does not fit its agents.
  explicit MultiAgentWorkerSampling(const WorkerSetup& setup);
  ~MultiAgentWorkerSampling() override;

  // env_id; num_envs: the lanes (envs x agents); spaces: policy 0's agents'.
  void fill_hello(Hello& hello) const override;
  // Weights naming policy p (Weights::policy_index) go to p's model, after p's weight delay;
  // rejected: weights naming no policy, one out of range, or a scripted one. Weights that name a
  // scripted rule instead (self-play's league) make a frozen model policy play that rule until
  // its next weights; rejected for a policy that trains or a rule that does not fit its agents.
  WeightsOutcome apply(std::shared_ptr<Weights> weights) override;
  // True once every policy with a model, frozen ones too, has weights.
  bool ready() const override;
  // The oldest full fragment of a trained policy (policy_index and lane set, K = 1); steps every
  // env until there is one.
  void next_fragment(SampleBatch& batch) override;
  // One report when episodes ended or env steps were taken since the last one (each report's
  // env_steps at most fragment_length x lanes; a long wait for a fragment adds more).
  std::vector<EpisodeStats> take_reports() override;
  // "ENV x K envs of N agents (L lanes)".
  std::string describe() const override;

  // The lanes a hello announces: envs x agents.
  int64_t lanes() const { return lanes_; }

 private:
  // Steps every env once: full fragments of the trained policies join the queue, ended episodes
  // the next report; first closes a report when this step would take it past report_bound_.
  void step();
  // The report of the episodes and env steps since the last one; starts the next.
  EpisodeStats close_report();
  // Policy p (frozen, with a model) plays `rule` until its next weights.
  WeightsOutcome play_scripted(int policy, const std::string& rule);

  std::string env_id_;
  int num_envs_ = 0;
  int num_agents_ = 0;
  int64_t lanes_ = 0;
  int64_t report_bound_ = 0;  // env steps one report may carry: fragment_length x envs
  // Declared before the collector, which borrows them.
  std::unique_ptr<PolicyMap> map_;
  std::vector<std::unique_ptr<RolloutPolicy>> policies_;  // by policy index
  std::vector<bool> has_model_;                           // false: a scripted player
  std::vector<WeightDelay> weight_delays_;
  std::vector<bool> have_weights_;
  std::vector<std::unique_ptr<RolloutPolicy>> league_;   // by policy index: the rule it plays now (null: its model)
  std::vector<uint64_t> seeds_;                          // by policy index: its actions' seed
  std::unique_ptr<MultiAgentCollector> collector_;
  std::deque<SampleBatch> ready_;               // full fragments not sent yet, oldest first
  std::vector<MultiAgentEpisode> finished_;     // since the last report
  int64_t env_steps_reported_ = 0;              // collector env steps in the reports so far
  std::vector<int64_t> agent_steps_reported_;   // per policy, likewise
  std::vector<EpisodeStats> closed_reports_;    // closed by step(), not taken yet
};

}  // namespace rlx
